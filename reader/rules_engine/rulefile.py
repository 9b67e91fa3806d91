"""One rule as loaded from a file: the validated rule (LoadedRule), how a rule mapping becomes one (build_rule),
and the errors and line numbers of rule files. Both the rule files' loader (loader.py) and the compatibility
matrix (matrix.py) build their rules here, so neither needs the other's internals.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

import yaml

from ..errors import ReaderError, validation_words
from ..versions import VersionRange, VersionTuple
from .conditions import AllOf, Condition, ConditionError, compile_condition, parse_ranges

try:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


class RuleLoadError(ReaderError):
    """A rule file that does not follow rules/README.md."""


_UNSET = object()


class LoadedRule:
    """One validated rule: its fields (`spec`), version ranges and compiled condition.

    The condition is compiled on first use, so only the rules active for the checked version pay for it.
    """

    __slots__ = ("spec", "ranges", "file", "index", "theme", "generated_from", "list_key", "_cond", "_messages")

    def __init__(self, spec: Any, ranges: tuple[VersionRange, ...], file: str, index: Optional[int], theme: str,
                 generated_from: Optional[tuple[str, str]] = None, list_key: str = "rules",
                 cond: Any = _UNSET, messages: Any = None) -> None:
        self.spec = spec
        self.ranges = ranges
        self.file = file
        self.index = index  # position in the file's list of rules (its line is looked up only when needed)
        self.theme = theme
        self.generated_from = generated_from  # matrix pair the rule was generated from
        self.list_key = list_key
        self._cond = cond
        self._messages = messages

    @property
    def cond(self) -> Optional[Condition]:
        if self._cond is _UNSET:
            self._cond = _compile(self.spec)
        return self._cond

    @property
    def vllm_messages(self) -> tuple[tuple[tuple[VersionRange, ...], str], ...]:
        if self._messages is None:
            self._messages = _vllm_messages(self.spec.vllm_message)
        return self._messages

    @property
    def line(self) -> Optional[int]:
        return rule_line(self.file, self.index, self.list_key)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def severity(self) -> str:
        return self.spec.severity

    def active(self, version: VersionTuple) -> bool:
        return any(r.contains(version) for r in self.ranges)

    def vllm_message_for(self, version: Optional[VersionTuple]) -> Optional[str]:
        for ranges, text in self.vllm_messages:
            if version is None or any(r.contains(version) for r in ranges):
                return text
        return None

    def versions_text(self) -> str:
        return ", ".join(_range_words(r) for r in self.ranges)


def _compile(spec: Any) -> Optional[Condition]:
    cond = compile_condition(spec.when, "when") if spec.when is not None else None
    if cond is None and spec.each and spec.each.endswith(".*"):
        cond = AllOf(())
    return cond


def _range_words(r: VersionRange) -> str:
    text = str(r)
    if text.startswith(".."):
        return "up to " + text[2:]
    if text.endswith(".."):
        return text[:-2] + " and later"
    return text.replace("..", " to ")


def read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise RuleLoadError(f"cannot read the rule file ({err.strerror}).", file=str(path)) from None
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise RuleLoadError(f"malformed YAML: {getattr(err, 'problem', None) or err}.", file=str(path),
                            line=mark.line + 1 if mark else None) from None


def item_lines(path: Path, key: str) -> list[Optional[int]]:
    """1-based line of each item of the top-level list `key` (the slow path, used for messages)."""
    try:
        node = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        return []
    if not isinstance(node, yaml.MappingNode):
        return []
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key and isinstance(v, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in v.value]
    return []


@lru_cache(maxsize=64)
def _lines_of(file: str, key: str) -> tuple[Optional[int], ...]:
    return tuple(item_lines(Path(file), key))


def rule_line(file: str, index: Optional[int], key: str = "rules") -> Optional[int]:
    """The line where the index-th item of the file's `key` list starts (computed only when asked)."""
    if index is None:
        return None
    lines = _lines_of(file, key)
    return lines[index] if index < len(lines) else None


def build_rule(raw: Any, file: str, index: Optional[int], default_theme: Optional[str],
               generated_from: Optional[tuple[str, str]] = None, list_key: str = "rules") -> LoadedRule:
    from pydantic import ValidationError

    from .schema import RuleSpec

    line = None  # filled in by the caller from `index` when an error is raised
    rule_id = raw.get("id") if isinstance(raw, dict) else None
    label = f"rule {rule_id}" if isinstance(rule_id, str) else "a rule without an id"
    if not isinstance(raw, dict):
        raise RuleLoadError(f"{label}: each rule is a mapping of fields.", file=file, line=line)
    try:
        spec = RuleSpec.model_validate(raw)
    except ValidationError as err:
        raise RuleLoadError(f"{label}: {_pydantic_words(err)}.", file=file, line=line) from None
    theme = spec.theme or default_theme
    if theme is None:
        raise RuleLoadError(f"{label}: no theme (set 'theme' on the rule or at the top of the file).", file=file,
                            line=line)
    if spec.when is None and not (spec.each or "").endswith(("note:warning", "note:info")):
        raise RuleLoadError(f"{label}: 'when' is required (only a note family may omit it).", file=file, line=line)
    try:
        ranges = parse_ranges(spec.versions, "versions")
        cond = _compile(spec)
        messages = _vllm_messages(spec.vllm_message)
    except ConditionError as err:
        raise RuleLoadError(f"{label}: {err}.", file=file, line=line) from None
    return LoadedRule(spec=spec, ranges=ranges, file=file, index=index, theme=theme, generated_from=generated_from,
                      list_key=list_key, cond=cond, messages=messages)


def _vllm_messages(raw: Any) -> tuple[tuple[tuple[VersionRange, ...], str], ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        return (((VersionRange(None, None),), raw),)
    return tuple((parse_ranges(key, "vllm_message"), text) for key, text in raw.items())


def _pydantic_words(err: Any) -> str:
    parts = []
    for item in err.errors()[:3]:
        where = ".".join(str(p) for p in item["loc"]) or "rule"
        msg = validation_words(item)
        if item["type"] == "extra_forbidden":
            msg = "unknown field (see rules/README.md for the fields a rule has)"
        elif item["type"] == "missing":
            msg = "missing required field"
        elif item["type"] == "literal_error":
            msg = f"{msg}, got {item.get('input')!r}"
        parts.append(f"'{where}': {msg}")
    return "; ".join(parts)
