"""Loading the rule files: rules/validation/*.yaml and the rules generated from rules/compat-matrix.yaml.

Every problem in a rule file is a RuleLoadError (a ReaderError, so the CLI prints one paragraph and
exits 2) naming the file, the rule id and the line: unknown operator, unknown severity, bad version
range, duplicate id, missing field, unknown field.

Loading is fast on purpose (the check runs on every commit): YAML is read with the C loader when
PyYAML has it, and line numbers are looked up (a second, slower parse) only when there is an error.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from ..versions import VersionRange, VersionTuple
from .matrix import load_matrix
from .rulefile import (LoadedRule, RuleLoadError, _pydantic_words, build_rule, read_yaml,  # noqa: F401  (re-exported)
                       rule_line)

class SpecView:
    """A rule's fields read from the lock file, with RuleSpec's attribute names, without pydantic."""

    FIELDS = {"id": None, "name": None, "severity": None, "theme": None, "versions": None, "engine": None,
              "each": None, "when": None, "message": None, "vllm_message": None, "fix": None, "why": None,
              "source": None, "keys": [], "notes": None, "overrides": []}
    __slots__ = (*FIELDS, "example")

    def __init__(self, data: dict[str, Any]) -> None:
        for name, default in self.FIELDS.items():
            value = data.get(name, default)
            setattr(self, name, list(value) if isinstance(default, list) else value)
        self.example = ExampleView(data["example"])

    def source_list(self) -> list[str]:
        return [self.source] if isinstance(self.source, str) else list(self.source)

    def notes_list(self) -> list[str]:
        if self.notes is None:
            return []
        return [self.notes] if isinstance(self.notes, str) else list(self.notes)


class ExampleView:
    __slots__ = ("config", "file", "vllm_version", "gpu", "gpus", "model")

    def __init__(self, data: dict[str, Any]) -> None:
        self.config = data["config"]
        self.file = data.get("file", "example.sh")
        self.vllm_version = data.get("vllm_version")
        self.gpu = data.get("gpu")
        self.gpus = data.get("gpus")
        self.model = data.get("model")


LOCK_NAME = "rules.lock.json"
LOCK_FORMAT = 1


@dataclass
class RuleSet:
    rules: list[LoadedRule]
    root: Optional[Path] = None
    from_lock: bool = False

    def __post_init__(self) -> None:
        self.by_id = {rule.id: rule for rule in self.rules}
        self._matrix: Optional[dict[str, Any]] = None

    def get(self, rule_id: str) -> Optional[LoadedRule]:
        return self.by_id.get(rule_id.strip().upper())

    def find(self, text: str) -> Optional[LoadedRule]:
        """The rule with this id (any case) or name."""
        text = text.strip()
        return self.get(text) or next((r for r in self.rules if r.spec.name == text.lower()), None)

    def active(self, version: VersionTuple) -> list[LoadedRule]:
        return [rule for rule in self.rules if rule.active(version)]

    @property
    def matrix(self) -> Optional[dict[str, Any]]:
        """The compatibility matrix data (read on first use: only `rules --matrix` needs it)."""
        if self._matrix is None and self.root is not None and (self.root / "compat-matrix.yaml").is_file():
            self._matrix, _ = load_matrix(self.root / "compat-matrix.yaml")
        return self._matrix


def rules_dir() -> Path:
    from ..resources import data_dir

    return data_dir("rules")


def source_files(base: Path) -> list[Path]:
    """The files the rules are built from, in a stable order."""
    files = sorted((base / "validation").glob("*.yaml")) if (base / "validation").is_dir() else []
    matrix = base / "compat-matrix.yaml"
    return files + ([matrix] if matrix.is_file() else [])


def sources_digest(base: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    for path in source_files(base):
        h.update(path.relative_to(base).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


@lru_cache(maxsize=8)
def load_rules(root: Optional[str] = None, use_lock: bool = True) -> RuleSet:
    """All shipped rules (or those under `root`, for tests), sorted by id.

    Fast path: rules/rules.lock.json (the validated, expanded rules; `python -m reader.rules_engine.generate`
    writes it) when its digest matches the rule files. Otherwise the YAML is read and validated.
    """
    base = Path(root) if root else rules_dir()
    if use_lock:
        ruleset = _from_lock(base)
        if ruleset is not None:
            return ruleset
    return RuleSet(load_from_yaml(base), base)


def load_from_yaml(base: Path) -> list[LoadedRule]:
    loaded: list[LoadedRule] = []
    seen: dict[str, LoadedRule] = {}
    for path in source_files(base):
        if path.name == "compat-matrix.yaml":
            _, rules = load_matrix(path)
        else:
            rules = load_rule_file(path)
        for rule in rules:
            _check_duplicate(rule, seen)
            loaded.append(rule)
    known = {rule.id for rule in loaded}
    for rule in loaded:
        for target in rule.spec.overrides:
            if target not in known and target != "*":
                raise RuleLoadError(f"rule {rule.id}: 'overrides' names {target}, which no rule file defines.",
                                    file=rule.file, line=rule.line)
    loaded.sort(key=lambda r: r.id)
    return loaded


def lock_document(base: Path) -> dict[str, Any]:
    """The content of rules/rules.lock.json for the rule files under `base` (validating them)."""
    rules = load_from_yaml(base)
    entries = []
    for rule in rules:
        entries.append({
            "spec": rule.spec.model_dump(mode="json", exclude_none=True),
            "ranges": [[list(r.low) if r.low else None, list(r.high) if r.high else None] for r in rule.ranges],
            "file": Path(rule.file).resolve().relative_to(base.resolve()).as_posix(),
            "index": rule.index, "theme": rule.theme, "list_key": rule.list_key,
            "generated_from": list(rule.generated_from) if rule.generated_from else None,
        })
    return {"lock_format": LOCK_FORMAT, "digest": sources_digest(base), "count": len(entries), "rules": entries}


def _from_lock(base: Path) -> Optional[RuleSet]:
    import json

    path = base / LOCK_NAME
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("lock_format") != LOCK_FORMAT or data.get("digest") != sources_digest(base):
        return None
    rules = []
    for entry in data["rules"]:
        ranges = tuple(VersionRange(tuple(lo) if lo else None, tuple(hi) if hi else None) for lo, hi in entry["ranges"])
        rules.append(LoadedRule(
            spec=SpecView(entry["spec"]), ranges=ranges, file=str(base / entry["file"]), index=entry["index"],
            theme=entry["theme"], generated_from=tuple(entry["generated_from"]) if entry.get("generated_from") else None,
            list_key=entry.get("list_key", "rules")))
    return RuleSet(rules, base, from_lock=True)


def _check_duplicate(rule: LoadedRule, seen: dict[str, LoadedRule]) -> None:
    # keeps the rule, not its line: a line costs a second parse of the file, paid only for the error
    first = seen.setdefault(rule.id, rule)
    if first is not rule:
        where = f"{first.file}:{first.line}" if first.line else first.file
        raise RuleLoadError(f"duplicate rule id {rule.id}: it is already defined at {where}. Rule ids are stable and "
                            "unique; give the new rule the next free id.", file=rule.file, line=rule.line)


def load_rule_file(path: Path) -> list[LoadedRule]:
    from pydantic import ValidationError

    from .schema import RuleFile

    data = read_yaml(path)
    if not isinstance(data, dict):
        raise RuleLoadError("a rule file is a mapping with 'schema: 1' and a list of 'rules'.", file=str(path), line=1)
    try:
        header = RuleFile.model_validate(data)
    except ValidationError as err:
        raise RuleLoadError(f"bad rule file: {_pydantic_words(err)}.", file=str(path), line=1) from None
    out = []
    for index, raw in enumerate(header.rules):
        try:
            out.append(build_rule(raw, str(path), index, header.theme))
        except RuleLoadError as err:
            err.line = rule_line(str(path), index, "rules")
            raise
    return out


