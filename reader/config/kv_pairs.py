"""The `KEY=VALUE,KEY=VALUE` form of mapping-valued options (`--limit-mm-per-prompt image=5,video=1`).

Which releases read it, and for which options:
- v0.6.3 to v0.8.0: `--limit-mm-per-prompt` is typed `nullable_kvs` (the flag tables call it `kv_pairs`):
  this form only. Source: vllm/engine/arg_utils.py nullable_kvs @ v0.6.3.
- v0.8.5 to v0.9.2: every option generated from a config dataclass field typed `dict` parses JSON, and a
  value that is not `{...}` falls back to this form (deprecated, with a warning in vLLM's log). Options
  typed as a config dataclass, or `dict | str` / `dict | class`, have their own parser and no fallback.
  Source: vllm/engine/arg_utils.py optional_type @ v0.8.5 and parse_type @ v0.9.x.
- v0.10.0 on: removed (vllm-project/vllm#20969, "[Deprecation] Remove nullable_kvs"); JSON only.

Keys are lower-cased and values must be integers, as vLLM parses them.
"""
from __future__ import annotations

import re
from typing import Any

from ..versions import VersionTuple

FALLBACK_SINCE: VersionTuple = (0, 8, 5)
REMOVED_IN: VersionTuple = (0, 10, 0)
# Options whose value is a config dataclass or a dict-or-something union: their own parser, no fallback.
_OWN_PARSER = {"compilation_config", "kv_transfer_config", "kv_events_config", "override_pooler_config"}


def is_kv_form(text: str) -> bool:
    return not re.match(r"(?s)^\s*{.*}\s*$", text) and "=" in text


def falls_back_to_kv(spec: dict[str, Any], version: VersionTuple) -> bool:
    """Does this release read a non-JSON value of this JSON option as KEY=VALUE pairs?"""
    return (FALLBACK_SINCE <= version < REMOVED_IN and spec.get("type") == "json" and "field" in spec
            and spec.get("dest") not in _OWN_PARSER)


def parse_kv_pairs(text: str) -> dict[str, int]:
    """`image=5,video=1` -> {'image': 5, 'video': 1}; ValueError with vLLM's wording otherwise."""
    out: dict[str, int] = {}
    for item in text.split(","):
        parts = [part.lower().strip() for part in item.split("=")]
        if len(parts) != 2:
            raise ValueError("Each item should be in the form KEY=VALUE")
        key, value = parts
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"Failed to parse value of item {key}={value}") from None
        if key in out and out[key] != number:
            raise ValueError(f"Conflicting values specified for key: {key}")
        out[key] = number
    return out
