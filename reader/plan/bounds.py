"""What a replica shape can do at best, from the capacity and step-time models alone (no simulation).

Three bounds let a plan drop a shape, or start its replica search high enough, before simulating:

- the ITL floor: one step with a single decode of the shortest context. Every gap between two
  tokens spans at least one step, so no ITL P99 is below it (the weight read alone sets it).
- the TTFT floor: the workload's P99 uncached prompt prefilled alone, in one step. Each request's
  TTFT is at least its own prefill's time, so the P99 of TTFT is at least this.
- the most requests per second one replica could complete: its decode batch is held to what the KV
  cache holds, what max_num_seqs allows and what the ITL target tolerates; each request then costs
  its prompt at the marginal prefill cost per token plus its output at the batch's cost per token.
  The figure is made optimistic on purpose (OPTIMISM), so it never drops a shape that would work.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from pydantic import BaseModel

from ..batch import StepBatch

# The bound on requests per second is multiplied by this: the step-time model's figures are estimates,
# and a bound that is too tight would drop a shape that works.
OPTIMISM = 1.25
PREFILL_CHUNK = 8192


class Bounds(BaseModel):
    itl_floor_ms: float
    ttft_floor_ms: float
    kv_requests: float  # requests of the workload's mean footprint the KV cache holds at once
    batch: int  # the decode batch the rate bound assumes
    max_rate: float  # requests per second one replica completes at best (already made optimistic)


def shape_bounds(scenario: Any, slos_ms: dict[str, float], seqs_cap: int) -> Bounds:
    """Bounds for a scenario that starts. seqs_cap: the largest max_num_seqs the plan may try."""
    wl, st = scenario.workload, scenario.step_time
    prompt, output = wl.prompt_len.astype(float), wl.output_len.astype(float)
    cached = wl.prefix_len.astype(float) if scenario.settings.enable_prefix_caching else np.zeros_like(prompt)
    uncached = np.maximum(prompt - cached, 1.0)
    itl_floor = _step(st, [1], [int(prompt.min())])
    ttft_floor = _step(st, [_p99_uncached(scenario)], [0])
    kv_tokens = float(scenario.capacity.gpu_kv_cache_tokens.value)
    footprint = float((prompt + output - cached).mean())
    kv_requests = kv_tokens / max(footprint, 1.0)
    # The context a decode step sees, averaged over the steps (a request decodes once per output token).
    decode_context = float((output * (prompt + output / 2)).sum() / max(output.sum(), 1.0))
    batch = max(1, min(int(kv_requests), seqs_cap))
    if "itl" in slos_ms:
        batch = _largest_batch_within(st, batch, decode_context, slos_ms["itl"] / 1000.0)
    per_token_decode = _step(st, [1] * batch, [int(decode_context)] * batch) / batch
    chunk = _step(st, [PREFILL_CHUNK], [0])
    per_token_prefill = max(chunk - _step(st, [1], [0]), 0.0) / (PREFILL_CHUNK - 1)
    seconds = float(uncached.mean()) * per_token_prefill + float(output.mean()) * per_token_decode
    return Bounds(itl_floor_ms=itl_floor * 1000, ttft_floor_ms=ttft_floor * 1000, kv_requests=kv_requests,
                  batch=batch, max_rate=OPTIMISM / max(seconds, 1e-9))


def below_floor(b: Bounds, slos_ms: dict[str, float]) -> Optional[str]:
    """Why no setting of this shape can meet the SLOs, or None."""
    if "itl" in slos_ms and b.itl_floor_ms > slos_ms["itl"]:
        return (f"ITL floor {b.itl_floor_ms:.1f} ms > ITL P99 target {slos_ms['itl']:g} ms: one decode step of one "
                "request takes that long on this shape (the weights are read every step)")
    if "ttft" in slos_ms and b.ttft_floor_ms > slos_ms["ttft"]:
        return (f"TTFT floor {b.ttft_floor_ms:,.0f} ms > TTFT P99 target {slos_ms['ttft']:g} ms: the workload's "
                "P99 prompt alone takes that long to prefill on this shape")
    return None


def _step(st: Any, new: list[int], past: list[int]) -> float:
    return float(st(StepBatch(np.asarray(new, dtype=np.int64), np.asarray(past, dtype=np.int64), len(new))))


def _largest_batch_within(st: Any, high: int, context: float, seconds: float) -> int:
    """The largest decode batch (1..high) whose step takes at most `seconds` (1 when none does)."""
    lo, hi = 1, high
    if _step(st, [1] * hi, [int(context)] * hi) <= seconds:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _step(st, [1] * mid, [int(context)] * mid) <= seconds:
            lo = mid
        else:
            hi = mid
    return lo


def min_replicas(b: Bounds, load_needed: float, integral: bool) -> int:
    """The fewest replicas the rate bound allows (for rates; a closed loop or batch starts at one)."""
    if integral:
        return 1
    return max(1, math.ceil(load_needed / b.max_rate - 1e-9))


def useful_budgets(scenario: Any, b: Bounds, slos_ms: dict[str, float], budgets: tuple[int, ...]) -> list[int]:
    """The token budgets worth trying on a shape, narrowed by physics in both directions:

    - TTFT: a prompt of L uncached tokens needs ceil(L / budget) steps, each at least the ITL floor, so a
      budget that makes the P99 prompt's steps alone exceed the TTFT target cannot meet it (a sound cut).
    - ITL: a step carrying `budget` prefill tokens stalls every decode in it; budgets above the first one
      whose prefill step alone exceeds the ITL target only make such steps longer, and are not tried."""
    out = list(budgets)
    if "ttft" in slos_ms:
        longest = _p99_uncached(scenario)
        out = [x for x in out if math.ceil(longest / x) * b.itl_floor_ms <= slos_ms["ttft"]]
    if "itl" in slos_ms:
        over = [x for x in out if _step(scenario.step_time, [x], [0]) * 1000 > slos_ms["itl"]]
        out = [x for x in out if not over or x <= over[0]]
    return out


def useful_seqs(b: Bounds, seqs: tuple[int, ...]) -> list[int]:
    """max_num_seqs values worth trying: the KV cache bounds concurrency (twice its requests of mean footprint,
    as running requests hold half their output on average), so values past the first that covers it admit
    no more requests at once."""
    covering = [s for s in seqs if s >= 2 * b.kv_requests]
    return [s for s in seqs if not covering or s <= covering[0]]


def _p99_uncached(scenario: Any) -> int:
    wl = scenario.workload
    prompt = wl.prompt_len.astype(float)
    cached = wl.prefix_len.astype(float) if scenario.settings.enable_prefix_caching else np.zeros_like(prompt)
    return int(np.percentile(np.maximum(prompt - cached, 1.0), 99))
