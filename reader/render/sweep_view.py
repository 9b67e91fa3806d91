"""A sweep as a table, Mermaid charts, JSON, and (with --plot) an SVG/PNG scatter."""
from __future__ import annotations

import json

from ..diagnose.sweep import Sweep
from ..errors import ReaderError
from .calibration_view import calibration_line
from .charts import Chart, Line, mermaid
from .markdown import code, md
from .report import ms


def render_sweep(s: Sweep, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(s.model_dump(mode="json"), indent=2) + "\n"
    if fmt == "markdown":
        return _markdown(s)
    if fmt == "text":
        return _text(s)
    raise ReaderError(f"unknown format '{fmt}': expected text, markdown or json.", key="--format")


def _label(values: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


def _rows(s: Sweep) -> list[list[str]]:
    rows = []
    for i, p in enumerate(s.points):
        mark = ("best " if i == s.best else "") + ("pareto" if p.pareto else "")
        if p.metrics is None:
            rows.append([_label(p.values), p.status.replace("_", " "), "", "", "", "", (p.why_not or "")[:80]])
            continue
        m = p.metrics
        slo = "" if p.within_slo is None else ("yes" if p.within_slo else "no")
        rows.append([_label(p.values), f"{m.output_throughput:,.0f}", ms(m.ttft_p99_ms), ms(m.itl_p99_ms),
                     f"{m.preemptions:,}", slo, mark.strip()])
    return rows


HEADER = ["setting", "output tok/s", "TTFT P99", "ITL P99", "preemptions", "within SLO", "note"]


def _text(s: Sweep) -> str:
    rows = _rows(s)
    widths = [max(len(r[i]) for r in [HEADER] + rows) for i in range(len(HEADER))]
    lines = [f"sweep of {', '.join(s.params)} for {s.model} on {s.gpu}, vLLM {s.vllm_version}; workload: {s.workload}",
             "  ".join(h.ljust(w) for h, w in zip(HEADER, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines.append(_verdict(s))
    if s.calibration is not None:
        lines.append(calibration_line(s.calibration))
    return "\n".join(lines) + "\n"


def _verdict(s: Sweep) -> str:
    if s.best is None:
        return "no point meets the SLOs" if s.slos_ms else "no point could be simulated"
    p = s.points[s.best]
    within = " within the SLOs" if s.slos_ms else ""
    return (f"best{within}: {_label(p.values)} ({p.metrics.output_throughput:,.0f} tok/s, "
            f"ITL P99 {ms(p.metrics.itl_p99_ms)}, TTFT P99 {ms(p.metrics.ttft_p99_ms)})")


def _markdown(s: Sweep) -> str:
    out = [f"# Sweep of {', '.join(code(p) for p in s.params)}", "",
           f"{md(s.model)} on {md(s.gpu)}, vLLM {md(s.vllm_version)}; workload: {md(s.workload)}.", "",
           "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(md(c) for c in r) + " |" for r in _rows(s)]
    out += ["", f"**{md(_verdict(s))}**", ""]
    if s.calibration is not None:
        out += [md(calibration_line(s.calibration)), ""]
    done = [p for p in s.points if p.metrics is not None]
    if len(done) > 1:
        labels = [_label(p.values).split("=", 1)[-1] if len(s.params) == 1 else _label(p.values) for p in done]
        out.append(mermaid(Chart(title="Output throughput (tok/s)", x_label=", ".join(s.params), y_label="tok/s",
                                 x=list(range(len(done))), x_categories=labels,
                                 bars=[Line("tok/s", [p.metrics.output_throughput for p in done])])))
        out.append("")
        out.append(mermaid(Chart(title="ITL P99 (ms)", x_label=", ".join(s.params), y_label="ms",
                                 x=list(range(len(done))), x_categories=labels,
                                 lines=[Line("ITL P99", [p.metrics.itl_p99_ms or 0 for p in done])])))
    return "\n".join(out) + "\n"


def sweep_chart_points(s: Sweep) -> tuple[Chart, list[tuple[float, float, str]]]:
    done = [p for p in s.points if p.metrics is not None]
    points = [(p.metrics.itl_p99_ms or 0.0, p.metrics.output_throughput,
               _label(p.values) + (" *" if p.pareto else "")) for p in done]
    chart = Chart(title="Throughput against ITL P99 (* = Pareto front)", x_label="ITL P99 (ms)",
                  y_label="output tok/s", x=[pt[0] for pt in points])
    return chart, points
