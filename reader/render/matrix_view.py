"""`vllm-reader rules --matrix`: the compatibility matrix at one vLLM version, as text, Markdown or JSON."""
from __future__ import annotations

from typing import Any, Optional

from ..rules_engine.matrix import STATUS_SYMBOL, matrix_table

TEXT_SYMBOL = {"yes": "yes", "no": "NO", "partial": "part", "unknown": "?"}


def render_matrix(ruleset: Any, version: Optional[str], fmt: str) -> str:
    from ..versions import format_version, newest_version

    data = ruleset.matrix
    if data is None:
        return "no compatibility matrix in this installation\n"
    version = version or format_version(newest_version())
    table = matrix_table(data, version)
    rules_by_pair: dict[tuple[str, str], list[str]] = {}
    for rule in ruleset.rules:
        if rule.generated_from:
            a, b = rule.generated_from
            rules_by_pair.setdefault((a, b), []).append(rule.id)
            rules_by_pair.setdefault((b, a), []).append(rule.id)
    if fmt == "json":
        import json

        cells = []
        for (a, b), entry in table["ff"].items():
            if a < b:
                cells.append({"pair": [a, b], "status": entry["status"], "source": entry["source"],
                              "rules": rules_by_pair.get((a, b), [])})
        for (a, b), entry in table["fh"].items():
            cells.append({"pair": [a, b], "status": entry["status"], "source": entry["source"]})
        return json.dumps({"vllm_version": version, "cells": cells}, indent=2, ensure_ascii=False) + "\n"
    features, hardware, labels = table["features"], table["hardware"], table["labels"]
    if fmt == "markdown":
        from .markdown import md

        out = [f"# vLLM {md(version)} feature compatibility", "",
               "Feature x feature (✅ yes, ❌ no, 🟠 partial, ❔ unknown; rule ids where a rule is generated):", "",
               "| | " + " | ".join(md(f) for f in features) + " |", "|---|" + "---|" * len(features)]
        for a in features:
            row = []
            for b in features:
                entry = table["ff"].get((a, b))
                cell = STATUS_SYMBOL.get(entry["status"], "") if entry else ("·" if a == b else "")
                ids = rules_by_pair.get((a, b))
                if entry and ids and entry["status"] != "yes":
                    cell += " " + ", ".join(ids)
                row.append(cell)
            out.append(f"| {md(labels.get(a, a))} | " + " | ".join(row) + " |")
        out += ["", "Feature x hardware:", "", "| | " + " | ".join(md(h) for h in hardware) + " |",
                "|---|" + "---|" * len(hardware)]
        for a in features:
            row = [STATUS_SYMBOL.get(table["fh"][(a, h)]["status"], "") if (a, h) in table["fh"] else ""
                   for h in hardware]
            if any(row):
                out.append(f"| {md(labels.get(a, a))} | " + " | ".join(row) + " |")
        return "\n".join(out) + "\n"
    width = max(len(f) for f in features) + 2
    out = [f"vLLM {version} feature compatibility (from vLLM's docs; NO = not compatible, part = partial, "
           "? = unknown)", ""]
    out.append(" " * width + " ".join(f"{f[:8]:>8}" for f in features))
    for a in features:
        cells = []
        for b in features:
            entry = table["ff"].get((a, b))
            cells.append(f"{(TEXT_SYMBOL.get(entry['status'], '') if entry else ('-' if a == b else '')):>8}")
        out.append(f"{a:<{width}}" + " ".join(cells))
    out += ["", "hardware".ljust(width) + " ".join(f"{h[:8]:>8}" for h in hardware)]
    for a in features:
        cells = [f"{TEXT_SYMBOL.get(table['fh'][(a, h)]['status'], ''):>8}" if (a, h) in table["fh"] else " " * 8
                 for h in hardware]
        if any(c.strip() for c in cells):
            out.append(f"{a:<{width}}" + " ".join(cells))
    generated = sorted({rid for ids in rules_by_pair.values() for rid in ids})
    if generated:
        out += ["", "Rules generated from this matrix: " + ", ".join(generated) + " (vllm-reader explain ID)"]
    return "\n".join(out) + "\n"
