"""Whether one simulated run at one load stands within the SLOs: the judgement a plan's replica search and a
diagnosis's load curve share (both ask "does this load fit?", so both must answer it the same way)."""
from __future__ import annotations

import math
from typing import Any, Optional

OVERLOADED = 1.1  # offered / completed requests per second above which a growing queue counts as overload


def p99(m: Any, metric: str) -> Optional[float]:
    return m.ttft_p99_ms if metric == "ttft" else m.itl_p99_ms


def overload(load: float, m: Any, evidence: Any) -> Optional[float]:
    """offered / completed requests per second where the queue grew (a tenth of the requests waited at
    once, and arrivals outran completions by a tenth); None where the replica keeps up. Offered is the rate the
    run's arrivals were drawn at (a short Poisson run strays from `load` by several percent either way), `load`
    where the run offers none. A stable run also completes a little slower than requests arrive, because it ends
    one drain after the last arrival."""
    ratio = (m.offered_rps or load) / m.request_throughput
    queue_grew = evidence is not None and evidence.waiting_peak >= 0.1 * max(m.completed, 1)
    return ratio if queue_grew and ratio >= OVERLOADED else None


def margin(m: Any, slos: dict[str, float], overload: Optional[float]) -> float:
    """min over the SLOs of target / P99 (>= 1 where every one is met); without SLOs, how far below the
    load the completions keep up."""
    ratios = []
    for metric, target in slos.items():
        tail = p99(m, metric)
        ratios.append(target / tail if tail else (math.inf if tail == 0 else 0.0))
    if not ratios:
        return OVERLOADED / overload if overload else 1.0
    return min(ratios)


def fits(m: Any, margin_: float, overload_: Optional[float]) -> bool:
    """Every SLO met, and the replica keeps up with its load."""
    return m.completed > 0 and margin_ >= 1.0 and overload_ is None
