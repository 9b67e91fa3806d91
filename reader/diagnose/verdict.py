"""Which of vLLM's three defaults limits this deployment, decided from what the simulation saw.

Each candidate limit gets a score in [0, 1] computed from the run's evidence (preemptions, steps
where admission stopped and why, KV usage, queue time, budget fill, step-time spikes), never from
the config's values alone. The highest score names the verdict; every signal keeps the numbers
that produced it so the report can show them.
"""
from __future__ import annotations

import math
from typing import Literal, Optional

from pydantic import BaseModel, Field

from ..capacity.api import Capacity
from ..sim.api import SimResult

Limit = Literal["startup", "kv_memory", "admission", "budget_small", "budget_large", "gpu", "load"]

DEFAULT_NAMES: dict[str, str] = {
    "startup": "none: vLLM would not start",
    "kv_memory": "PagedAttention: the KV-cache capacity",
    "admission": "continuous batching: admission capped by max_num_seqs",
    "budget_small": "chunked prefill: a token budget too small for the prompts",
    "budget_large": "chunked prefill: prefill steps too large for smooth decoding",
    "gpu": "none of the three: the GPU itself",
    "load": "none of the three: the offered load is below capacity",
}

# A signal below this is noise: the verdict falls through to the GPU (or the load).
MIN_SCORE = 0.15


class Signal(BaseModel):
    limit: Limit
    score: float = Field(ge=0, le=1)
    evidence: list[str] = Field(default_factory=list)


class SloCheck(BaseModel):
    metric: str  # "ttft" or "itl"
    target_ms: float
    p99_ms: Optional[float]
    met: bool


class Verdict(BaseModel):
    limit: Limit
    default: str
    headline: str
    signals: list[Signal]
    slo: list[SloCheck] = Field(default_factory=list)
    bound: Optional[Literal["compute", "bandwidth"]] = None
    # Open-loop arrivals faster than the deployment completes requests: offered / completed req/s.
    overload: Optional[float] = None


def decide(result: SimResult, capacity: Capacity, slos_ms: dict[str, float],
           compute_ridge_tokens: Optional[float]) -> Verdict:
    ev = result.evidence
    steps = max(ev.num_steps, 1)
    slo = _slo_checks(result, slos_ms)
    signals = sorted([_kv(result, steps), _admission(result, steps), _budget_small(result, steps),
                      _budget_large(result, slo)], key=lambda s: -s.score)
    top = signals[0]
    if top.score >= MIN_SCORE:
        return Verdict(limit=top.limit, default=DEFAULT_NAMES[top.limit], headline=_headline(top, result), signals=signals,
                       slo=slo)
    return _no_default(result, signals, slo, compute_ridge_tokens)


def startup_verdict(reason: str, evidence: list[str]) -> Verdict:
    return Verdict(limit="startup", default=DEFAULT_NAMES["startup"], headline=reason,
                   signals=[Signal(limit="startup", score=1.0, evidence=evidence)])


# ---- signals -------------------------------------------------------------------------------

def _waiting(result: SimResult) -> bool:
    return result.evidence.waiting_peak > 0


def _kv(result: SimResult, steps: int) -> Signal:
    ev = result.evidence
    blocked = ev.steps_admission_blocked_by_kv / steps
    preempted_share = result.preempted_requests / max(result.num_requests, 1)
    full_time = ev.fraction_time_kv_above_95pct or 0.0
    score = max(min(1.0, preempted_share * 4), min(1.0, blocked * 2.5) if _waiting(result) else 0.0,
                full_time * 0.8 if _waiting(result) else 0.0)
    lines = [f"{result.preemptions:,} preemptions ({result.preempted_requests:,} of {result.num_requests:,} requests; "
             f"{result.recomputed_tokens:,} tokens recomputed)",
             f"admission waited for free KV blocks in {blocked:.0%} of steps",
             f"KV usage peaked at {100 * (ev.kv_usage_peak or 0):.0f}% (mean {100 * (ev.kv_usage_mean or 0):.0f}%), "
             f"above 95% for {100 * full_time:.0f}% of the time"]
    return Signal(limit="kv_memory", score=round(score, 3), evidence=lines)


def _admission(result: SimResult, steps: int) -> Signal:
    ev = result.evidence
    share = ev.steps_seqs_full_blocks_free / steps
    score = min(1.0, share * 2.5) if _waiting(result) else 0.0
    lines = [f"max_num_seqs was full while KV blocks were free in {share:.0%} of steps",
             f"running requests averaged {ev.running_mean or 0:.0f}; up to {ev.waiting_peak:,} waited "
             f"(mean {ev.waiting_mean or 0:.1f})",
             f"queueing time P99 {_ms(ev.queue_time_ms.p99)}"]
    return Signal(limit="admission", score=round(score, 3), evidence=lines)


def _budget_small(result: SimResult, steps: int) -> Signal:
    ev = result.evidence
    stops = ev.admission_stops.get("token_budget", 0) + ev.admission_stops.get("prompt_exceeds_budget", 0)
    share = stops / steps
    full = ev.steps_budget_full / steps
    score = min(1.0, share * 2.5) * (0.5 + 0.5 * full) if _waiting(result) else 0.0
    lines = [f"the token budget ({ev.token_budget:,}) stopped admission in {share:.0%} of steps",
             f"{full:.0%} of steps used the whole budget (mean fill {100 * (ev.budget_fill_mean or 0):.0f}%)",
             f"TTFT P99 {_ms(result.ttft_ms.p99)}, of which queueing P99 {_ms(result.queue_ms.p99)}"]
    return Signal(limit="budget_small", score=round(score, 3), evidence=lines)


def _budget_large(result: SimResult, slo: list[SloCheck]) -> Signal:
    st = result.evidence.step_time
    itl = result.itl_ms
    ratio = (itl.p99 / itl.median) if itl.p99 and itl.median else 1.0
    prefill_share = (st.spike_mean_prefill_tokens or 0) / max(st.spike_mean_tokens or 1, 1)
    itl_missed = any(c.metric == "itl" and not c.met for c in slo)
    # A 2-3x tail is what any mixed batch shows; it is a limit only when it is large or breaks the SLO.
    weight = 1.0 if itl_missed or ratio >= 4.0 else 0.5
    score = max(0.0, min(1.0, (ratio - 2.0) / 4.0)) * prefill_share * weight
    if itl_missed and prefill_share > 0.5:
        score = max(score, 0.6)
    lines = [f"ITL P99 {_ms(itl.p99)} against a median of {_ms(itl.median)} ({ratio:.1f}x)",
             f"the slowest 1% of steps ({_ms(st.p99_ms)} and up, median step {_ms(st.p50_ms)}) carried "
             f"{st.spike_mean_prefill_tokens or 0:,.0f} prefill tokens on average ({100 * prefill_share:.0f}% of their "
             "tokens)"]
    return Signal(limit="budget_large", score=round(score, 3), evidence=lines)


def _no_default(result: SimResult, signals: list[Signal], slo: list[SloCheck],
                ridge: Optional[float]) -> Verdict:
    ev = result.evidence
    mean_tokens = ev.step_time.mean_tokens or 0.0
    bound = "compute" if ridge is not None and mean_tokens >= ridge else "bandwidth"
    underloaded = ev.waiting_peak == 0
    if underloaded:
        limit: Limit = "load"
        headline = (f"no request ever waited: the offered load ({result.request_throughput:.2f} req/s) is below what "
                    f"this deployment can serve; steps are {bound}-bound at {mean_tokens:.0f} tokens per step")
    else:
        limit = "gpu"
        headline = (f"requests queue, yet no scheduler limit binds: the GPU is the limit, {bound}-bound at "
                    f"{mean_tokens:.0f} tokens per step" + (f" (the compute ridge is ~{ridge:.0f})" if ridge else ""))
    own = Signal(limit=limit, score=1.0 - max(s.score for s in signals),
                 evidence=[f"mean step {_ms(ev.step_time.p50_ms)} for {mean_tokens:.0f} tokens and "
                           f"{ev.step_time.mean_seqs or 0:.0f} requests",
                           f"output throughput {result.output_throughput:,.0f} tok/s"])
    return Verdict(limit=limit, default=DEFAULT_NAMES[limit], headline=headline, signals=[own] + signals, slo=slo,
                   bound=bound)


def _headline(top: Signal, result: SimResult) -> str:
    ev = result.evidence
    if top.limit == "kv_memory":
        return (f"the KV cache fills: {result.preemptions:,} preemptions and admission waiting for blocks in "
                f"{ev.steps_admission_blocked_by_kv:,} steps")
    if top.limit == "admission":
        return (f"max_num_seqs caps the batch while KV blocks are free ({ev.steps_seqs_full_blocks_free:,} steps); "
                f"requests queue (P99 {_ms(ev.queue_time_ms.p99)})")
    if top.limit == "budget_small":
        return f"the token budget of {ev.token_budget:,} holds prompts back; TTFT P99 is {_ms(result.ttft_ms.p99)}"
    return (f"large prefill steps stall decoding: ITL P99 {_ms(result.itl_ms.p99)} against a median of "
            f"{_ms(result.itl_ms.median)}")


def _slo_checks(result: SimResult, slos_ms: dict[str, float]) -> list[SloCheck]:
    checks = []
    for metric, stats in (("ttft", result.ttft_ms), ("itl", result.itl_ms)):
        if metric in slos_ms:
            p99 = stats.p99
            checks.append(SloCheck(metric=metric, target_ms=slos_ms[metric], p99_ms=p99,
                                   met=p99 is not None and p99 <= slos_ms[metric]))
    return checks


def _ms(value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    return f"{value / 1000:.2f} s" if value >= 10_000 else f"{value:.1f} ms"


def note_overload(verdict: Verdict, result: SimResult, workload) -> None:
    """Open-loop arrivals (no concurrency cap) faster than the simulated deployment completes
    requests: the queue grows for the whole run whatever the scheduler does, so say how far over."""
    arrival = workload.arrival
    if workload.max_concurrency is not None or arrival.size < 2 or not result.request_throughput:
        return
    span = float(arrival[-1] - arrival[0])
    if span <= 0:
        return  # everything at once: a burst, not a rate
    offered = (arrival.size - 1) / span
    factor = round(offered / result.request_throughput, 2)
    if factor < 1.25:
        return
    verdict.overload = factor
    verdict.headline += (f". The offered load ({offered:.2f} req/s) is {factor:.1f}x what this deployment completes "
                         f"({result.request_throughput:.2f} req/s): the queue grows for the whole run, and no scheduler "
                         f"setting closes a gap that wide; about {math.ceil(factor)}x the serving capacity (replicas, "
                         "or more GPUs per replica) would")
