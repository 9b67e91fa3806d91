"""Which of vLLM's three defaults limits this deployment, decided from evidence.

Each candidate limit gets a score in [0, 1] computed from the run's Evidence (preemptions, moments
where admission stopped and why, KV usage, queue time, budget fill, step-time spikes), never from
the config's values alone, and never from where the evidence came from: a simulation, a server's
metrics or a log give the same scores for the same figures. A figure a source cannot see is None
and its signal says so. The highest score names the verdict; every signal keeps the numbers that
produced it so the report can show them.
"""
from __future__ import annotations

import math
from typing import Literal, Optional

from pydantic import BaseModel, Field

from .model import Evidence

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
    # Defaults whose signal is above noise but whose relaxation, re-simulated, improved neither goodput nor
    # throughput: not named as the limit (issue 24).
    refuted: list[Limit] = Field(default_factory=list)


def decide(ev: Evidence, slos_ms: dict[str, float], compute_ridge_tokens: Optional[float],
           refuted: frozenset[str] = frozenset()) -> Verdict:
    """The limiting default, from evidence of any source (a simulation, a server's metrics, a log). refuted: the
    defaults whose relaxation was re-simulated and did not help; their signals stay in the evidence, but a
    default whose relaxation changes nothing is not what limits."""
    slo = _slo_checks(ev, slos_ms)
    signals = sorted([_kv(ev), _admission(ev), _budget_small(ev), _budget_large(ev, slo)], key=lambda s: -s.score)
    top = next((s for s in signals if s.score >= MIN_SCORE and s.limit not in refuted), None)
    if top is not None:
        return Verdict(limit=top.limit, default=DEFAULT_NAMES[top.limit], headline=_headline(top, ev), signals=signals,
                       slo=slo, refuted=sorted(refuted))
    verdict = _no_default(ev, signals, slo, compute_ridge_tokens, refuted)
    verdict.refuted = sorted(refuted)
    return verdict


def startup_verdict(reason: str, evidence: list[str]) -> Verdict:
    return Verdict(limit="startup", default=DEFAULT_NAMES["startup"], headline=reason,
                   signals=[Signal(limit="startup", score=1.0, evidence=evidence)])


# ---- signals -------------------------------------------------------------------------------

def _kv(ev: Evidence) -> Signal:
    blocked = ev.share(ev.samples_blocked_by_kv)
    # Preempted requests when the source knows them; else each preemption counts as one request.
    preempted = ev.preempted_requests if ev.preempted_requests is not None else min(ev.preemptions, ev.num_requests)
    preempted_share = preempted / max(ev.num_requests, 1)
    full_time = ev.fraction_time_kv_above_95pct or 0.0
    waited = ev.requests_waited
    score = max(min(1.0, preempted_share * 4), min(1.0, blocked * 2.5) if waited else 0.0,
                full_time * 0.8 if waited else 0.0)
    if ev.preempted_requests is not None:
        lines = [f"{ev.preemptions:,} preemptions ({ev.preempted_requests:,} of {ev.num_requests:,} requests; "
                 f"{ev.recomputed_tokens or 0:,} tokens recomputed)"]
    else:
        lines = [f"{ev.preemptions:,} preemptions in {ev.num_requests:,} finished requests"
                 + (f" ({ev.recomputed_tokens:,} tokens recomputed)" if ev.recomputed_tokens else "")]
    if ev.samples_blocked_by_kv is not None:
        lines.append(f"admission waited for free KV blocks in {blocked:.0%} of {ev.sample_unit}")
    if ev.kv_usage_peak is not None:
        lines.append(f"KV usage peaked at {100 * ev.kv_usage_peak:.0f}% (mean {100 * (ev.kv_usage_mean or 0):.0f}%), "
                     f"above 95% for {100 * full_time:.0f}% of the time")
    return Signal(limit="kv_memory", score=round(score, 3), evidence=lines)


def _admission(ev: Evidence) -> Signal:
    share = ev.share(ev.samples_seqs_full_blocks_free)
    score = min(1.0, share * 2.5) if ev.requests_waited else 0.0
    if ev.samples_seqs_full_blocks_free is not None:
        first = f"max_num_seqs was full while KV blocks were free in {share:.0%} of {ev.sample_unit}"
    else:
        first = "max_num_seqs is not known, so whether it was full cannot be told"
    lines = [first, _queue_line(ev),
             f"queueing time P99 {_pct(ev, 'queue.p99', ev.queue_time_ms.p99)}"]
    return Signal(limit="admission", score=round(score, 3), evidence=lines)


def _budget_small(ev: Evidence) -> Signal:
    share = ev.share(ev.samples_stopped_by_budget)
    full = ev.budget_full_share or 0.0
    score = min(1.0, share * 2.5) * (0.5 + 0.5 * full) if ev.requests_waited else 0.0
    budget = f"{ev.token_budget:,}" if ev.token_budget else "not known"
    lines = [f"the token budget ({budget}) stopped admission in {share:.0%} of {ev.sample_unit}"
             if ev.samples_stopped_by_budget is not None else f"the token budget ({budget}): when it stopped "
             "admission cannot be told",
             f"{full:.0%} of steps used the whole budget (mean fill {100 * (ev.budget_fill_mean or 0):.0f}%)",
             f"TTFT P99 {_pct(ev, 'ttft.p99', ev.ttft_ms.p99)}, of which queueing P99 {_pct(ev, 'queue.p99', ev.queue_time_ms.p99)}"]
    return Signal(limit="budget_small", score=round(score, 3), evidence=lines)


def _budget_large(ev: Evidence, slo: list[SloCheck]) -> Signal:
    itl = ev.itl_ms
    ratio = (itl.p99 / itl.median) if itl.p99 and itl.median else 1.0
    itl_missed = any(c.metric == "itl" and not c.met for c in slo)
    # A 2-3x tail is what any mixed batch shows; it is a limit only when it is large or breaks the SLO.
    weight = 1.0 if itl_missed or ratio >= 4.0 else 0.5
    st = ev.step_time
    if st is not None:
        prefill_share = (st.spike_mean_prefill_tokens or 0) / max(st.spike_mean_tokens or 1, 1)
        second = (f"the slowest 1% of steps ({_ms(st.p99_ms)} and up, median step {_ms(st.p50_ms)}) carried "
                  f"{st.spike_mean_prefill_tokens or 0:,.0f} prefill tokens on average ({100 * prefill_share:.0f}% of "
                  "their tokens)")
    else:
        # Which steps were slow is not known: prompt tokens can stall decodes only where requests run together,
        # and that is weaker evidence (half the weight).
        together = (ev.running_mean or 0.0) >= 2.0
        prefill_share = (ev.prompt_token_share or 0.0) if together else 0.0
        weight *= 0.5
        running = f"{ev.running_mean:.1f}" if ev.running_mean is not None else "an unknown number of"
        second = (f"prompt tokens are {100 * (ev.prompt_token_share or 0):.0f}% of the tokens computed, with "
                  f"{running} requests running on average (which steps were slow is not known)")
    score = max(0.0, min(1.0, (ratio - 2.0) / 4.0)) * prefill_share * weight
    if itl_missed and prefill_share > 0.5:
        score = max(score, 0.6)
    # from buckets (metrics) the ratio is of two interpolations: said so, beside the buckets themselves
    how = " interpolated within them" if "itl.p99" in ev.bucket_ranges else ""
    lines = [f"ITL P99 {_pct(ev, 'itl.p99', itl.p99)} against a median of {_pct(ev, 'itl.median', itl.median)} "
             f"({ratio:.1f}x{how})", second]
    return Signal(limit="budget_large", score=round(score, 3), evidence=lines)


def _no_default(ev: Evidence, signals: list[Signal], slo: list[SloCheck], ridge: Optional[float],
                refuted: frozenset[str] = frozenset()) -> Verdict:
    mean_tokens = ev.mean_tokens_per_step or 0.0
    bound: Optional[Literal["compute", "bandwidth"]] = None
    if ridge is not None:
        bound = "compute" if mean_tokens >= ridge else "bandwidth"
    steps = (f"steps are {bound}-bound at {mean_tokens:.0f} tokens per step" if bound
             else f"steps carry {mean_tokens:.0f} tokens on average")
    if not ev.requests_waited:
        limit: Limit = "load"
        headline = (f"no request ever waited: the offered load ({_rate(ev)}) is below what this deployment can "
                    f"serve; {steps}")
    else:
        limit = "gpu"
        why = (_refuted_words(refuted) if refuted else "requests queue, yet no scheduler limit binds")
        headline = (why + ": the GPU is the limit, "
                    + (f"{bound}-bound at {mean_tokens:.0f} tokens per step" if bound
                       else f"at {mean_tokens:.0f} tokens per step")
                    + (f" (the compute ridge is ~{ridge:.0f})" if ridge else ""))
    if ev.step_time is not None:
        step = (f"mean step {_ms(ev.step_time.p50_ms)} for {mean_tokens:.0f} tokens and "
                f"{ev.mean_seqs_per_step or 0:.0f} requests")
    else:  # without step times, a decode's inter-token latency is about one step
        step = (f"ITL median {_pct(ev, 'itl.median', ev.itl_ms.median)} (about one step) for {mean_tokens:.0f} tokens and "
                f"{ev.running_mean or 0:.0f} requests running")
    own = Signal(limit=limit, score=1.0 - max((s.score for s in signals if s.limit not in refuted), default=0.0),
                 evidence=[step, f"output throughput {_tokens_rate(ev)}"])
    return Verdict(limit=limit, default=DEFAULT_NAMES[limit], headline=headline, signals=[own] + signals, slo=slo,
                   bound=bound)


def _refuted_words(refuted: frozenset[str]) -> str:
    named = " and ".join(DEFAULT_NAMES[limit].split(":")[0] for limit in sorted(refuted))
    return (f"requests queue and {named} show{'s' if len(refuted) == 1 else ''} in the evidence, but relaxing "
            f"{'it' if len(refuted) == 1 else 'them'} (re-simulated below) raises neither goodput nor throughput")


def _headline(top: Signal, ev: Evidence) -> str:
    if top.limit == "kv_memory":
        return (f"the KV cache fills: {ev.preemptions:,} preemptions and admission waiting for blocks in "
                f"{ev.samples_blocked_by_kv or 0:,} {ev.sample_unit}")
    if top.limit == "admission":
        return (f"max_num_seqs caps the batch while KV blocks are free ({ev.samples_seqs_full_blocks_free or 0:,} "
                f"{ev.sample_unit}); requests queue (P99 {_pct(ev, 'queue.p99', ev.queue_time_ms.p99)})")
    if top.limit == "budget_small":
        return f"the token budget of {ev.token_budget or 0:,} holds prompts back; TTFT P99 is {_pct(ev, 'ttft.p99', ev.ttft_ms.p99)}"
    return (f"large prefill steps stall decoding: ITL P99 {_pct(ev, 'itl.p99', ev.itl_ms.p99)} against a median of "
            f"{_pct(ev, 'itl.median', ev.itl_ms.median)}")


def _slo_checks(ev: Evidence, slos_ms: dict[str, float]) -> list[SloCheck]:
    checks = []
    for metric, stats in (("ttft", ev.ttft_ms), ("itl", ev.itl_ms)):
        if metric in slos_ms:
            p99 = stats.p99
            checks.append(SloCheck(metric=metric, target_ms=slos_ms[metric], p99_ms=p99,
                                   met=p99 is not None and p99 <= slos_ms[metric]))
    return checks


def _queue_line(ev: Evidence) -> str:
    if ev.running_mean is None and ev.requests_queued is not None:
        return (f"{ev.requests_queued:,} of {ev.num_requests:,} requests queued (their queueing times: no snapshot "
                "saw the server busy)")
    return (f"running requests averaged {ev.running_mean or 0:.0f}; up to {ev.waiting_peak:,} waited "
            f"(mean {ev.waiting_mean or 0:.1f})")


def _pct(ev: Evidence, key: str, value: Optional[float]) -> str:
    """A percentile in words: the histogram bucket it lies in, when the source knows only that (metrics)."""
    bucket = ev.bucket_ranges.get(key)
    if bucket is None or value is None:
        return _ms(value)
    low, high = bucket
    if math.isinf(high):
        return f"above {_ms(low)}"
    return f"at most {_ms(high)}" if low == 0 else f"{_ms(low)} to {_ms(high)}"


def _tokens_rate(ev: Evidence) -> str:
    rate = ev.output_throughput or 0.0
    if ev.duration_low_s and ev.duration_s and ev.duration_low_s < ev.duration_s:
        return f"{rate:,.0f} to {rate * ev.duration_s / ev.duration_low_s:,.0f} tok/s"
    return f"{rate:,.0f} tok/s"


def _rate(ev: Evidence) -> str:
    """Requests per second, over the busy span's bounds when the source knows only those."""
    rate = ev.request_throughput or 0.0
    if ev.duration_low_s and ev.duration_s and ev.duration_low_s < ev.duration_s:
        return f"{rate:.2f} to {rate * ev.duration_s / ev.duration_low_s:.2f} req/s"
    return f"{rate:.2f} req/s"


def _ms(value: Optional[float]) -> str:
    if value is None:
        return "n/a"
    return f"{value / 1000:.2f} s" if value >= 10_000 else f"{value:.1f} ms"


def note_overload(verdict: Verdict, completed_per_s: float, offered: Optional[float]) -> None:
    """Open-loop arrivals (offered per second; None for a closed loop or a burst) faster than the simulated
    deployment completes requests: the queue grows for the whole run whatever the scheduler does, so say how far
    over."""
    if not offered or not completed_per_s:
        return
    factor = round(offered / completed_per_s, 2)
    if factor < 1.25:
        return
    verdict.overload = factor
    verdict.headline += (f". The offered load ({offered:.2f} req/s) is {factor:.1f}x what this deployment completes "
                         f"({completed_per_s:.2f} req/s): the queue grows for the whole run, and no scheduler "
                         f"setting closes a gap that wide; about {math.ceil(factor)}x the serving capacity (replicas, "
                         "or more GPUs per replica) would")
