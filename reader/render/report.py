"""Render a Diagnosis: Markdown (Jinja2), JSON (versioned schema) and SARIF."""
from __future__ import annotations

from typing import Any, Optional

from ..diagnose.report import Diagnosis
from ..evidence.verdict import DEFAULT_NAMES
from .calibration_view import calibration_line
from .charts import Chart, Line, mermaid, thin
from .evidence_view import view_helpers
from .formats import render_as
from ..diagnose.loadcurve import LoadCurve, amount, at_load, within
from .loadcurve_view import section as curve_section
from .markdown import code, md, render

def render_diagnosis(d: Diagnosis, fmt: str = "markdown") -> str:
    from .diagnosis_sarif import sarif
    return render_as(fmt, d, markdown, sarif)


def ms(value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    return f"{value / 1000:,.1f} s" if value >= 10_000 else f"{value:,.1f} ms"


def changes_text(changes: dict[str, Any]) -> str:
    return ", ".join(code(f"{k}={_value(v)}") for k, v in changes.items())


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def verdict_paragraph(d: Diagnosis) -> str:
    """The one-paragraph verdict that opens the report: at the user's own load when one was given; without one,
    the capacity and the first default to bind lead, and the verdict is said to be at the preset's load."""
    v = d.verdict
    where = f"{d.model_given or d.model} on {d.gpu_count} x {d.gpu}, vLLM {d.vllm_version}"
    curve = d.load_curve
    own = at_load(curve) if curve is not None else None
    if curve is not None and not curve.given:
        text = (f"**Capacity: {md(_capacity_words(curve))}.** {md(where)}: {md(curve.headline)}. "
                f"At the {md(_assumed(d))} (no load given), the verdict would be **{md(v.default)}**: "
                f"{md(v.headline.rstrip('.'))}.")
    else:
        text = (f"**Verdict: {md(v.default)}.** {md(where)}: " + (f"{md(own)}: " if own else "")
                + f"{md(v.headline.rstrip('.'))}.")
    failed = [c for c in v.slo if not c.met]
    if failed:
        text += " Misses its " + " and ".join(f"{c.metric.upper()} P99 target ({c.target_ms:.0f} ms, simulated {ms(c.p99_ms)})"
                                             for c in failed) + "."
    rec = d.recommendation
    if rec is not None and rec.metrics is not None:
        base = d.baseline
        text += f" Recommended: {changes_text(rec.changes)} ({md(rec.reason)})"
        if base is not None and base.completed:
            text += (f": output {base.output_throughput:,.0f} -> {rec.metrics.output_throughput:,.0f} tok/s, "
                     f"TTFT P99 {ms(base.ttft_p99_ms)} -> {ms(rec.metrics.ttft_p99_ms)}, "
                     f"ITL P99 {ms(base.itl_p99_ms)} -> {ms(rec.metrics.itl_p99_ms)} (simulated)")
        else:
            text += f": starts, and serves {rec.metrics.output_throughput:,.0f} tok/s (simulated)"
        text += "."
    elif d.verdict.limit not in ("load",) and d.whatifs:
        text += " " + (_tradeoff_sentence(d) or "None of the simulated changes improved on the configuration as it is.")
    if curve is not None and curve.given:
        text += f" Across load: {md(curve.headline)}."
    return text


def _capacity_words(c: LoadCurve) -> str:
    if c.capacity is None:
        return "no load simulated fits"
    first = c.first_binding()
    return (f"{'at least ' if c.capacity_is_lower_bound else 'about '}{amount(c.capacity, c)} per replica "
            + within(c) + (f", first limit {DEFAULT_NAMES[first.limit].split(':')[0]}" if first else ""))


def _assumed(d: Diagnosis) -> str:
    return f"assumed {d.workload.description}" if d.workload is not None else "assumed load"


TRADE_MARGIN = 0.05  # a tail this much lower counts as a gain; noise below it is not a trade


def _tradeoff_sentence(d: Diagnosis) -> Optional[str]:
    """Without SLOs nothing says which tail matters: changes that lower one latency tail and raise the other
    are named as such, with the way to choose between them, instead of "none improved"."""
    base = d.baseline
    if d.slos_ms or base is None or not base.completed:
        return None
    tails = (("ITL", "itl_p99_ms", "--slo-itl-p99"), ("TTFT", "ttft_p99_ms", "--slo-ttft-p99"))
    simulated = [w for w in d.whatifs if w.status == "simulated" and w.metrics is not None]
    for name, key, option in tails:
        before = getattr(base, key)
        if not before:
            continue
        gains = [(after, w) for w in simulated
                 if (after := getattr(w.metrics, key)) is not None and after < before * (1 - TRADE_MARGIN)]
        if gains:
            lowest, best = min(gains, key=lambda g: g[0])
            verb = "lowers" if len(gains) == 1 else "lower"
            return (f"No change is better on every figure; {len(gains)} {verb} {name} P99 at a cost elsewhere "
                    f"(best: {changes_text(best.changes)}, {ms(before)} -> {ms(lowest)}; see "
                    f"Recommendations): give your target ({code(option)}) and the change that best meets it is "
                    "recommended.")
    return None


def _kv_chart(d: Diagnosis) -> Optional[str]:
    if d.series is None or len(d.series.t_s) < 2:
        return None
    t, kv = thin(d.series.t_s, d.series.kv_usage_pct)
    _, running = thin(d.series.t_s, d.series.running)
    return mermaid(Chart(title="KV cache usage (%) and running requests over time", x_label="time (s)",
                         y_label="KV usage % / running", x=t,
                         lines=[Line("KV usage %", kv), Line("running", running)]))


def _whatif_chart(d: Diagnosis, simulated: list) -> Optional[str]:
    if not simulated or d.baseline is None:
        return None
    labels = ["as configured"] + [f"#{i + 1}" for i in range(len(simulated))]
    values = [d.baseline.output_throughput] + [w.metrics.output_throughput for w in simulated]
    return mermaid(Chart(title="Output throughput (tok/s) per change", x_label="change", y_label="tok/s",
                         x=list(range(len(labels))), bars=[Line("tok/s", values)], x_categories=labels))


def markdown(d: Diagnosis) -> str:
    simulated = [w for w in d.whatifs if w.status == "simulated" and w.metrics is not None]
    refused = [w for w in d.whatifs if w.status != "simulated"]
    return render("report.md.j2", d=d, verdict_paragraph=verdict_paragraph(d), names=DEFAULT_NAMES,
                  kv_chart=_kv_chart(d), whatif_chart=_whatif_chart(d, simulated), simulated=simulated,
                  refused=refused, ms=ms, changes=changes_text, calibration_line=calibration_line,
                  curve_section=curve_section(d.load_curve, d.slos_ms) if d.load_curve else None, **view_helpers())
