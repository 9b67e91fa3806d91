"""Value constraints of one vLLM release: the bounds vLLM enforces on an option's value, and how it parses
human-readable integers.

Both are data in the release's flag table (rules/flags/v<X.Y.Z>.json, written by tools/import_flags.py from
the release's source): an option's `bounds` are pydantic `Field(ge/gt/le/lt)` limits on the config class it
fills, or the tests of a validator that raises; `parsers.human_int` is how `human_readable_int` reads `32k`.
A value outside its bounds is kept (the loader never guesses) and marked, so `check` reports it with vLLM's
own message and no later stage derives anything from it.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from .model import BoundViolation

_OP_WORDS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<", "ne": "!=", "eq": "=="}
# pydantic's wording for each limit (what vLLM's ValidationError prints)
_PYDANTIC = {"ge": "greater than or equal to", "gt": "greater than", "le": "less than or equal to",
             "lt": "less than"}
_PYDANTIC_TYPE = {"ge": "greater_than_equal", "gt": "greater_than", "le": "less_than_equal", "lt": "less_than"}
# Before a release's parser is known (tables without `parsers`), the common form of vLLM's human_readable_int.
_DEFAULT_HUMAN_INT = {"pattern": r"(\d+(?:\.\d+)?)([kKmMgGtT])",
                      "decimal": {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12},
                      "binary": {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}, "binary_refuses_decimals": True}


def parse_human_int(text: str, rules: Optional[dict[str, Any]] = None) -> int:
    """`32k` -> 32000, `1K` -> 1024, as the release's human_readable_int reads it; ValueError when it refuses."""
    rules = rules or _DEFAULT_HUMAN_INT
    text = text.strip()
    match = re.fullmatch(rules["pattern"], text) if rules.get("pattern") else None
    if match:
        number, suffix = match.groups()
        if suffix in rules["decimal"]:
            return int(float(number) * rules["decimal"][suffix])
        if suffix in rules["binary"]:
            if rules.get("binary_refuses_decimals", True):
                if not number.isdigit():
                    raise ValueError(f"decimals are not allowed with binary suffixes like {suffix}; "
                                     f"did you mean {number}{suffix.lower()}?")
                return int(number) * rules["binary"][suffix]
            return int(float(number) * rules["binary"][suffix])
    return int(text)


def holds(op: str, value: float, limit: float) -> bool:
    return {"ge": value >= limit, "gt": value > limit, "le": value <= limit, "lt": value < limit,
            "ne": value != limit, "eq": value == limit}[op]


def violated_bound(spec: dict[str, Any], value: Any, name: Optional[str] = None) -> Optional[BoundViolation]:
    """The first of the option's bounds that `value` breaks, or None (None and non-numbers are not bounded here)."""
    if not _is_number(value):
        return None
    if value == -1 and spec.get("type") == "human_int_or_auto":
        return None  # 'auto': vLLM replaces it before any validator sees it
    for bound in spec.get("bounds", []):
        if not holds(bound["op"], value, bound["value"]):
            return _violation(bound, name or spec["dest"], value)
    return None


def violated_key_bounds(spec: dict[str, Any], value: Any) -> Optional[BoundViolation]:
    """For a JSON option (`--speculative-config`): the first key whose number breaks its config class's bound."""
    table = spec.get("key_bounds")
    if not table or not isinstance(value, dict):
        return None
    for key, item in value.items():
        if not _is_number(item):
            continue
        for bound in table["keys"].get(str(key), []):
            if not holds(bound["op"], item, bound["value"]):
                return _violation(bound, f"{spec['dest']}.{key}", item, field=str(key))
    return None


def _violation(bound: dict[str, Any], name: str, value: Any, field: Optional[str] = None) -> BoundViolation:
    limit = _number_text(bound["value"])
    field = field or name
    if bound["kind"] == "field":
        vllm = (f"1 validation error for {bound['config']}: {field}: Input should be {_PYDANTIC[bound['op']]} "
                f"{limit} [type={_PYDANTIC_TYPE[bound['op']]}, input_value={_number_text(value)}]")
    else:
        vllm = _fill(bound.get("message") or "", field, value) or f"{bound.get('error') or 'ValueError'}"
    return BoundViolation(name=name, value=value, requirement=f"{_OP_WORDS[bound['op']]} {limit}",
                          vllm_message=vllm, source=bound["src"])


def _fill(message: str, field: str, value: Any) -> str:
    """vLLM's validator message with the user's value where it prints the field's own value (and its type)."""
    message = re.sub(r"\{type\((?:self\.)?" + re.escape(field) + r"\)\.__name__\}", type(value).__name__, message)
    return message.replace("{" + field + "}", _number_text(value))


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
