"""`vllm serve --config` files: a mapping whose keys are vLLM options, each key a flag."""
from __future__ import annotations

from typing import Any, Optional

from ..flagtable import history_prefix_matches, option_history
from ..invocation import ConfigEntry, Invocation
from ..model import SourceLoc
from ..yamlsafe import YamlDoc


def is_vllm_config(data: Any) -> bool:
    """A mapping whose keys are mostly vLLM options (of any release): a `vllm serve --config` file. Chart values
    (`enabled:`, `resources:`, `storage:`) are not, even when one of their keys (`model:`) is an option name."""
    if not isinstance(data, dict) or not data:
        return False
    known = sum(1 for key in data if _names_an_option(str(key)))
    return known >= 1 and known * 2 >= len(data)


def _names_an_option(key: str) -> bool:
    option = "--" + key.replace("_", "-")
    return option_history(option) is not None or len({h.canonical for h in history_prefix_matches(option)}) == 1


def config_entries(doc: YamlDoc, file: Optional[str]) -> Invocation:
    """A `vllm serve --config` file: every top-level key is a flag name."""
    inv = Invocation(form="vllm-config-yaml", label="config file", line=1)
    for key, value in doc.data.items():
        inv.entries.append(ConfigEntry(str(key), value, SourceLoc(file=file, line=doc.line((str(key),)))))
    return inv
