"""`vllm-reader explain` and `vllm-reader rules` as text and Markdown: the rule data of
reader/rules_engine/explain.py (explain_data, catalog_rows), written for people."""
from __future__ import annotations

import textwrap
from typing import Any


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
    from .markdown import code, md

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


def catalog_text(rows: list[dict[str, Any]], header: str) -> str:
    out = [header, ""]
    for r in rows:
        out.append(f"{r['id']}  {r['severity']:<7}  {r['theme']:<11}  {r['versions']:<22}  {r['name']}")
    return "\n".join(out) + "\n"


def catalog_markdown(rows: list[dict[str, Any]], header: str) -> str:
    from .markdown import code, md

    out = [f"# {md(header)}", "", "| id | severity | theme | versions | name | checks |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['id']} | {r['severity']} | {md(r['theme'])} | {md(r['versions'])} | {code(r['name'])} | "
                   f"{md(r['message'])} |")
    return "\n".join(out) + "\n"
