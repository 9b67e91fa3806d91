"""The data behind `vllm-reader explain` and `vllm-reader rules`, and their text/Markdown forms."""
from __future__ import annotations

import textwrap
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
                 "matches": "matches"}
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
        result = check_resolved(resolved, RuleSet([rule]))
    for f in result.findings:
        if f.rule_id == rule.id:
            return f.message
    return None


def explain_text(data: dict[str, Any]) -> str:
    w = textwrap.TextWrapper(width=100, initial_indent="  ", subsequent_indent="  ")
    out = [f"{data['id']} {data['name']} ({data['severity']}, {data['theme']})", ""]
    out.append("What it checks:")
    out.append("  " + data["message"])
    if data.get("each"):
        out.append(f"  (one finding per {data['each']})")
    out += ["  when " + line.strip() if i == 0 else "  " + line for i, line in enumerate(data["checks"])]
    if data.get("engine"):
        out.append(f"  only on the {data['engine'].upper()} engine")
    out += ["", "Why it matters:"] + w.wrap(data["why"])
    out += ["", "vLLM versions: " + data["versions"]]
    if data["vllm_message"]:
        out += ["", "vLLM's message:"]
        for m in data["vllm_message"]:
            prefix = f"  [{m['versions']}] " if m["versions"] != ".." else "  "
            out.append(prefix + m["text"])
    ex = data["example"]
    context = ", ".join(f"{k} {ex[k]}" for k in ("vllm_version", "gpu", "gpus", "model") if ex.get(k))
    out += ["", f"Example ({ex['file']}{', ' + context if context else ''}):"]
    out += ["  " + line for line in ex["config"].rstrip("\n").splitlines()]
    if data.get("example_finding"):
        out += ["  -> " + data["example_finding"]]
    out += ["", "Fix:"] + w.wrap(data["fix"])
    out += ["", "Source:"] + ["  " + s for s in data["source"]]
    if data["notes"]:
        out += ["", "Notes:"] + [line for n in data["notes"] for line in w.wrap(n)]
    if data.get("generated_from_matrix"):
        out += ["", "Generated from rules/compat-matrix.yaml, pair " + " x ".join(data["generated_from_matrix"])]
    if data["overrides"]:
        out += ["", "Replaces the findings of " + ", ".join(data["overrides"]) + " for the same keys."]
    out += ["", "Defined at " + data["defined_at"]]
    return "\n".join(out) + "\n"


def explain_markdown(data: dict[str, Any]) -> str:
    from ..render.markdown import code, md

    out = [f"# {data['id']} {code(data['name'])}", "",
           f"Severity **{data['severity']}**, theme {md(data['theme'])}, vLLM versions {md(data['versions'])}.", "",
           "## What it checks", "", md(data["message"]), ""]
    out += ["- " + code(line.strip()) for line in data["checks"]] + [""]
    out += ["## Why it matters", "", md(data["why"]), ""]
    if data["vllm_message"]:
        out += ["## vLLM's message", ""] + [f"- {md(m['versions'])}: {code(m['text'])}" for m in data["vllm_message"]]
        out.append("")
    ex = data["example"]
    out += ["## Example", "", f"`{ex['file']}` with vLLM {md(ex.get('vllm_version') or 'newest')}:", "", "```",
            ex["config"].rstrip("\n").replace("```", "'''"), "```", ""]
    if data.get("example_finding"):
        out += ["Finding: " + md(data["example_finding"]), ""]
    out += ["## Fix", "", md(data["fix"]), "", "## Source", ""] + ["- " + md(s) for s in data["source"]] + [""]
    if data["notes"]:
        out += ["## Notes", ""] + ["- " + md(n) for n in data["notes"]] + [""]
    return "\n".join(out)


def catalog_rows(rules: list[Any]) -> list[dict[str, Any]]:
    return [rule_summary(r) for r in rules]


def catalog_text(rows: list[dict[str, Any]], header: str) -> str:
    out = [header, ""]
    for r in rows:
        out.append(f"{r['id']}  {r['severity']:<7}  {r['theme']:<11}  {r['versions']:<22}  {r['name']}")
    return "\n".join(out) + "\n"


def catalog_markdown(rows: list[dict[str, Any]], header: str) -> str:
    from ..render.markdown import code, md

    out = [f"# {md(header)}", "", "| id | severity | theme | versions | name | checks |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['id']} | {r['severity']} | {md(r['theme'])} | {md(r['versions'])} | {code(r['name'])} | "
                   f"{md(r['message'])} |")
    return "\n".join(out) + "\n"
