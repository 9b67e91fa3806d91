"""Metrics as `vllm bench serve` defines them (vllm/benchmarks/serve.py calculate_metrics), plus
the evidence the diagnosis reads.

- duration: from the first request sent to the last one finished.
- request / output / total token throughput: completed requests, their output tokens, and their
  prompt + output tokens, divided by the duration.
- TTFT: first token time - send time. E2EL: last token time - send time.
- TPOT: (E2EL - TTFT) / (output tokens - 1), for requests with more than one output token.
- ITL: time between consecutive chunks a client receives, pooled over all requests (one chunk per
  request per step; with speculative decoding a chunk can hold several tokens).
- Percentiles: numpy's linear interpolation, as vllm bench; median = P50.
- Queue time: first scheduled - send time (vllm:request_queue_time_seconds).
- Goodput: completed requests whose TTFT, TPOT and E2EL are all within the given SLOs (keys ttft,
  tpot, e2el, in ms), per second. `itl` (our addition) requires every ITL of the request within it.
"""
from __future__ import annotations

import numpy as np

from .engine import Column, EngineRun
from .request import FINISHED
from .result import (
    StepEvidence,
    Goodput,
    LatencyStats,
    RequestRecords,
    SimResult,
    StepTimeEvidence,
    TimeSeries,
)
from .scheduler import STOP_BLOCKS, STOP_CODE, STOP_EMPTY, STOP_FULL_SEQUENCE, STOP_NAMES, STOP_SEQS

GOODPUT_KEYS = ("ttft", "tpot", "e2el", "itl")


def latency_stats(values_s: np.ndarray) -> LatencyStats:
    v = np.asarray(values_s, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return LatencyStats()
    ms = v * 1000.0
    p90, p99 = np.percentile(ms, [90, 99])
    return LatencyStats(count=int(ms.size), mean=float(ms.mean()), median=float(np.median(ms)), std=float(ms.std()),
                        p90=float(p90), p99=float(p99), max=float(ms.max()))


def _none_if_nan(a: np.ndarray) -> list[float | None]:
    return [None if not np.isfinite(x) else float(x) for x in a.tolist()]


def summarize(run: EngineRun, *, seed: int, slos_ms: dict[str, float] | None = None, max_points: int = 500,
              keep_requests: bool = False) -> SimResult:
    reqs = run.reqs
    done = reqs.status == FINISHED
    n_done = int(done.sum())
    send = run.send_time
    start = float(np.nanmin(send)) if np.isfinite(send).any() else 0.0
    end = float(np.nanmax(run.finish_time[done])) if n_done else start
    duration = max(end - start, 1e-12)
    out_tok = reqs.num_output[done]
    in_tok = reqs.prompt_len[done]
    ttft = run.first_token[done] - send[done]
    e2el = run.finish_time[done] - send[done]
    multi = out_tok > 1
    tpot = (e2el[multi] - ttft[multi]) / (out_tok[multi] - 1)
    itl = np.concatenate(run.itl_chunks) if run.itl_chunks else np.empty(0)
    queue = run.first_scheduled[done] - send[done]
    goodput = None
    if slos_ms:
        bad = [k for k in slos_ms if k not in GOODPUT_KEYS]
        if bad:
            raise ValueError(f"unknown goodput SLO key {bad[0]!r} (known: {', '.join(GOODPUT_KEYS)})")
        ok = np.ones(n_done, dtype=bool)
        tpot_all = np.zeros(n_done)
        tpot_all[multi] = tpot
        per_key = {"ttft": ttft, "tpot": tpot_all, "e2el": e2el, "itl": run.max_itl[done]}
        for key, limit in slos_ms.items():
            ok &= per_key[key] * 1000.0 <= limit
        good = int(ok.sum())
        goodput = Goodput(slos_ms=dict(slos_ms), good_requests=good, request_goodput=good / duration,
                          fraction_good=good / n_done if n_done else 0.0)
    queries = run.prefix_queries
    result = SimResult(
        mode=run.mode,
        vllm_version=run.cfg.vllm_version,
        seed=seed,
        workload=run.workload.description,
        settings=run.cfg.as_dict(),
        num_requests=int(reqs.n),
        completed=n_done,
        failed=int(reqs.n - n_done),
        duration_s=duration,
        total_input_tokens=int(in_tok.sum()),
        total_output_tokens=int(out_tok.sum()),
        request_throughput=n_done / duration,
        offered_rate=run.workload.offered_rate,
        output_throughput=float(out_tok.sum()) / duration,
        total_token_throughput=float(out_tok.sum() + in_tok.sum()) / duration,
        ttft_ms=latency_stats(ttft),
        tpot_ms=latency_stats(tpot),
        itl_ms=latency_stats(itl),
        e2el_ms=latency_stats(e2el),
        queue_ms=latency_stats(queue),
        goodput=goodput,
        preemptions=run.num_preemptions,
        preempted_requests=int((reqs.num_preemptions > 0).sum()),
        recomputed_tokens=run.recomputed_tokens,
        prefix_cache_queries=queries,
        prefix_cache_hits=run.prefix_hits,
        prefix_cache_hit_rate=(run.prefix_hits / queries) if queries else None,
        spec_draft_tokens=run.spec_drafts,
        spec_accepted_tokens=run.spec_accepted,
        num_steps=len(run.step_start),
        timeseries=timeseries(run, max_points),
        evidence=evidence(run, latency_stats(queue)),
        notes=list(run.cfg.notes) + run.notes, stopped=run.stopped,
    )
    if keep_requests:
        result.requests = RequestRecords(
            prompt_len=reqs.prompt_len.tolist(), output_tokens=reqs.num_output.tolist(),
            send_time_s=_none_if_nan(send), first_scheduled_s=_none_if_nan(run.first_scheduled),
            first_token_s=_none_if_nan(run.first_token), finish_s=_none_if_nan(run.finish_time),
            max_itl_s=run.max_itl.tolist(), num_preemptions=reqs.num_preemptions.tolist())
    return result


def _column(col: Column, dtype=np.float64) -> np.ndarray:
    """A per-step column of the run as a numpy array of `dtype`."""
    a = col.array()
    return a if a.dtype == dtype else a.astype(dtype)


def timeseries(run: EngineRun, max_points: int) -> TimeSeries:
    k = len(run.step_start)
    if k == 0:
        return TimeSeries(steps_per_point=1)
    per = max(1, -(-k // max_points))
    m = -(-k // per)

    def bucket(values, how=np.mean) -> list[float]:
        a = _column(values)
        pad = m * per - k
        if pad:
            a = np.concatenate((a, np.full(pad, np.nan)))
        b = a.reshape(m, per)
        return [round(float(x), 6) for x in (np.nanmax(b, axis=1) if how is np.max else np.nanmean(b, axis=1))]

    starts = _column(run.step_start)[::per]
    return TimeSeries(steps_per_point=per, t_s=[round(float(x), 6) for x in starts],
                      kv_usage=bucket(run.step_kv_usage), kv_usage_max=bucket(run.step_kv_usage, np.max),
                      running=bucket(run.step_running), waiting=bucket(run.step_waiting),
                      scheduled_tokens=bucket(run.step_tokens))


def evidence(run: EngineRun, queue: LatencyStats) -> StepEvidence:
    k = len(run.step_start)
    if k == 0:
        return StepEvidence(queue_time_ms=queue)
    tokens = _column(run.step_tokens)
    prefill = _column(run.step_prefill_tokens)
    seqs = _column(run.step_seqs)
    start = _column(run.step_start)
    end = _column(run.step_end)
    dur = end - start
    kv = _column(run.step_kv_usage)
    free = _column(run.step_free_blocks, np.int64)
    waiting = _column(run.step_waiting, np.int64)
    stops = _column(run.step_stop, np.int8)
    left_waiting = waiting > 0
    counts = np.bincount(stops[left_waiting & (stops != STOP_CODE[STOP_EMPTY])], minlength=len(STOP_NAMES))
    admission = {name: int(counts[code]) for name, code in sorted(STOP_CODE.items()) if counts[code]}
    ran = tokens > 0
    st = StepTimeEvidence()
    if ran.any():
        d = dur[ran] * 1000.0
        p50, p99 = np.percentile(d, [50, 99])
        spike = d >= p99
        st = StepTimeEvidence(
            p50_ms=float(p50), mean_ms=float(d.mean()), p99_ms=float(p99), max_ms=float(d.max()),
            spike_steps=int(spike.sum()),
            spike_mean_tokens=float(tokens[ran][spike].mean()),
            spike_mean_prefill_tokens=float(prefill[ran][spike].mean()),
            spike_mean_seqs=float(seqs[ran][spike].mean()), mean_tokens=float(tokens[ran].mean()),
            mean_prefill_tokens=float(prefill[ran].mean()), mean_seqs=float(seqs[ran].mean()))
    # time-weighted KV usage (a step's usage holds until the next step starts)
    span = np.diff(np.append(start, end[-1]))
    total_time = float(span.sum())
    return StepEvidence(
        num_steps=k,
        steps_with_output=int((_column(run.step_sampled, np.int64) > 0).sum()),
        token_budget=run.budget,
        budget_fill_mean=float((tokens[ran] / run.budget).mean()) if ran.any() else None,
        steps_budget_full=int((tokens >= run.budget).sum()),
        admission_stops=admission,
        steps_seqs_full_blocks_free=int((left_waiting & (stops == STOP_CODE[STOP_SEQS]) & (free > 0)).sum()),
        steps_admission_blocked_by_kv=int((left_waiting & ((stops == STOP_CODE[STOP_BLOCKS])
                                                           | (stops == STOP_CODE[STOP_FULL_SEQUENCE]))).sum()),
        steps_with_preemption=int((_column(run.step_preempted, np.int64) > 0).sum()),
        kv_usage_peak=float(kv.max()),
        kv_usage_mean=float((kv * span).sum() / total_time) if total_time > 0 else float(kv.mean()),
        fraction_time_kv_above_95pct=float(span[kv >= 0.95].sum() / total_time) if total_time > 0 else None,
        running_mean=float(np.mean(_column(run.step_running, np.int64))),
        running_peak=int(_column(run.step_running, np.int64).max()),
        waiting_peak=int(waiting.max()),
        waiting_mean=float(waiting.mean()),
        queue_time_ms=queue,
        step_time=st,
    )
