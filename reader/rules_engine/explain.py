"""The data behind `vllm-reader explain` and `vllm-reader rules` (reader/render/rules_view.py writes it for people)."""
from __future__ import annotations

from typing import Any, Optional

from .conditions import AllOf, AnyOf, Compare, FactRef, InVersions, NotOf, Arith


def describe_condition(cond: Any, indent: int = 0) -> list[str]:
    """The compiled condition in words, one line per clause (for `explain`)."""
    pad = "  " * indent
    if cond is None:
        return [pad + "always (one finding per note)"]
    if isinstance(cond, AllOf):
        if not cond.items:
            return [pad + "always"]
        lines = [pad + "all of:"]
        for item in cond.items:
            lines += describe_condition(item, indent + 1)
        return lines
    if isinstance(cond, AnyOf):
        lines = [pad + "any of:"]
        for item in cond.items:
            lines += describe_condition(item, indent + 1)
        return lines
    if isinstance(cond, NotOf):
        return [pad + "not:"] + describe_condition(cond.item, indent + 1)
    if isinstance(cond, InVersions):
        return [pad + "vLLM version in " + ", ".join(str(r) for r in cond.ranges)]
    if isinstance(cond, Compare):
        words = {"eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "in": "in", "not_in": "not in",
                 "divides": "divides", "not_divisible_by": "is not divisible by", "contains": "contains",
                 "matches": "matches", "any_matches": "has an element matching"}
        if cond.op == "is_set":
            return [pad + f"{cond.key} is set"]
        if cond.op == "is_unset":
            return [pad + f"{cond.key} is not set"]
        return [pad + f"{cond.key} {words[cond.op]} {_operand(cond.value)}"]
    return [pad + repr(cond)]


def _operand(value: Any) -> str:
    if isinstance(value, FactRef):
        return value.key
    if isinstance(value, Arith):
        sep = " x " if value.op == "mul" else " + "
        return "(" + sep.join(_operand(v) for v in value.items) + ")"
    if isinstance(value, tuple):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def rule_summary(rule: Any) -> dict[str, Any]:
    spec = rule.spec
    return {"id": spec.id, "name": spec.name, "severity": spec.severity, "theme": rule.theme,
            "versions": rule.versions_text(), "engine": spec.engine, "message": spec.message,
            "generated_from_matrix": list(rule.generated_from) if rule.generated_from else None}


def explain_data(rule: Any, run_example: bool = True) -> dict[str, Any]:
    spec = rule.spec
    ex = spec.example
    data = rule_summary(rule)
    data.update({
        "checks": describe_condition(rule.cond),
        "each": spec.each,
        "why": " ".join(spec.why.split()),
        "fix": spec.fix,
        "vllm_message": [{"versions": ", ".join(str(r) for r in ranges), "text": text}
                         for ranges, text in rule.vllm_messages],
        "example": {"file": ex.file, "vllm_version": ex.vllm_version, "config": ex.config,
                    "gpu": ex.gpu, "gpus": ex.gpus, "model": ex.model},
        "source": spec.source_list(),
        "notes": spec.notes_list(),
        "keys": list(spec.keys),
        "overrides": list(spec.overrides),
        "defined_at": f"{rule.file}:{rule.line}" if rule.line else rule.file,
    })
    if run_example:
        data["example_finding"] = example_finding(rule)
    return data


def example_finding(rule: Any) -> Optional[str]:
    """Run the rule's example through the real loader and return the finding's message (None if it does not fire)."""
    import os
    import tempfile

    from ..config.context import LoadOptions
    from ..config.from_cli import load_and_resolve
    from ..errors import ReaderError
    from .engine import check_resolved
    from .loader import RuleSet
    from .run import startup_memory

    ex = rule.spec.example
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, ex.file)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(ex.config)
        try:
            resolved = load_and_resolve(path, LoadOptions(vllm_version=ex.vllm_version, gpu=ex.gpu,
                                                          gpu_count=ex.gpus, model=ex.model))
        except ReaderError as err:
            return f"(the example could not be read: {err.render()})"
        result = check_resolved(resolved, RuleSet([rule]), extra_facts=startup_memory(resolved))
    for f in result.findings:
        if f.rule_id == rule.id:
            return f.message
    return None


def catalog_rows(rules: list[Any]) -> list[dict[str, Any]]:
    return [rule_summary(r) for r in rules]
