"""Rule conditions: a small declarative language, compiled once and evaluated without eval/exec.

A condition is one of

    {all: [COND, ...]}          every one holds
    {any: [COND, ...]}          at least one holds
    {not: COND}                 the condition does not hold
    {version: "0.6.3..0.10.0"}  the vLLM version is in the range (or a list of ranges)
    {fact: KEY, OP: VALUE}      a comparison of one fact (see reader/config/facts.py) with VALUE

OP is one of eq, ne, lt, le, gt, ge, in, not_in, is_set, is_unset, divides, not_divisible_by,
contains, matches, any_matches. VALUE is a literal, `{fact: KEY}` (another fact), or `{mul: [V, V, ...]}` /
`{add: [V, V, ...]}` over such values. `matches` takes a regular expression (at most 200
characters) that must match the whole text (re.fullmatch), tried on at most 1000 characters;
`any_matches` holds when one element of a list fact matches so (a text fact: when it matches).

Evaluation is three-valued. A comparison whose fact is missing (the key is absent, e.g. the model
is not in the catalog) is *unknown*, not false: `all` is false if any part is false, else unknown
if any part is unknown; `any` is true if any part is true, else unknown if any part is unknown;
`not` keeps unknown. A rule whose condition ends unknown does not fire, and the facts that were
missing are recorded so `check --verbose` can say which rules were skipped and why.
`is_set`/`is_unset` are never unknown: a missing fact, or one whose value is None, is unset.

Facts that exist only when something is present (`given.*`, `absent.*`, `env.*`, `spec.*`, the
keys of JSON flags, ...; PRESENCE_PREFIXES) are never unknown either: their absence is a fact (the
user did not set the flag), so a comparison reads them as None, and an ordering or divisibility test
on None is false.
"""
from __future__ import annotations

import re
from typing import Any, Optional, Union

from ..versions import VersionRange, VersionTuple

COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "is_set", "is_unset", "divides",
               "not_divisible_by", "contains", "matches", "any_matches")
ARITHMETIC = ("mul", "add")
MAX_PATTERN = 200
MAX_SUBJECT = 1000
_MISSING = object()
PRESENCE_PREFIXES = ("given.", "absent.", "flag_versions.", "invalid_choice.", "option.", "spelling.",
                     "deprecated.", "spec.", "compilation.", "json.", "given_max.", "env.", "origin.", "out_of_bounds.",
                     "bound_name.", "bound_value.", "bound_message.", "bound_source.", "key_error.", "key_error_name.",
                     "key_error_value.", "key_error_message.", "key_error_config.", "refused_syntax.",
                     "refused_written.", "refused_removed_in.", "refused_instead.", "unparsed_json.")
_FACT_KEY = re.compile(r"^[A-Za-z0-9_.\-{}*]+$")


class ConditionError(ValueError):
    """A condition that does not follow the language; `path` says where inside the rule."""

    def __init__(self, message: str, path: str = "when") -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


# ---- compiled form -------------------------------------------------------------------------------

class _Node:
    """Compiled nodes: plain slotted classes (no dataclass code generation at import: `check` starts fast)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(repr(getattr(self, k)) for k in self.__slots__)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self.__slots__)})"


class FactRef(_Node):
    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key


class Arith(_Node):
    __slots__ = ("op", "items")

    def __init__(self, op: str, items: tuple) -> None:
        self.op, self.items = op, items


Operand = Union[FactRef, Arith, Any]


class Compare(_Node):
    __slots__ = ("key", "op", "value", "pattern")

    def __init__(self, key: str, op: str, value: Operand = None, pattern: Optional[re.Pattern] = None) -> None:
        self.key, self.op, self.value, self.pattern = key, op, value, pattern


class AllOf(_Node):
    __slots__ = ("items",)

    def __init__(self, items: tuple) -> None:
        self.items = items


class AnyOf(_Node):
    __slots__ = ("items",)

    def __init__(self, items: tuple) -> None:
        self.items = items


class NotOf(_Node):
    __slots__ = ("item",)

    def __init__(self, item: "Condition") -> None:
        self.item = item


class InVersions(_Node):
    __slots__ = ("ranges",)

    def __init__(self, ranges: tuple) -> None:
        self.ranges = ranges


Condition = Union[Compare, AllOf, AnyOf, NotOf, InVersions]


# ---- compiling ------------------------------------------------------------------------------

def compile_condition(node: Any, path: str = "when") -> Condition:
    """YAML data -> compiled condition; raises ConditionError naming the place and the problem."""
    if not isinstance(node, dict):
        raise ConditionError(f"a condition must be a mapping, not {type(node).__name__} ({node!r})", path)
    keys = set(node)
    for combinator in ("all", "any"):
        if combinator in keys:
            if keys != {combinator}:
                raise ConditionError(f"'{combinator}' must stand alone, found also {sorted(keys - {combinator})}", path)
            items = node[combinator]
            if not isinstance(items, list) or not items:
                raise ConditionError(f"'{combinator}' takes a non-empty list of conditions", path)
            compiled = tuple(compile_condition(item, f"{path}.{combinator}[{i}]") for i, item in enumerate(items))
            return AllOf(compiled) if combinator == "all" else AnyOf(compiled)
    if "not" in keys:
        if keys != {"not"}:
            raise ConditionError(f"'not' must stand alone, found also {sorted(keys - {'not'})}", path)
        return NotOf(compile_condition(node["not"], f"{path}.not"))
    if "version" in keys:
        if keys != {"version"}:
            raise ConditionError(f"'version' must stand alone, found also {sorted(keys - {'version'})}", path)
        return InVersions(parse_ranges(node["version"], f"{path}.version"))
    if "fact" not in keys:
        raise ConditionError(f"unknown condition {sorted(keys)}: expected all, any, not, version, or fact + one of "
                             f"{', '.join(COMPARISONS)}", path)
    key = node["fact"]
    if not isinstance(key, str) or not _FACT_KEY.match(key):
        raise ConditionError(f"'fact' must be a fact key like 'max_num_seqs' or 'model.num_attention_heads', "
                             f"not {key!r}", path)
    ops = keys - {"fact"}
    unknown = sorted(op for op in ops if op not in COMPARISONS)
    if unknown:
        raise ConditionError(f"unknown operator {unknown[0]!r} for fact '{key}'; operators: {', '.join(COMPARISONS)}",
                             path)
    if len(ops) != 1:
        raise ConditionError(f"a comparison takes exactly one operator, found {sorted(ops) or 'none'} for fact '{key}'",
                             path)
    op = ops.pop()
    raw = node[op]
    if op in ("is_set", "is_unset"):
        if raw is not True:
            raise ConditionError(f"'{op}' takes the value true", path)
        return Compare(key, op)
    if op in ("matches", "any_matches"):
        if not isinstance(raw, str) or not raw:
            raise ConditionError(f"'{op}' takes a regular expression string", path)
        if len(raw) > MAX_PATTERN:
            raise ConditionError(f"the pattern is longer than {MAX_PATTERN} characters", path)
        try:
            pattern = re.compile(raw)
        except re.error as err:
            raise ConditionError(f"bad regular expression {raw!r}: {err}", path) from None
        return Compare(key, op, raw, pattern)
    value = _operand(raw, f"{path}.{op}")
    if op in ("in", "not_in") and not isinstance(value, (tuple, FactRef)):
        raise ConditionError(f"'{op}' takes a list (or a fact holding one)", path)
    return Compare(key, op, value)


def _operand(raw: Any, path: str) -> Operand:
    if isinstance(raw, dict):
        keys = set(raw)
        if keys == {"fact"}:
            if not isinstance(raw["fact"], str) or not _FACT_KEY.match(raw["fact"]):
                raise ConditionError(f"bad fact key {raw['fact']!r}", path)
            return FactRef(raw["fact"])
        if len(keys) == 1 and next(iter(keys)) in ARITHMETIC:
            op = next(iter(keys))
            items = raw[op]
            if not isinstance(items, list) or len(items) < 2:
                raise ConditionError(f"'{op}' takes a list of at least two values", path)
            return Arith(op, tuple(_operand(item, f"{path}.{op}[{i}]") for i, item in enumerate(items)))
        raise ConditionError(f"a value may be a literal, {{fact: KEY}}, {{mul: [...]}} or {{add: [...]}}, "
                             f"not {raw!r}", path)
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, (dict, list)):
                raise ConditionError("a list value may hold only literals", path)
        return tuple(raw)
    return raw


def parse_ranges(raw: Any, path: str = "versions") -> tuple[VersionRange, ...]:
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise ConditionError("an empty list of version ranges", path)
    out = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise ConditionError(f"a version range is a string like '0.6.3..0.10.0', '0.19.0..' or '..0.8.5', "
                                 f"not {item!r}", path)
        try:
            rng = VersionRange.parse(item)
        except ValueError:
            raise ConditionError(f"bad version range {item!r} (expected 'A..B', 'A..', '..B' or 'A')", path) from None
        if rng.low and rng.high and rng.low > rng.high:
            raise ConditionError(f"version range {item!r} ends before it starts", path)
        out.append(rng)
    return tuple(out)


# ---- evaluating -----------------------------------------------------------------------------

class Evaluation:
    """Facts read while evaluating, and the ones that were missing."""

    __slots__ = ("used", "missing")

    def __init__(self) -> None:
        self.used: dict[str, Any] = {}
        self.missing: set[str] = set()


def evaluate(cond: Condition, facts: dict[str, Any], version: VersionTuple, ev: Evaluation) -> Optional[bool]:
    """True / False / None (unknown: a fact it needs is missing)."""
    if isinstance(cond, Compare):
        return _compare(cond, facts, ev)
    if isinstance(cond, (AllOf, AnyOf)):
        settles = isinstance(cond, AnyOf)  # one false part settles `all`, one true part settles `any`
        result: Optional[bool] = not settles
        for item in cond.items:
            r = evaluate(item, facts, version, ev)
            if r is settles:
                return settles
            if r is None:
                result = None
        return result
    if isinstance(cond, NotOf):
        r = evaluate(cond.item, facts, version, ev)
        return None if r is None else not r
    if isinstance(cond, InVersions):
        return any(rng.contains(version) for rng in cond.ranges)
    raise TypeError(f"not a compiled condition: {cond!r}")


def _lookup(key: str, facts: dict[str, Any], ev: Evaluation) -> Any:
    if key in facts:
        value = facts[key]
        ev.used[key] = value
        return value
    if key.startswith(PRESENCE_PREFIXES):
        return None
    ev.missing.add(key)
    return _MISSING


def _value(operand: Operand, facts: dict[str, Any], ev: Evaluation) -> Any:
    if isinstance(operand, FactRef):
        value = _lookup(operand.key, facts, ev)
        if value is None:
            ev.missing.add(operand.key)
            return _MISSING
        return value
    if isinstance(operand, Arith):
        values = [_value(item, facts, ev) for item in operand.items]
        if not all(_is_number(v) for v in values):  # _MISSING included
            return _MISSING
        total = values[0]
        for v in values[1:]:
            total = total * v if operand.op == "mul" else total + v
        return total
    return operand


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _compare(c: Compare, facts: dict[str, Any], ev: Evaluation) -> Optional[bool]:
    if c.op in ("is_set", "is_unset"):
        value = facts.get(c.key)
        if c.key in facts:
            ev.used[c.key] = value
        is_set = value is not None and value is not False and value != "" and value != []
        return is_set if c.op == "is_set" else not is_set
    left = _lookup(c.key, facts, ev)
    if left is _MISSING:
        return None
    presence = c.key.startswith(PRESENCE_PREFIXES)
    if left is None and presence and c.op not in ("eq", "ne", "in", "not_in"):
        return False  # so below, for the other operators, a None left is never a presence fact
    right = _value(c.value, facts, ev)
    if right is _MISSING:
        return None
    if c.op == "eq":
        return _eq(left, right)
    if c.op == "ne":
        return not _eq(left, right)
    if c.op in ("in", "not_in"):
        if not isinstance(right, (list, tuple, set)):
            return None
        found = any(_eq(left, item) for item in right)
        return found if c.op == "in" else not found
    if left is None:  # present without a value: unknown (and listed as missing) for the remaining operators
        ev.missing.add(c.key)
        return None
    if c.op == "contains":
        if isinstance(left, str) and isinstance(right, str):
            return right.lower() in left.lower()
        if isinstance(left, (list, tuple, set, dict)):
            return any(_eq(item, right) for item in left)
        return None
    if c.op == "matches":
        return bool(c.pattern.fullmatch(str(left)[:MAX_SUBJECT]))
    if c.op == "any_matches":
        items = left if isinstance(left, (list, tuple)) else [left]
        return any(c.pattern.fullmatch(str(item)[:MAX_SUBJECT]) for item in items)
    if c.op in ("lt", "le", "gt", "ge"):
        if not (_is_number(left) and _is_number(right)):
            return False if presence else None
        return {"lt": left < right, "le": left <= right, "gt": left > right, "ge": left >= right}[c.op]
    if c.op in ("divides", "not_divisible_by"):
        if not (_is_int(left) and _is_int(right)):
            return None
        if c.op == "divides":  # left divides right
            return left != 0 and right % left == 0
        return right != 0 and left % right != 0
    raise AssertionError(c.op)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) or (isinstance(v, float) and v.is_integer())


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):  # true is not 1
        return a is b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):  # a YAML list literal is compiled to a tuple
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return a == b


def substitute_each(cond: Condition, each: str) -> Condition:
    """The condition with '{each}' in fact keys replaced by the iterated name."""
    if isinstance(cond, Compare):
        return Compare(cond.key.replace("{each}", each), cond.op, _subst_operand(cond.value, each), cond.pattern)
    if isinstance(cond, AllOf):
        return AllOf(tuple(substitute_each(item, each) for item in cond.items))
    if isinstance(cond, AnyOf):
        return AnyOf(tuple(substitute_each(item, each) for item in cond.items))
    if isinstance(cond, NotOf):
        return NotOf(substitute_each(cond.item, each))
    return cond


def _subst_operand(operand: Operand, each: str) -> Operand:
    if isinstance(operand, FactRef):
        return FactRef(operand.key.replace("{each}", each))
    if isinstance(operand, Arith):
        return Arith(operand.op, tuple(_subst_operand(item, each) for item in operand.items))
    return operand
