"""Dotted sub-keys of JSON options (`--compilation-config.level 3`, `-cc.pass_config.x=true`, `--x.list+ a,b`).

vLLM's FlexibleArgumentParser (v0.9.2 on) takes every `--name.key value` out of the argument list,
merges the ones spelled with the same `--name` into a single mapping (later keys win; `key+` lists are
concatenated), and appends each merged mapping at the END as `--name '<json>'`, in the order the names
first appeared. argparse keeps the last value of an option, so merged sub-keys replace a whole JSON
value given for the same option anywhere on the line, and two spellings of one option (`--compilation-config.x`
and `-cc.y`) replace each other: with `--compilation-config '{"level": 3}' --compilation-config.cudagraph_capture_sizes
[1,2]` vLLM gets only the capture sizes. (Checked against vLLM 0.32.0's own parser:
tests/live/test_live_option_syntax.py.) Before v0.9.2 the parser has no such step and argparse stops with
'unrecognized arguments'. From v0.32.0 a value that is not JSON is tried as a human-readable integer
(`80g`) before it is kept as text.

Sources: vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args @ v0.32.0 and @ v0.18.0 (the
dict_args loop, appended after the other arguments); vllm/utils.py FlexibleArgumentParser.parse_args @
v0.8.5 (no dotted handling).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..versions import VersionTuple
from .tokens import Token

DOTTED_SINCE: VersionTuple = (0, 9, 2)
_HUMAN_INT_SINCE: VersionTuple = (0, 32, 0)


@dataclass
class DottedOption:
    """The merged sub-keys given under one spelling of an option, and the first token that gave one."""

    name: str  # the spelling's name part, as vLLM groups them: "--compilation-config", "-cc", "-O"
    first: Token
    canonical: str
    spec: dict[str, Any]
    in_version: bool
    ranges: Optional[str]
    value: dict[str, Any] = field(default_factory=dict)
    spellings: list[str] = field(default_factory=list)
    overwritten: list[str] = field(default_factory=list)


class DottedKeys:
    """Collects dotted sub-keys in the order given; `merged()` yields them as vLLM appends them."""

    def __init__(self, version: VersionTuple, human_int: Callable[[str], int]) -> None:
        self.version = version
        self.human_int = human_int
        self.by_name: dict[str, DottedOption] = {}

    def add(self, name: str, tok: Token, canonical: str, spec: dict[str, Any], subkey: str, text: str,
            in_version: bool, ranges: Optional[str]) -> None:
        entry = self.by_name.setdefault(name, DottedOption(name, tok, canonical, spec, in_version, ranges))
        entry.spellings.append(tok.spelling or tok.text.split("=", 1)[0])
        append = subkey.endswith("+")
        path = subkey.rstrip("+").split(".")
        # vLLM passes `key+` items on as strings; its pydantic configs then type them, as _json_or_text does here.
        value: Any = [_json_or_text(part) for part in text.split(",")] if append else self._value(text)
        node = entry.value
        for part in path[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        last = path[-1]
        if append and isinstance(node.get(last), list):
            node[last] = node[last] + value
        else:
            if last in node:
                entry.overwritten.append(subkey.rstrip("+"))
            node[last] = value

    def merged(self) -> list[DottedOption]:
        """In the order vLLM appends them: by the first appearance of each name."""
        return list(self.by_name.values())

    def _value(self, text: str) -> Any:
        value = _json_or_text(text)
        if value is text and self.version >= _HUMAN_INT_SINCE:
            try:
                return self.human_int(text)
            except ValueError:
                pass
        return value


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
