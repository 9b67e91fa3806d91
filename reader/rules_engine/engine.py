"""Evaluating the rules against one resolved deployment.

Only the rules active for the deployment's vLLM version (and engine, when a rule names one) are
evaluated, against the flat fact view of reader/config/facts.py. A rule with `each` runs once per
matching fact (`absent.*`: once per flag the version lacks) or per loader/resolver note. A rule whose
condition is unknown (a fact it needs is missing) does not fire and is recorded as skipped. When a
specific rule fires, the findings of the rules it `overrides` about the same keys are dropped (the
specific `--swap-space` rule replaces the generic "flag not in this version" one). A message may
name `{skipped_rules}`: the rules this config left undecided, filled once every rule has run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from .conditions import Evaluation, evaluate, substitute_each
from .findings import Finding, Location, Skipped
from .loader import LoadedRule, RuleSet

_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.\-]+)\}")
SKIPPED_RULES = "{skipped_rules}"


@dataclass
class Evaluated:
    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    rules_evaluated: int = 0


@dataclass
class _Fired:
    finding: Finding
    rule: LoadedRule
    keys: frozenset[str]


def check_resolved(resolved: Any, ruleset: RuleSet, config: Optional[str] = None,
                   only: Optional[Iterable[str]] = None, extra_facts: Optional[dict[str, Any]] = None) -> Evaluated:
    """Every active rule against one ResolvedDeployment; `only` limits it to some rule ids (tests); `extra_facts`
    adds facts a later stage computed (`memory.*`: the capacity model's start-up verdict, for `check`)."""
    from ..config.facts import facts as fact_view

    facts = {**fact_view(resolved), **(extra_facts or {})}
    deployment = resolved.deployment
    label = config or deployment.source
    version = resolved.version_tuple
    wanted = {rid.upper() for rid in only} if only else None
    out = Evaluated()
    fired: list[_Fired] = []
    for rule in ruleset.active(version):
        if wanted is not None and rule.id not in wanted:
            continue
        if rule.spec.engine and rule.spec.engine != facts.get("engine"):
            continue
        out.rules_evaluated += 1
        each = rule.spec.each
        if each is None:
            _one(rule, rule.cond, facts, version, deployment, label, None, None, fired, out)
        elif each.endswith(".*"):
            prefix = each[:-1]
            items = sorted(k[len(prefix):] for k, v in facts.items()
                           if k.startswith(prefix) and v is not None and v is not False)
            for item in items:
                cond = substitute_each(rule.cond, item)
                _one(rule, cond, facts, version, deployment, label, item, None, fired, out)
        else:
            source, level = each.split(":")
            notes = deployment.notes if source == "loader-note" else resolved.notes
            for note in notes:
                if note.level == level:
                    _one(rule, rule.cond, facts, version, deployment, label, None, note, fired, out)
    out.findings = [f.finding for f in _apply_overrides(fired)]
    skipped = ", ".join(f"{s.rule_id} ({s.name})" for s in out.skipped) or "none"
    for finding in out.findings:
        if SKIPPED_RULES in finding.message:
            finding.message = finding.message.replace(SKIPPED_RULES, skipped)
    return out


def _one(rule: LoadedRule, cond: Any, facts: dict[str, Any], version: Any, deployment: Any, label: str,
         each: Optional[str], note: Any, fired: list[_Fired], out: Evaluated) -> None:
    ev = Evaluation()
    result = True if cond is None else evaluate(cond, facts, version, ev)
    if result is None:
        out.skipped.append(Skipped.model_construct(rule_id=rule.id, name=rule.spec.name, config=label,
                                                   missing=sorted(ev.missing)))
        return
    if not result:
        return
    keys = [k.replace("{each}", each) if each else k for k in rule.spec.keys]
    extra: dict[str, Any] = {"skipped_rules": SKIPPED_RULES}  # filled when every rule has run
    if note is not None:
        extra["note"] = note.message
        if note.key:
            keys = [note.key, *keys]
    message = fill(rule.spec.message, facts, each, extra)
    locations = _locations(deployment, label, keys, note)
    finding = Finding.model_construct(
        rule_id=rule.id, name=rule.spec.name, severity=rule.severity, theme=rule.theme, config=label,
        message=message, vllm_message=_vllm_message(rule, version, facts, each),
        fix=fill(rule.spec.fix, facts, each, extra),
        source=rule.spec.source_list(), locations=locations, facts=_json_safe(ev.used),
    )
    fired.append(_Fired(finding, rule, frozenset(keys)))


def _vllm_message(rule: LoadedRule, version: Any, facts: dict[str, Any], each: Optional[str]) -> Optional[str]:
    """vLLM's message for the version. Its `{x}` markers stay as written, except a family's per-item fact
    (`{bound_message.{each}}`), which holds vLLM's text for the one item the finding is about."""
    text = rule.vllm_message_for(version)
    if text is None or each is None or "{each}}" not in text:
        return text
    return re.sub(r"\{([A-Za-z0-9_.\-]+)\.\{each\}\}",
                  lambda m: format_value(facts.get(f"{m.group(1)}.{each}")), text)


def _apply_overrides(fired: list[_Fired]) -> list[_Fired]:
    """A rule's `overrides` drop the findings of the named rules on the same keys. `*` names every other rule,
    except one that itself names the overriding rule: a specific rule keeps precedence over a generic one."""
    dropped: set[int] = set()
    for j, f in enumerate(fired):
        for target in f.rule.spec.overrides:
            for i, other in enumerate(fired):
                named = other.rule.id == target
                generic = target == "*" and f.rule.id not in other.rule.spec.overrides
                if i != j and (named or generic) and other.keys & f.keys:
                    dropped.add(i)
    return [f for i, f in enumerate(fired) if i not in dropped]


def _locations(deployment: Any, label: str, keys: list[str], note: Any) -> list[Location]:
    out: list[Location] = []
    seen: set[tuple[Optional[int], Optional[str]]] = set()

    def add(loc: Any, key: Optional[str]) -> None:
        if loc is None or loc.line is None:
            return
        marker = (loc.line, key)
        if marker not in seen:
            seen.add(marker)
            out.append(Location.model_construct(file=label, line=loc.line, key=key))

    if note is not None and note.loc is not None:
        add(note.loc, note.key)
    for key in keys:
        if key == "model":
            add(deployment.model_loc, "model")
        elif key in deployment.flags:
            add(deployment.flags[key].loc, key)
    if not out:
        out.append(Location.model_construct(file=label, line=None, key=None))
    return out


def fill(text: str, facts: dict[str, Any], each: Optional[str] = None, extra: Optional[dict[str, Any]] = None) -> str:
    """Plain substitution of {fact} placeholders (no format-string attribute access, no expressions)."""
    if each is not None:
        text = text.replace("{each}", each)
    extra = extra or {}

    def one(m: re.Match) -> str:
        key = m.group(1)
        if key in extra:
            return format_value(extra[key])
        if key in facts:
            return format_value(facts[key])
        return "unknown"

    return _PLACEHOLDER.sub(one, text)


def format_value(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value)
    if isinstance(value, dict):
        import json

        return json.dumps(value, sort_keys=True)
    return str(value)


def _json_safe(values: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in values.items():
        if isinstance(value, (str, int, float, bool)) or value is None:
            out[key] = value
        elif isinstance(value, (list, tuple)):
            out[key] = [v if isinstance(v, (str, int, float, bool)) or v is None else str(v) for v in value]
        else:
            out[key] = str(value)
    return out
