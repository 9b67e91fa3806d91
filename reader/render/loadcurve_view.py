"""The load curve in Markdown (a table and a Mermaid chart) and as a chart file, for diagnose and capacity."""
from __future__ import annotations

from typing import Optional

from ..diagnose.loadcurve import LoadCurve, at_load
from .charts import Chart, Line, mermaid
from .markdown import md, number

# A tail far past its target would flatten every other line of the chart: the chart stops at this percentage
# (the table holds the figures).
CHART_TOP_PCT = 300.0
SHORT = {"kv_memory": "KV", "admission": "seqs", "budget_small": "budget", "budget_large": "prefill"}


def _ms(value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    return f"{value / 1000:,.1f} s" if value >= 10_000 else f"{value:,.0f} ms"


def section(c: LoadCurve, slos_ms: dict[str, float]) -> str:
    """`## Load curve`: the headline, the chart and the table of every load simulated."""
    own = at_load(c)
    lines = ["## Load curve", "",
             md(c.headline[:1].upper() + c.headline[1:]) + "." + (f" Its own load: {md(own)}." if own else ""),
             "", chart(c, slos_ms), "", legend(curve_chart(c, slos_ms)), "",
             _rule(c), "",
             f"| Load ({c.unit}) | Fits | Output tok/s | Completed req/s | " + ("Goodput req/s | " if slos_ms else "")
             + "TTFT P99 | ITL P99 | Preemptions | KV peak | Queue peak | Binding |",
             "|---|---|---|---|" + ("---|" if slos_ms else "") + "---|---|---|---|---|---|"]
    for p in c.points:
        m = p.metrics
        if m is None:
            lines.append(f"| {p.load:g} | no | {md(p.why_not or p.status)} |" + " |" * (7 + bool(slos_ms)))
            continue
        mark = " (capacity)" if p.load == c.capacity else (" (own load)" if c.offered == p.load else "")
        lines.append(f"| {p.load:g}{mark} | {'yes' if p.fits else 'no'} | {number(m.output_throughput)} "
                     f"| {m.request_throughput:.3g} | "
                     + (f"{m.goodput_rps or 0:.3g} | " if slos_ms else "")
                     + f"{_ms(m.ttft_p99_ms)} | {_ms(m.itl_p99_ms)} | "
                     f"{number(m.preemptions)} | "
                     + (f"{p.kv_usage_peak_pct:.0f}%" if p.kv_usage_peak_pct is not None else "n/a")
                     + f" | {number(p.waiting_peak)} | {', '.join(SHORT[b] for b in p.binding) or 'none'} |")
    return "\n".join(lines)


def _rule(c: LoadCurve) -> str:
    fits = ("A load fits when the replica keeps up with it and meets every SLO" if c.rule == "slos" else
            "A load fits up to the knee: while P99 TTFT and P99 end-to-end latency have grown, since the lightest "
            "load simulated, by no more than output throughput has (no SLOs given; give `--slo-ttft-p99` / "
            "`--slo-itl-p99` for a capacity within them)")
    return (f"{fits}. Each load was found by a search (bracket, then bisection) and simulated with "
            f"{'that many clients' if c.kind == 'clients' else 'Poisson arrivals at that rate'}; a default binds where "
            "its signal in the verdict's scoring is above noise (KV: preemptions or admission waiting for blocks; "
            "seqs: max_num_seqs full with blocks free; budget: steps whose token budget is full while prompts wait; "
            "prefill: prefill steps stalling decodes).")


def legend(ch: Chart) -> str:
    marks = "; the x labels mark where each default first binds (KV, seqs, budget, prefill) and the capacity (cap)"
    return "Lines, in order: " + "; ".join(line.name for line in ch.lines) + marks + "."


def chart(c: LoadCurve, slos_ms: dict[str, float]) -> str:
    return mermaid(curve_chart(c, slos_ms))


def curve_chart(c: LoadCurve, slos_ms: dict[str, float]) -> Chart:
    """Throughput and the P99 tails against load, each as a percentage of its yardstick (the throughput where it
    levels off; the SLO, or the tail at the capacity without one), so one axis holds them; the SLO line is 100%."""
    done = [p for p in c.points if p.metrics is not None]
    at_cap = next((p.metrics for p in done if p.load == c.capacity), done[0].metrics if done else None)

    def scaled(values: list[Optional[float]], unit: Optional[float]) -> list[float]:
        return [min(CHART_TOP_PCT, 100 * (v or 0.0) / unit) if unit else 0.0 for v in values]

    tails = []
    for key, field in (("ttft", "ttft_p99_ms"), ("itl", "itl_p99_ms")):
        unit = slos_ms.get(key) or (getattr(at_cap, field) if at_cap is not None else None)
        yardstick = "of its SLO" if key in slos_ms else "of its value at capacity"
        tails.append(Line(f"{key.upper()} P99, % {yardstick}", scaled([getattr(p.metrics, field) for p in done], unit)))
    lines = [Line("output tok/s, % of where it levels off",
                  scaled([p.metrics.output_throughput for p in done], c.saturation_output_tok_s))] + tails
    if slos_ms:
        lines.append(Line("SLO", [100.0] * len(done)))
    first = {b.load: b.limit for b in reversed(c.order)}
    labels = [f"{p.load:g}" + (f" {SHORT[first[p.load]]}" if p.load in first else "")
              + (" cap" if p.load == c.capacity else "") for p in done]
    return Chart(title=f"Load curve: throughput and P99 tails against load ({c.unit})", x_label=f"load ({c.unit})",
                 y_label="% of yardstick", x=[p.load for p in done], lines=lines,
                 x_categories=labels)

