"""`vllm-reader check` output: text (one line per finding, like ruff), Markdown, and JSON.

The JSON is `CheckReport` (reader/rules_engine/findings.py) serialised as is; its schema is
reader/render/schemas/findings.schema.json (schema_version 1).
"""
from __future__ import annotations

from typing import Any, Optional

SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


def sorted_findings(findings: list[Any]) -> list[Any]:
    return sorted(findings, key=lambda f: (f.config, _first_line(f) or 0, SEVERITY_RANK[f.severity], f.rule_id))


def _first_line(f: Any) -> Optional[int]:
    return f.locations[0].line if f.locations else None


def location_text(f: Any) -> str:
    loc = f.locations[0] if f.locations else None
    if loc is None:
        return f.config
    return f"{loc.file}:{loc.line}" if loc.line else loc.file


def summary_line(report: Any) -> str:
    s = report.summary
    parts = [_count(s.errors, "error"), _count(s.warnings, "warning"), _count(s.infos, "info")]
    checked = s.configs - s.bad_input
    versions = sorted({c.vllm_version for c in report.configs if c.vllm_version})
    text = f"{', '.join(parts)} in {_count(checked, 'config')}"
    if versions:
        text += f" (vLLM {', '.join(versions)})"
    if s.bad_input:
        text += f"; {_count(s.bad_input, 'config')} could not be read"
    verdict = {0: "passed", 1: f"failed (--fail-on {s.fail_on})", 2: "bad input"}[s.exit_code]
    return f"{text}: {verdict}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_text(report: Any, verbose: bool = False) -> str:
    lines = []
    for f in sorted_findings(report.findings):
        if f.severity == "info" and not verbose:
            continue
        line = f"{location_text(f)}: {f.rule_id} {f.severity} {f.message} [fix: {f.fix}]"
        lines.append(line)
        if verbose:
            if f.vllm_message:
                lines.append(f"    vLLM says: {f.vllm_message}")
            lines.append(f"    source: {'; '.join(f.source)}")
            if f.facts:
                lines.append("    facts: " + ", ".join(f"{k}={_fact(v)}" for k, v in sorted(f.facts.items())))
    if verbose:
        for c in report.configs:
            if c.status == "checked":
                lines.append(f"{c.config}: vLLM {c.vllm_version} ({c.vllm_version_origin}), {c.engine} engine, "
                             f"form {c.form}, {c.rules_evaluated} rules evaluated")
                if c.model_source:
                    lines.append(f"{c.config}: model {c.model}; {c.model_source}")
                lines += [f"{note_place(c, n)}: note: {n.message}" for n in c.notes]
        for s in report.skipped:
            lines.append(f"{s.config}: skipped {s.rule_id} ({s.name}): missing {', '.join(s.missing)}")
    lines.append(summary_line(report) + ("" if verbose else _verbose_hint(report)))
    return "\n".join(lines) + "\n"


def note_place(c: Any, note: Any) -> str:
    """file:line of a reading note, else the config it is about."""
    if note.file and note.line:
        return f"{note.file}:{note.line}"
    return note.file or c.config


def _verbose_hint(report: Any) -> str:
    notes = sum(len(c.notes) for c in report.configs)
    hidden = (["info findings"] if report.summary.infos else []) + ([_count(notes, "reading note")] if notes else [])
    return f" ({' and '.join(hidden)}: -v)" if hidden else ""


def _fact(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def render_json(report: Any) -> str:
    return report.model_dump_json(indent=2) + "\n"


def render_markdown(report: Any) -> str:
    from .markdown import code, md

    out = ["# vllm-reader check", "", summary_line(report), ""]
    findings = sorted_findings(report.findings)
    for c in report.configs:
        out.append(f"## {md(c.config)}")
        out.append("")
        if c.status == "bad-input":
            out += [f"Bad input: {md(c.error or '')}", ""]
            continue
        out.append(f"vLLM {c.vllm_version} ({c.vllm_version_origin}), {c.engine} engine, {c.rules_evaluated} rules "
                   "evaluated.")
        out.append("")
        if c.notes:
            out += ["Notes on reading the config:", ""]
            out += [f"- {md(note_place(c, n))}: {md(n.message)}" for n in c.notes] + [""]
        mine = [f for f in findings if f.config == c.config]
        if not mine:
            out += ["No findings.", ""]
            continue
        out += ["| severity | rule | line | finding | fix |", "|---|---|---|---|---|"]
        for f in mine:
            out.append(f"| {f.severity} | {f.rule_id} {code(f.name)} | {_first_line(f) or ''} | {md(f.message)} | {md(f.fix)} |")
        out.append("")
        quoted = [f for f in mine if f.vllm_message]
        if quoted:
            out += ["vLLM's own messages:", ""]
            for f in quoted:
                out.append(f"- {f.rule_id}: {code(f.vllm_message)} ({md('; '.join(f.source))})")
            out.append("")
    return "\n".join(out)
