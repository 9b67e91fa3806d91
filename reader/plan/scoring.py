"""How one simulation stands against the SLOs: margin, overload, the order of candidates, the Pareto front."""
from __future__ import annotations

import math
from typing import Any

from ..diagnose.slo_fit import OVERLOADED, fits, margin, overload, p99
from . import result as R

def judge(p: R.Point, kind: str, slos: dict[str, float], evidence: Any) -> R.Point:
    """Fill in a simulated point's overload (rates), margin and whether it meets the SLOs: every SLO met, and
    the replica keeps up with its load."""
    m = p.metrics
    if m is None:
        return p
    if kind in ("rate", "trace") and m.request_throughput:
        p.overload = overload(p.load, m, evidence)
    p.margin = margin(m, slos, p.overload)
    p.meets_slos = fits(m, p.margin, p.overload)
    return p


def score(p: R.Point) -> tuple:
    """At one load: meeting the SLOs first, then the margin to them, then output throughput."""
    m = p.metrics
    return (bool(p.meets_slos), round(p.margin or 0.0, 4), round(m.output_throughput, 1) if m else 0.0)


def miss_words(p: R.Point, slos: dict[str, float]) -> str:
    if p.metrics is None:
        return p.why_not or p.status
    parts = [f"{metric.upper()} P99 {p99(p.metrics, metric):,.0f} ms > {target:g} ms" for metric, target in slos.items()
             if p99(p.metrics, metric) is not None and p99(p.metrics, metric) > target]
    if p.overload and p.overload >= OVERLOADED:
        parts.append(f"arrivals {p.overload:.1f}x what it completes")
    return ", ".join(parts) or "the SLOs"


def mark_pareto(points: list[R.Point]) -> None:
    """Pareto front over output tok/s per GPU (up), ITL P99 and TTFT P99 (down)."""
    done = [p for p in points if p.metrics is not None and p.metrics.completed and p.output_per_gpu is not None]

    def objectives(p: R.Point) -> tuple[float, float, float]:
        return (-p.output_per_gpu, p.metrics.itl_p99_ms or math.inf, p.metrics.ttft_p99_ms or math.inf)

    for p in done:
        mine = objectives(p)
        p.pareto = not any(all(a <= b for a, b in zip(objectives(q), mine)) and objectives(q) != mine for q in done)
