"""Where nothing meets the SLOs: the nearest miss, the closest SLO, and what it would take."""
from __future__ import annotations

from typing import Any, Optional

from . import result as R
from ..diagnose.slo_fit import p99


def nearest_miss(plan: R.Plan, pinned: dict[str, Any]) -> R.Closest:
    done = [(i, p) for i, p in enumerate(plan.points) if p.metrics is not None and p.margin is not None]
    out = R.Closest()
    if done:
        out.point = max(done, key=lambda ip: (ip[1].margin, -ip[0]))[0]
    floors = [s.bounds for s in plan.shapes if s.bounds is not None]
    for metric, target in plan.slos_ms.items():
        p99s = [p99(p.metrics, metric) for _, p in done if p99(p.metrics, metric) is not None]
        floor = min((b.itl_floor_ms if metric == "itl" else b.ttft_floor_ms for b in floors), default=None)
        out.gaps.append(R.SloGap(metric=metric, target_ms=target, best_p99_ms=min(p99s) if p99s else None,
                                 floor_ms=floor, met_somewhere=any(x <= target for x in p99s)))
    out.closest_metric = _binding(plan.points[out.point], plan.slos_ms) if out.point is not None else None
    out.needs = _refused(plan, pinned) + [n for g in out.gaps for n in _gap(g)] + _together(out) + _load(plan)
    return out


def _binding(p: R.Point, slos: dict[str, float]) -> Optional[str]:
    """The SLO the nearest miss is furthest over: the one whose relaxing would bring it closest to a plan."""
    ratios = [(target / tail, metric) for metric, target in slos.items() if (tail := p99(p.metrics, metric))]
    return min(ratios)[1] if ratios else None


def _refused(plan: R.Plan, pinned: dict[str, Any]) -> list[str]:
    refused = [s for s in plan.shapes if s.outcome == "refused_by_rules"]
    if not refused or len(refused) < len(plan.shapes):
        return []
    return [f"a config vLLM {plan.vllm_version} accepts: it refuses every shape, because of a setting the config "
            f"fixes ({refused[0].reason}); change it, or let the plan search it with --vary "
            f"({', '.join(sorted(pinned)) or 'no pinned flags'})"]


def _gap(g: R.SloGap) -> list[str]:
    if g.floor_ms is not None and g.floor_ms > g.target_ms:
        return [f"{g.metric}: every shape searched has a floor above the target (lowest {g.floor_ms:,.1f} ms): a "
                "faster GPU, more tensor parallelism than --max-gpus/--gpus-per-node allow, or a target of at least "
                f"{g.floor_ms:,.0f} ms"]
    if not g.met_somewhere and g.best_p99_ms is not None:
        return [f"{g.metric}: the lowest P99 simulated is {g.best_p99_ms:,.1f} ms against {g.target_ms:g} ms; a "
                f"target of {g.best_p99_ms:,.0f} ms would be met by the nearest plan"]
    return []


def _together(c: R.Closest) -> list[str]:
    if len(c.gaps) > 1 and all(g.met_somewhere for g in c.gaps):
        return ["each target is met by some configuration searched, but none meets all at once; relaxing the "
                f"{c.closest_metric.upper()} target a little, or more GPUs, would close the gap"]
    return []


def _load(plan: R.Plan) -> list[str]:
    short = [s for s in plan.shapes if s.outcome == "needs_more_gpus"]
    capped = [s for s in plan.shapes if s.outcome == "slos_missed" and "exceed --max-gpus" in s.reason]
    if short:
        fewest = min(s.min_replicas * s.gpus for s in short)
        return [f"the load: by the rate bound at least {fewest} GPUs; raise --max-gpus (now {plan.max_gpus}) or "
                "lower --target-rate"]
    if capped:
        return [f"the load: {', '.join(f'{s.layout} on {s.gpu}' for s in capped[:3])} still missed the SLOs at the "
                f"most replicas --max-gpus {plan.max_gpus} allows; raise --max-gpus or lower the load"]
    return []
