"""Typed access to a parsed config.json: every getter checks the type it returns and errors name
the file and the key (a nested text_config key as `text_config.<key>`)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Optional

from ..errors import ReaderError


def read_json(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ReaderError(f"cannot read the file: {err}.", file=str(path)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ReaderError(f"not valid JSON: {err.msg}.", file=str(path), line=err.lineno) from None
    if not isinstance(data, dict):
        raise ReaderError("expected a JSON object at the top level.", file=str(path))
    return data


class Fields:
    """A config dict plus the defaults of its family and the family's other names for keys
    (GPT-2 writes n_embd for hidden_size, as transformers' attribute_map says)."""

    def __init__(self, data: Mapping[str, Any], file: str, prefix: str, defaults: Mapping[str, Any],
                 aliases: Optional[Mapping[str, str]] = None, layer_lists: frozenset[str] = frozenset()):
        self.data, self.file, self.prefix, self.defaults = data, file, prefix, defaults
        self.aliases = aliases or {}
        # keys the family may give as one value per layer (a list vLLM indexes by layer): read as the value
        # every layer shares, refused where layers differ
        self.layer_lists = layer_lists
        self.defaulted: list[str] = []

    def _name(self, key: str) -> str:
        """The key as the file writes it."""
        alias = self.aliases.get(key)
        return alias if alias is not None and self.data.get(key) is None else key

    def has(self, key: str) -> bool:
        return self.data.get(self._name(key)) is not None

    def raw(self, key: str) -> Any:
        name = self._name(key)
        if self.data.get(name) is not None:
            value = self.data[name]
            if name in self.layer_lists and isinstance(value, list):
                return self._shared_by_every_layer(name, value)
            return value
        if key in self.defaults:
            self.defaulted.append(key)
            return self.defaults[key]
        return None

    def _shared_by_every_layer(self, name: str, values: list) -> Any:
        if not values:
            raise self.fail(name, "expected one value per layer, got an empty list.")
        if any(v != values[0] for v in values):
            raise self.fail(name, f"the layers differ ({sorted(set(map(repr, values)))}): vllm-reader models one "
                                  "value shared by every layer.")
        return values[0]

    def fail(self, key: str, message: str) -> ReaderError:
        return ReaderError(message, file=self.file, key=self.prefix + self._name(key))

    def int(self, key: str, *, required: bool = False, positive: bool = True) -> Optional[int]:
        value = self.raw(key)
        if value is None:
            if required:
                raise self.fail(key, "this required key is missing (or null).")
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise self.fail(key, f"expected a whole number, got {value!r}.")
        if positive and value <= 0:
            raise self.fail(key, f"expected a number above 0, got {value!r}.")
        return int(value)

    def number(self, key: str) -> Optional[float]:
        """A positive number, whole or not (a RoPE factor)."""
        value = self.raw(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected a number, got {value!r}.")
        if value <= 0:
            raise self.fail(key, f"expected a number above 0, got {value!r}.")
        return float(value)

    def req(self, key: str) -> int:
        value = self.int(key, required=True)
        assert value is not None
        return value

    def bool(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {value!r}.")
        return value

    def str(self, key: str) -> Optional[str]:
        value = self.raw(key)
        if value is not None and not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {value!r}.")
        return value

    def list(self, key: str) -> Optional[list]:
        value = self.raw(key)
        if value is not None and not isinstance(value, list):
            raise self.fail(key, f"expected a list, got {value!r}.")
        return value
