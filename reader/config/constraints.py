"""Value constraints of one vLLM release: the bounds vLLM enforces on an option's value, and how it parses
human-readable integers.

Both are data in the release's flag table (rules/flags/v<X.Y.Z>.json, written by tools/import_flags.py from
the release's source): an option's `bounds` are pydantic `Field(ge/gt/le/lt)` limits on the config class it
fills, or the tests of a validator that raises; `parsers.human_int` is how `human_readable_int` reads `32k`.
A value outside its bounds is kept (the loader never guesses) and marked, so `check` reports it with vLLM's
own message and no later stage derives anything from it.
"""
from __future__ import annotations

import json
import re
from typing import Any, Optional

from .model import BoundViolation, KeyViolation

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


# ---- the keys of JSON options --------------------------------------------------------------------

_BOOL_TEXT = {"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"}
_KIND_WORDS = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false", "none": "null",
               "dict": "a JSON object", "list": "a list", "config": "a JSON object"}
# pydantic's error for each kind (what vLLM prints when it refuses the value)
_PYDANTIC_KIND = {"int": "Input should be a valid integer", "float": "Input should be a valid number",
                  "str": "Input should be a valid string", "bool": "Input should be a valid boolean",
                  "dict": "Input should be a valid dictionary", "list": "Input should be a valid list",
                  "config": "Input should be a dictionary or an instance of {cls}"}


def violated_key_type(spec: dict[str, Any], value: Any) -> Optional[KeyViolation]:
    """For a JSON option whose value builds a config class (rules/flags `key_types`, read from the release's source):
    the first key the class does not take, or whose value its type refuses (pydantic's lax rules); None if all fit."""
    table = spec.get("key_types")
    if not table or not isinstance(value, dict):
        return None
    return _check_keys(table, table["config"], value, spec["dest"], spec)


def _check_keys(table: dict[str, Any], cls: str, value: dict, path: str,
                spec: dict[str, Any]) -> Optional[KeyViolation]:
    fields = table["classes"].get(cls, {})
    for key, item in value.items():
        name = f"{path}.{key}"
        if key not in fields:
            return KeyViolation(name=name, value=item, requirement="a key it takes", stage=table["stage"],
                                config=cls, known=sorted(fields),
                                vllm_message=f"1 validation error for {cls}: {key}: Unexpected keyword argument")
        wrong = _type_problem(fields[key], item)
        if wrong is not None:
            kind, cls_name = wrong
            return KeyViolation(name=name, value=item, requirement=_KIND_WORDS.get(kind, kind), stage=table["stage"],
                                config=cls, vllm_message=f"1 validation error for {cls}: {key}: "
                                + _PYDANTIC_KIND.get(kind, f"Input should be {kind}").format(cls=cls_name))
        nested = _nested_class(fields[key], item)
        if nested is not None:
            inner = _check_keys(table, nested, item, name, spec)
            if inner is not None:
                return inner
    return None


def _type_problem(desc: dict[str, Any], value: Any) -> Optional[tuple[str, str]]:
    """(what was expected, class) when pydantic would refuse `value` for this field, else None."""
    kind = desc.get("t")
    if kind == "union":
        problems = [_type_problem(d, value) for d in desc["of"]]
        if any(p is None for p in problems):
            return None
        return next((p for p in problems if p[0] != "none"), problems[0])
    if kind == "any" or _fits(desc, value):
        return None
    if kind == "literal":
        return "one of " + ", ".join(json.dumps(v) for v in desc["values"]), ""
    return kind, desc.get("class", "")


def _fits(desc: dict[str, Any], value: Any) -> bool:
    kind = desc["t"]
    if kind == "none":
        return value is None
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool) or value in (0, 1) or (isinstance(value, str) and value.lower() in _BOOL_TEXT)
    if kind == "int":
        if isinstance(value, bool) or isinstance(value, int):
            return True
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value) is not None
    if kind == "float":
        if isinstance(value, (int, float)):
            return True
        return isinstance(value, str) and re.fullmatch(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*", value) is not None
    if kind in ("dict", "config"):
        return isinstance(value, dict)
    if kind == "list":
        return isinstance(value, list) and all(_type_problem(desc["item"], v) is None for v in value)
    if kind == "literal":
        return any(value == v and type(value) is type(v) for v in desc["values"])
    return True


def _nested_class(desc: dict[str, Any], value: Any) -> Optional[str]:
    if not isinstance(value, dict):
        return None
    if desc.get("t") == "config":
        return desc["class"]
    for part in desc.get("of", []):
        if part.get("t") == "config":
            return part["class"]
    return None


def key_error_sentence(wrong: KeyViolation, option: str, version: str) -> str:
    """One sentence for a JSON key vLLM refuses: which key, what it needs, and when vLLM stops."""
    when = "while it reads the option" if wrong.stage == "parse" else "when it builds its engine config"
    key = wrong.name.split(".", 1)[1]
    if wrong.requirement == "a key it takes":
        from ..errors import did_you_mean
        import difflib

        close = difflib.get_close_matches(key.rsplit(".", 1)[-1], wrong.known, n=3, cutoff=0.6)
        return (f"{option} has no key '{key}' in vLLM {version} ({wrong.config} refuses unknown keys {when})."
                + did_you_mean(close))
    return (f"{option} sets '{key}' to {json.dumps(wrong.value)}, which is not {wrong.requirement}: vLLM {version} "
            f"refuses it {when} ({wrong.vllm_message}).")
