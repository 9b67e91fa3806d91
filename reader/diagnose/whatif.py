"""Candidate changes for what limits the deployment, each re-simulated on the same requests.

A candidate is a set of vLLM flags, tried by `trials.try_changes`: resolved again (so dependent
defaults move), checked against the version's rules (a change vLLM would refuse is never
recommended), sized by the capacity model (a change that would not start is dropped), simulated.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np
from pydantic import BaseModel

from ..batch import StepBatch
from .metrics import Metrics
from .scenario import Scenario
from .trials import RuleErrors, Status, try_changes
from ..evidence.verdict import MIN_SCORE, Verdict


class Candidate(BaseModel):
    changes: dict[str, Any]
    reason: str
    addresses: str  # the limit it targets


class WhatIf(Candidate):
    status: Status
    why_not: Optional[str] = None
    metrics: Optional[Metrics] = None
    score: Optional[float] = None  # objective, relative to the baseline (1.0 = no change)
    recommended: bool = False


# ---- candidates -------------------------------------------------------------------------------

def candidates(base: Scenario, verdict: Verdict) -> list[Candidate]:
    """Changes worth simulating, for the verdict's limit and any other signal that is not noise."""
    limits = [verdict.limit] + [s.limit for s in verdict.signals if s.score >= MIN_SCORE and s.limit != verdict.limit]
    found: list[Candidate] = []
    for limit in limits:
        found += _FOR_LIMIT.get(limit, _for_gpu)(base)
    return _unique(base, found + _for_front_end(base))


def _for_kv(base: Scenario) -> list[Candidate]:
    r, cap = base.resolved, base.capacity
    v = r.value
    out = []
    util = v("gpu_memory_utilization")
    pinned = v("num_gpu_blocks_override")
    if pinned:  # the override fixes the block count: more memory or smaller entries add no block
        out.append(Candidate(changes={"num_gpu_blocks_override": 2 * pinned},
                             reason="twice the KV blocks the override pins", addresses="kv_memory"))
    elif v("kv_cache_memory_bytes") is None and util is not None and util < 0.95:
        out.append(Candidate(changes={"gpu_memory_utilization": round(min(0.95, util + 0.04), 2)},
                             reason="more of the GPU's memory for the KV cache", addresses="kv_memory"))
    if _fp8_kv_possible(r) and not pinned:
        out.append(Candidate(changes={"kv_cache_dtype": "fp8"}, reason="an fp8 KV cache holds twice the tokens",
                             addresses="kv_memory"))
    err = cap.startup_error
    if err is not None and err.estimated_max_model_len and err.estimated_max_model_len >= 1024:
        fits = err.estimated_max_model_len // 1024 * 1024
        out.append(Candidate(changes={"max_model_len": fits},
                             reason=f"the longest length the KV cache holds is {err.estimated_max_model_len:,} "
                                    "tokens", addresses="kv_memory"))
    longest = base.workload.longest_request
    target = int(math.ceil(longest / 1024) * 1024)
    if v("max_model_len") not in (None, -1) and target < v("max_model_len"):
        out.append(Candidate(changes={"max_model_len": target},
                             reason=f"the longest request of this workload is {longest:,} tokens; a shorter max_model_len "
                                    "frees profiling and per-request headroom", addresses="kv_memory"))
    mean_ctx = float((base.workload.prompt_len + base.workload.output_len).mean())
    n_max = int(cap.gpu_kv_cache_tokens.value // max(mean_ctx, 1))
    seqs = v("max_num_seqs")
    if seqs and 8 <= n_max < seqs:
        out.append(Candidate(changes={"max_num_seqs": max(8, n_max)},
                             reason=f"the KV cache holds about {n_max} requests of mean length; admitting more only "
                                    "preempts", addresses="kv_memory"))
        if 4 * n_max < seqs:
            # vLLM's profiling run sizes the sampler for max_num_seqs requests, so a lower cap also frees
            # activation memory for KV blocks: the cache then holds more than n_max.
            out.append(Candidate(changes={"max_num_seqs": 4 * n_max},
                                 reason="a lower cap shrinks the profiling run's sampler peak, leaving more memory "
                                        "for KV blocks", addresses="kv_memory"))
    tp = v("tensor_parallel_size") or 1
    pp = v("pipeline_parallel_size") or 1
    if r.model is not None and r.gpu_count >= 2 * tp * pp and r.model.num_attention_heads % (2 * tp) == 0:
        out.append(Candidate(changes={"tensor_parallel_size": 2 * tp},
                             reason="twice the GPUs per replica: weights split, KV per token split", addresses="kv_memory"))
    if not v("enable_prefix_caching") and base.spec.shared_prefix is not None:
        out.append(Candidate(changes={"enable_prefix_caching": True},
                             reason="the workload shares prefixes; cached blocks are not recomputed", addresses="kv_memory"))
    return out


def _for_admission(base: Scenario) -> list[Candidate]:
    v = base.resolved.value
    seqs, budget = v("max_num_seqs"), v("max_num_batched_tokens")
    out = []
    for factor in (2, 4):
        new = seqs * factor
        changes: dict[str, Any] = {"max_num_seqs": new}
        if new > budget:
            changes["max_num_batched_tokens"] = new  # vLLM requires max_num_batched_tokens >= max_num_seqs
        out.append(Candidate(changes=changes, reason=f"admit up to {new} running requests", addresses="admission"))
    return out


def _for_budget_small(base: Scenario) -> list[Candidate]:
    v = base.resolved.value
    budget = v("max_num_batched_tokens")
    out = [Candidate(changes={"max_num_batched_tokens": budget * f},
                     reason=f"a {budget * f:,}-token step budget takes prompts in fewer steps", addresses="budget_small")
           for f in (2, 4) if budget * f <= 65536]
    if v("long_prefill_token_threshold"):
        out.append(Candidate(changes={"long_prefill_token_threshold": 0},
                             reason="no per-request cap on prefill chunks", addresses="budget_small"))
    if v("enable_chunked_prefill") is False:
        out.append(Candidate(changes={"enable_chunked_prefill": True},
                             reason="chunked prefill admits prompts into the leftover budget", addresses="budget_small"))
    return out


def _for_budget_large(base: Scenario) -> list[Candidate]:
    v = base.resolved.value
    budget, seqs = v("max_num_batched_tokens"), v("max_num_seqs")
    out = []
    if v("enable_chunked_prefill") is False:
        out.append(Candidate(changes={"enable_chunked_prefill": True, "max_num_batched_tokens": 2048},
                             reason="chunked prefill splits long prompts so decodes keep their pace",
                             addresses="budget_large"))
    for divisor in (2, 4):
        new = budget // divisor
        if new >= 256:
            changes: dict[str, Any] = {"max_num_batched_tokens": new}
            if seqs > new:
                changes["max_num_seqs"] = new
            out.append(Candidate(changes=changes, reason=f"smaller {new:,}-token steps bound the decode stall",
                                 addresses="budget_large"))
    if not v("long_prefill_token_threshold") and budget >= 1024:
        out.append(Candidate(changes={"long_prefill_token_threshold": budget // 4},
                             reason="cap each prompt's chunk so several prompts share a step", addresses="budget_large"))
    return out


def _for_gpu(base: Scenario) -> list[Candidate]:
    r = base.resolved
    out = []
    if _fp8_kv_possible(r):
        out.append(Candidate(changes={"kv_cache_dtype": "fp8"}, reason="halves the KV bytes each decode step reads",
                             addresses="gpu"))
    budget = r.value("max_num_batched_tokens")
    if budget * 2 <= 65536:
        out.append(Candidate(changes={"max_num_batched_tokens": budget * 2},
                             reason="bigger steps amortise weight reads over more tokens", addresses="gpu"))
    return out


def _for_front_end(base: Scenario) -> list[Candidate]:
    """More API servers (--api-server-count) where the front end sets the pace: its time for the tokens of a
    full batch (the calibration's cost per streamed token, shared by the servers) is longer than the engine's
    step for that batch with its host time, so the server streams no faster than its front end
    (sim/engine.FrontEnd)."""
    host = base.host_times
    seqs, servers = base.resolved.value("max_num_seqs"), host["api_servers"]
    if not host["front_end_token_s"] or not seqs or base.settings is None:
        return []
    context = int((base.workload.prompt_len + base.workload.output_len // 2).mean())
    step = host["overhead_s"] + float(base.step_time(StepBatch(np.ones(seqs, dtype=np.int64),
                                                               np.full(seqs, context, dtype=np.int64), seqs)))
    tokens_s = seqs * host["front_end_token_s"]
    if tokens_s / servers <= step:
        return []
    enough = min(max(2 * servers, math.ceil(tokens_s / step)), 4 * servers)
    why = (f"the front end needs {tokens_s / servers * 1000:.1f} ms for a full batch's tokens against the engine's "
           f"{step * 1000:.1f} ms step, so it sets the pace; {enough} API servers share that work")
    return [Candidate(changes={"api_server_count": enough}, reason=why, addresses="front_end")]


def _fp8_kv_possible(r: Any) -> bool:
    """Whether fp8 is worth trying for the KV cache: it is 16-bit now, and the GPU has fp8 support."""
    return r.derived["kv_cache_dtype"].value in ("bfloat16", "float16") and r.gpu is not None and bool(r.gpu.fp8_tflops)


_FOR_LIMIT: dict[str, Callable[[Scenario], list[Candidate]]] = {
    "kv_memory": _for_kv, "admission": _for_admission, "budget_small": _for_budget_small,
    "budget_large": _for_budget_large, "gpu": _for_gpu, "load": lambda base: [], "startup": _for_kv,
}


def _unique(base: Scenario, found: list[Candidate]) -> list[Candidate]:
    seen, out = set(), []
    for cand in found:
        if all(base.resolved.value(k) == val for k, val in cand.changes.items()):
            continue  # not a change
        key = tuple(sorted((k, str(val)) for k, val in cand.changes.items()))
        if key not in seen:
            seen.add(key)
            out.append(cand)
    return out


# ---- evaluation -------------------------------------------------------------------------------

def evaluate_all(base: Scenario, cands: list[Candidate], baseline: Metrics, rule_errors: RuleErrors,
                 workers: Optional[int] = None) -> list[WhatIf]:
    trials = try_changes(base, [c.changes for c in cands], rule_errors, workers, skip_no_effect=True)
    results = [WhatIf(changes=c.changes, reason=c.reason, addresses=c.addresses, status=t.status,
                      why_not=t.why_not, metrics=t.metrics) for c, t in zip(cands, trials)]
    for item in results:
        if item.metrics is not None and _changes_nothing(item.metrics, baseline):
            item.status, item.why_not = "no_effect", (
                f"simulated, every figure comes out as configured (output {item.metrics.output_throughput:,.0f} "
                "tok/s, the same TTFT and ITL tails and preemptions): a change that changes nothing is not a "
                "recommendation")
        if item.metrics is not None and item.status == "simulated":
            item.score = objective(item.metrics, baseline, base.slos_ms)
    ranked = sorted(results, key=lambda w: -(w.score or -1))
    best = next((w for w in ranked if improves(w)), None)
    if best is not None:
        best.recommended = True
    return ranked


# A what-if whose figures all lie within this of the baseline's changed nothing the report can show.
SAME_FIGURES = 0.005


def _changes_nothing(m: Metrics, base: Metrics) -> bool:
    def same(a: Optional[float], b: Optional[float]) -> bool:
        return a == b or (a is not None and b is not None and abs(a - b) <= SAME_FIGURES * max(abs(b), 1e-9))

    return m.preemptions == base.preemptions and all(
        same(getattr(m, key), getattr(base, key))
        for key in ("output_throughput", "request_throughput", "ttft_p99_ms", "itl_p99_ms", "e2el_p99_ms",
                    "goodput_rps"))


# A change whose objective is more than 2% above the configuration's improves it; closer is noise.
IMPROVES = 1.02


def improves(w: WhatIf) -> bool:
    return w.score is not None and w.score > IMPROVES


def refuted_limits(verdict: Verdict, whatifs: list[WhatIf], baseline: Metrics,
                   slos_ms: dict[str, float]) -> frozenset[str]:
    """The defaults the evidence points at (signal above noise) none of whose relaxations, re-simulated at the
    same load, raises goodput or throughput: naming one of them as the limit would disagree with its own
    what-ifs. A default with no relaxation tried is not refuted (there is nothing to hold it to)."""
    out = set()
    for signal in verdict.signals:
        tried = [w for w in whatifs if w.addresses == signal.limit]
        if signal.score >= MIN_SCORE and tried and not any(relieves(w, baseline, slos_ms) for w in tried):
            out.add(signal.limit)
    return frozenset(out)


def relieves(w: WhatIf, base: Metrics, slos_ms: dict[str, float]) -> bool:
    """Whether a relaxation raises goodput (with SLOs) or output throughput by more than noise: the test a
    limit's name must pass (issue 24)."""
    m = w.metrics
    if m is None or not base.completed:
        return m is not None and m.completed > 0
    # Below capacity an open loop's throughput is its offered load whatever the scheduler does: there only
    # goodput (more requests within the SLOs) can show a latency limit relieved.
    goodput_up = bool(slos_ms) and (m.goodput_rps or 0.0) > IMPROVES * (base.goodput_rps or 0.0)
    return goodput_up or m.output_throughput > IMPROVES * base.output_throughput


def objective(m: Metrics, base: Metrics, slos_ms: dict[str, float]) -> float:
    """Relative improvement (1.0 = no change): goodput under the SLOs where goodput tells configs apart, else
    throughput guarded by the latency tails."""
    if not base.completed:
        return 2.0 + m.output_throughput / 1e6  # the baseline does not start: anything that runs is better
    if slos_ms and _goodput_matters(m, base):
        ratio = m.goodput_rps / base.goodput_rps if base.goodput_rps else 1.0 + m.goodput_rps  # any beats none
        if abs(ratio - 1.0) > 0.02:
            return ratio
        # The same share meets the SLOs: prefer the change that moves the SLO'd tails toward their targets.
        return 1.0 + sum(_tail_terms(m, base, [k for k in ("itl", "ttft") if k in slos_ms]))
    # No SLOs, or (nearly) nothing meets them either way, e.g. arrivals far beyond capacity: throughput,
    # guarded by the latency tails, and credited for bringing an SLO'd tail closer to its target.
    gain = m.output_throughput / base.output_throughput if base.output_throughput else 1.0
    terms = _tail_terms(m, base, ["itl", "ttft"])
    slo_terms = _tail_terms(m, base, [k for k in ("itl", "ttft") if k in slos_ms])
    return gain + sum(t for t in terms if t < 0) + sum(t for t in slo_terms if t > 0)


def _goodput_matters(m: Metrics, base: Metrics) -> bool:
    """Goodput ranks changes only when, on one side at least, a tenth of the requests meet the SLOs: below
    that it is a handful of lucky requests, and it would outrank a change that doubles throughput."""
    if m.goodput_rps is None or base.goodput_rps is None:
        return False
    return max(m.goodput_rps, base.goodput_rps) >= 0.1 * max(base.request_throughput, 1e-9)


def _tail_terms(m: Metrics, base: Metrics, metrics: list[str]) -> list[float]:
    """Per P99 tail: a penalty (negative) when it is more than 10% worse, a bonus when more than 10% better,
    each at most 0.5."""
    terms = []
    for name in metrics:
        new, old = (m.itl_p99_ms, base.itl_p99_ms) if name == "itl" else (m.ttft_p99_ms, base.ttft_p99_ms)
        if not new or not old:
            continue
        if new > old * 1.1:
            terms.append(-min(0.5, (new / old - 1.1) / 4))
        elif old > new * 1.1:
            terms.append(min(0.5, (old / new - 1.1) / 4))
    return terms
