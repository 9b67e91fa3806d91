"""sweep: one or more numeric knobs over a grid, each point re-resolved, checked and simulated.

Reports throughput against ITL P99 (the trade-off chunked prefill's budget sets), the Pareto
front over (throughput up, ITL P99 down) and the best point within the SLOs.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Optional

from pydantic import BaseModel, Field

from ..calibration.select import CalibrationUse, describe_use
from ..errors import ReaderError
from .metrics import Metrics
from .scenario import Scenario
from .trials import RuleErrors, try_changes


class SweepPoint(BaseModel):
    values: dict[str, Any]
    status: str  # simulated, rejected_by_rules, does_not_start, invalid
    why_not: Optional[str] = None
    metrics: Optional[Metrics] = None
    pareto: bool = False
    within_slo: Optional[bool] = None


class Sweep(BaseModel):
    schema_version: int = 1
    source: str
    vllm_version: str
    model: Optional[str]
    gpu: Optional[str]
    params: dict[str, list[Any]]
    slos_ms: dict[str, float] = Field(default_factory=dict)
    points: list[SweepPoint]
    best: Optional[int] = None  # index into points: highest throughput within the SLOs (or overall)
    workload: str
    calibration: Optional[CalibrationUse] = None


def parse_params(specs: list[str], numeric_dests: Callable[[str], bool]) -> dict[str, list[Any]]:
    """`name=v1,v2,...` (repeatable) -> {dest: [values]}; names take dashes or underscores."""
    if not specs:
        raise ReaderError("give at least one --param NAME=V1,V2,...", key="--param")
    params: dict[str, list[Any]] = {}
    for spec in specs:
        name, eq, values = spec.partition("=")
        dest = name.strip().lstrip("-").replace("-", "_")
        if not eq or not values.strip():
            raise ReaderError(f"--param expects NAME=V1,V2,..., got '{spec}'.", key="--param")
        if not numeric_dests(dest):
            raise ReaderError(f"'{name}' is not a numeric vLLM setting of this version; sweep takes numeric knobs "
                              "such as max_num_batched_tokens, max_num_seqs, gpu_memory_utilization, "
                              "long_prefill_token_threshold, max_model_len.", key="--param")
        parsed = []
        for raw in values.split(","):
            raw = raw.strip()
            try:
                parsed.append(float(raw) if any(c in raw for c in ".eE") else int(raw))
            except ValueError:
                raise ReaderError(f"--param {dest}: '{raw}' is not a number.", key="--param") from None
        params[dest] = parsed
    return params


def run_sweep(base: Scenario, params: dict[str, list[Any]], rule_errors: RuleErrors,
              workers: Optional[int] = None, ray: Optional[str] = None,
              done: Optional[Callable[[int, int], None]] = None) -> Sweep:
    names = list(params)
    grid = [dict(zip(names, combo)) for combo in itertools.product(*(params[n] for n in names))]
    trials = try_changes(base, grid, rule_errors, workers, ray=ray, done=done)
    points = [SweepPoint(values=g, status=t.status, why_not=t.why_not, metrics=t.metrics) for g, t in zip(grid, trials)]
    _mark(points, base.slos_ms)
    r = base.resolved
    from ..sim.workload import describe
    return Sweep(source=r.deployment.source, vllm_version=r.version, model=r.model.id if r.model else None,
                 gpu=r.gpu.id if r.gpu else None, params=params, slos_ms=base.slos_ms, points=points,
                 best=_best(points), workload=describe(base.spec), calibration=describe_use(r))


def _mark(points: list[SweepPoint], slos_ms: dict[str, float]) -> None:
    done = [p for p in points if p.metrics is not None]
    for p in done:
        m = p.metrics
        dominated = any(q is not p and q.metrics.output_throughput >= m.output_throughput
                        and (q.metrics.itl_p99_ms or 0) <= (m.itl_p99_ms or 0)
                        and (q.metrics.output_throughput > m.output_throughput
                             or (q.metrics.itl_p99_ms or 0) < (m.itl_p99_ms or 0)) for q in done)
        p.pareto = not dominated
        if slos_ms:
            p.within_slo = all(
                (value is not None and value <= slos_ms[key])
                for key, value in (("ttft", m.ttft_p99_ms), ("itl", m.itl_p99_ms)) if key in slos_ms)


def _best(points: list[SweepPoint]) -> Optional[int]:
    candidates = [(i, p) for i, p in enumerate(points) if p.metrics is not None and p.within_slo is not False]
    if not candidates:
        return None
    # Equal throughput (to the token per second): the lower ITL P99 wins.
    return max(candidates, key=lambda ip: (round(ip[1].metrics.output_throughput),
                                           -(ip[1].metrics.itl_p99_ms or 0.0)))[0]
