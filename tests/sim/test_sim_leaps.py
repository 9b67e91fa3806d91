"""Multi-step leaps (reader/sim/leap.py) change nothing: the same workloads run with leaps and
step by step (leaps=False) give identical results, compared at two levels:

- the engine's raw records: every per-step column (start, end, tokens, sequences, prefill tokens,
  decodes, KV usage, free blocks, running, waiting, admission stop, preemptions), every
  per-request column (send, first scheduled, first token, last token, finish, max ITL, output
  tokens, preemptions, status), the ITL gaps in order, and the run's counters;
- the complete SimResult (all metrics, evidence, time series, per-request records).

The workloads cover where a leap must stop or must not start: arrivals (open loop at several rates,
closed loop, a concurrency cap), finishes (sync and async), KV pressure with preemption (FCFS and
priority, caching on and off), admission blocked by max_num_seqs / max_num_active_seqs / the token
budget, chunking off, a long-prefill threshold, a token budget below the running count, a
max_model_len that stops requests, naive and continuous modes, requests refused at arrival, and
speculative decoding (no leaps).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reader.sim import leap as leap_module
from reader.sim.api import make_workload, resolve_settings, simulate
from reader.sim.engine import run_mode
from reader.sim.metrics import summarize

TRACE = str(Path(__file__).resolve().parents[2] / "fixtures" / "workloads" / "trace_small.jsonl")
SLOS = {"ttft": 400.0, "tpot": 30.0, "itl": 40.0}


def step_time(batch):
    """Reads every part of the batch, in order (a leap must build each step's batch exactly)."""
    new, past = batch.new_tokens, batch.past_tokens
    order = np.arange(1, new.size + 1)
    return (0.004 + 2e-5 * batch.num_tokens + 1e-8 * float(past.sum()) + 3e-6 * batch.sampled
            + 1e-9 * float(order @ past) + 1e-8 * float(order @ new) + 2e-4 * (int(new.max()) > 1)
            + 1e-7 * float(past.max()))


B = dict(max_num_seqs=64, max_num_batched_tokens=2048, num_gpu_blocks=4000, vllm_version="0.32.0")


def chat(n, rate, **kw):
    return dict({"preset": "chat", "num_requests": n, "arrival": {"process": "poisson", "rate": rate}}, **kw)


CLOSED = {"num_requests": 100, "arrival": {"process": "closed", "concurrency": 24},
          "prompt_len": {"dist": "uniform", "low": 50, "high": 600},
          "output_len": {"dist": "uniform", "low": 20, "high": 300}}

BURST = {"num_requests": 40, "seed": 2, "arrival": {"process": "burst"},
         "prompt_len": {"dist": "uniform", "low": 50, "high": 300},
         "output_len": {"dist": "uniform", "low": 20, "high": 200}}

# name: (settings, workload, mode)
CASES = {
    "chat-5rps": (B, chat(60, 5.0), "chunked"),
    "chat-20rps": (B, chat(80, 20.0), "chunked"),
    "chat-0.18": (dict(B, vllm_version="0.18.0"), chat(60, 8.0), "chunked"),
    "chat-sync-no-caching": (dict(B, async_scheduling=False, enable_prefix_caching=False), chat(60, 8.0), "chunked"),
    "chat-sync-caching": (dict(B, async_scheduling=False), chat(60, 8.0), "chunked"),
    "chat-async-no-caching": (dict(B, enable_prefix_caching=False), chat(60, 8.0), "chunked"),
    "chat-concurrency-cap": (B, chat(30, 20.0, arrival={"process": "poisson", "rate": 20.0, "concurrency": 6}),
                             "chunked"),
    "rag": (dict(B, max_num_batched_tokens=4096, num_gpu_blocks=20000), {"preset": "rag", "num_requests": 25},
            "chunked"),
    "code": (B, {"preset": "code", "num_requests": 120}, "chunked"),
    "summarization-kv-pressure": (dict(B, num_gpu_blocks=1500), {"preset": "summarization", "num_requests": 30},
                                  "chunked"),
    "closed-loop": (B, CLOSED, "chunked"),
    "closed-loop-sync": (dict(B, async_scheduling=False), CLOSED, "chunked"),
    # Requests that finish with their first token (admitted and done in the same step).
    "one-token-outputs-async": (B, chat(60, 20.0, output_len={"dist": "empirical", "values": [1, 1, 2, 3, 40]}),
                                "chunked"),
    "closed-loop-one-token-outputs": (B, dict(CLOSED, output_len={"dist": "empirical", "values": [1, 1, 2, 40]}),
                                      "chunked"),
    "one-token-outputs-sync": (dict(B, async_scheduling=False),
                               chat(60, 20.0, output_len={"dist": "empirical", "values": [1, 1, 2, 3, 40]}),
                               "chunked"),
    "closed-loop-kv-pressure": (dict(B, num_gpu_blocks=300),
                                dict(CLOSED, num_requests=80, arrival={"process": "closed", "concurrency": 48},
                                     shared_prefix={"fraction": 0.4, "groups": 3}), "chunked"),
    "kv-pressure-sync": (dict(B, num_gpu_blocks=200, async_scheduling=False), chat(25, 20.0), "chunked"),
    "kv-pressure-no-caching": (dict(B, num_gpu_blocks=200, enable_prefix_caching=False), chat(25, 20.0), "chunked"),
    "priority-preemption": (dict(B, scheduling_policy="priority", num_gpu_blocks=500), TRACE, "chunked"),
    # Requests preempted more than once: blocks they fill while decoding in a leap are registered in
    # the prefix cache, and a later resume hits them.
    "repeat-preemption-caching": (dict(B, num_gpu_blocks=150),
                                  {"num_requests": 40, "seed": 1, "arrival": {"process": "poisson", "rate": 10.0},
                                   "prompt_len": {"dist": "uniform", "low": 100, "high": 400},
                                   "output_len": {"dist": "uniform", "low": 300, "high": 700},
                                   "shared_prefix": {"fraction": 0.5, "groups": 2}}, "chunked"),
    "long-prefill-threshold": (dict(B, long_prefill_token_threshold=64), chat(60, 20.0), "chunked"),
    "budget-below-running": (dict(B, max_num_batched_tokens=16, max_num_seqs=32), chat(25, 20.0), "chunked"),
    "chunking-off": (dict(B, enable_chunked_prefill=False, max_num_batched_tokens=8192, max_model_len=8192),
                     chat(60, 10.0), "chunked"),
    "max-num-seqs-full": (dict(B, max_num_seqs=4), chat(40, 10.0), "chunked"),
    # All at once: leaps start with admission blocked by max_num_seqs, and it opens as requests finish.
    "burst-max-num-seqs-async": (dict(B, max_num_seqs=4), BURST, "chunked"),
    "burst-max-num-seqs-sync": (dict(B, max_num_seqs=4, async_scheduling=False), BURST, "chunked"),
    "max-num-active-seqs-watermark": (dict(B, max_num_seqs=8, max_num_active_seqs=3, watermark=0.05),
                                      chat(40, 10.0), "chunked"),
    "max-model-len-stops": (dict(B, max_model_len=700), chat(60, 5.0), "chunked"),
    "naive": (B, chat(20, 5.0), "naive"),
    "naive-sync-refused": (dict(B, async_scheduling=False, max_model_len=1500), chat(20, 5.0), "naive"),
    "naive-closed-loop": (B, dict(CLOSED, num_requests=30), "naive"),
    "continuous": (B, chat(60, 8.0), "continuous"),
    "spec-decode": (dict(B, speculative={"method": "eagle", "num_speculative_tokens": 3, "acceptance_rate": 0.6}),
                    chat(30, 5.0), "chunked"),
}
NO_LEAPS = {"spec-decode"}
# What each case must reach to test what it is named after (checked on the result).
EXPECT = {
    "summarization-kv-pressure": lambda r: r.preemptions > 0,
    "closed-loop-kv-pressure": lambda r: r.preemptions > 0,
    "kv-pressure-sync": lambda r: r.preemptions > 0,
    "kv-pressure-no-caching": lambda r: r.preemptions > 0 and r.prefix_cache_queries == 0,
    "priority-preemption": lambda r: r.preemptions > 0,
    "repeat-preemption-caching": lambda r: r.preempted_requests < r.preemptions and r.prefix_cache_hits > 0,
    "max-num-seqs-full": lambda r: r.evidence.admission_stops.get("max_num_seqs", 0) > 0,
    "burst-max-num-seqs-async": lambda r: r.evidence.admission_stops.get("max_num_seqs", 0) > 0,
    "burst-max-num-seqs-sync": lambda r: r.evidence.admission_stops.get("max_num_seqs", 0) > 0,
    "max-num-active-seqs-watermark": lambda r: r.evidence.admission_stops.get("max_num_seqs", 0) > 0,
    "budget-below-running": lambda r: r.evidence.steps_budget_full > 0,
    "naive-sync-refused": lambda r: r.failed > 0,
    "chat-5rps": lambda r: r.prefix_cache_hits > 0,
    "max-model-len-stops": lambda r: r.total_output_tokens < 60 * 250,
}

# Cases whose leaps skip looking at a queue head already known to be short of KV blocks.
BLOCKED_SKIPS = {"summarization-kv-pressure", "closed-loop-kv-pressure", "kv-pressure-no-caching",
                 "repeat-preemption-caching"}

STEP_COLUMNS = ("step_start", "step_end", "step_tokens", "step_seqs", "step_prefill_tokens", "step_decodes",
                "step_kv_usage", "step_free_blocks", "step_running", "step_waiting", "step_stop", "step_preempted",
                "step_sampled")
REQUEST_COLUMNS = ("send_time", "first_scheduled", "first_token", "last_token", "finish_time", "max_itl")
COUNTERS = ("budget", "recomputed_tokens", "num_preemptions", "prefix_queries", "prefix_hits", "spec_drafts",
            "spec_accepted", "notes")


def engine_run(settings, workload, mode, leaps, *, fn=step_time, seed=3, progress=None):
    wl = make_workload(workload, seed)
    cfg = resolve_settings(settings, wl)
    run = run_mode(cfg, wl, fn, mode, seed=seed, leaps=leaps, progress=progress)
    return run, summarize(run, seed=seed, slos_ms=SLOS, keep_requests=True)


def assert_same_runs(a, b):
    for col in STEP_COLUMNS:
        x, y = getattr(a, col).array(), getattr(b, col).array()
        assert x.dtype == y.dtype and len(x) == len(y), f"{col}: {len(x)} vs {len(y)} steps"
        if not np.array_equal(x, y):
            i = int(np.flatnonzero(x != y)[0])
            raise AssertionError(f"{col} differs first at step {i}: {x[i]!r} vs {y[i]!r}")
    for col in REQUEST_COLUMNS:
        np.testing.assert_array_equal(getattr(a, col), getattr(b, col), err_msg=col)
    for col in ("num_output", "num_preemptions", "status", "num_tokens", "num_computed"):
        np.testing.assert_array_equal(getattr(a.reqs, col), getattr(b.reqs, col), err_msg=col)
    itl_a = np.concatenate(a.itl_chunks) if a.itl_chunks else np.empty(0)
    itl_b = np.concatenate(b.itl_chunks) if b.itl_chunks else np.empty(0)
    np.testing.assert_array_equal(itl_a, itl_b, err_msg="ITL gaps")
    for name in COUNTERS:
        assert getattr(a, name) == getattr(b, name), name


@pytest.mark.parametrize("name", list(CASES))
def test_leaps_give_the_step_by_step_result(name):
    settings, workload, mode = CASES[name]
    run_a, res_a = engine_run(settings, workload, mode, leaps=True)
    run_b, res_b = engine_run(settings, workload, mode, leaps=False)
    assert run_b.leaps == 0
    if name in NO_LEAPS:
        assert run_a.leaps == 0
    else:
        assert run_a.leap_steps > 0, "the case never leaps: it tests nothing"
    assert EXPECT.get(name, lambda r: True)(res_a), f"{name} does not reach its situation"
    if name in BLOCKED_SKIPS:
        assert run_a.blocked_skips > 0, "admission blocked for KV blocks is never skipped: the case tests less"
    assert_same_runs(run_a, run_b)
    assert res_a.model_dump() == res_b.model_dump()


def test_leaps_cover_most_steps_of_an_open_loop_chat_workload():
    run, res = engine_run(*CASES["chat-5rps"], leaps=True)
    assert run.leap_steps > 0.8 * res.num_steps
    run, res = engine_run(*CASES["naive"], leaps=True)
    assert run.leap_steps > 0.9 * res.num_steps


def test_the_exact_walk_agrees_with_leaps():
    settings, workload, mode = CASES["closed-loop-kv-pressure"]
    a = simulate(settings, workload, step_time, mode, seed=3, keep_requests=True)
    b = simulate(settings, workload, step_time, mode, seed=3, keep_requests=True, fast_path=False)
    c = simulate(settings, workload, step_time, mode, seed=3, keep_requests=True, leaps=False)
    assert a.preemptions > 0
    assert a.model_dump() == b.model_dump() == c.model_dump()


def test_progress_is_reported_the_same_way():
    calls = {True: [], False: []}
    settings, workload, mode = CASES["closed-loop"]
    for leaps in (True, False):
        engine_run(settings, workload, mode, leaps, progress=lambda d, t, leaps=leaps: calls[leaps].append((d, t)))
    assert calls[True] == calls[False] and calls[True][-1] == (100, 100)


def test_the_step_time_memo_for_one_request_and_its_opt_out():
    calls = []

    def counted(batch):
        calls.append(batch.num_seqs)
        return step_time(batch)

    settings, workload, _ = CASES["naive"]
    memo_run, memo_res = engine_run(settings, workload, "naive", leaps=True, fn=counted)
    memo_calls = len(calls)
    calls.clear()
    counted.deterministic = False
    plain_run, plain_res = engine_run(settings, workload, "naive", leaps=True, fn=counted)
    ran = int((plain_run.step_tokens.array() > 0).sum())
    assert len(calls) == ran                       # deterministic = False: one call per step that ran
    assert memo_calls < 0.5 * ran                  # a one-request decode batch is looked up first
    assert memo_res.model_dump() == plain_res.model_dump()


def test_a_leap_that_ignores_admission_is_caught(monkeypatch):
    """The comparison is sharp enough to notice a wrong leap bound: pretend admission is always
    blocked by max_num_seqs, so arrivals wait until the leap ends."""
    settings, workload, mode = CASES["chat-20rps"]
    good = engine_run(settings, workload, mode, leaps=False)[1]
    monkeypatch.setattr(leap_module.DecodeLeaps, "_stop", lambda self, n, count: leap_module._SEQS)
    bad = engine_run(settings, workload, mode, leaps=True)[1]
    assert bad.model_dump() != good.model_dump()


def test_range_max_matches_a_plain_max():
    rng = np.random.default_rng(0)
    d = rng.random(300)
    lo = rng.integers(0, 299, 500)
    hi = np.minimum(lo + rng.integers(1, 300, 500), 300)
    want = np.array([d[a:b].max() for a, b in zip(lo, hi)])
    np.testing.assert_array_equal(leap_module._range_max(d, lo, hi), want)


@pytest.mark.parametrize("name", ["repeat-preemption-caching", "closed-loop-kv-pressure", "priority-preemption",
                                  "summarization-kv-pressure"])
def test_the_remembered_prefix_lookup_equals_a_fresh_walk(name, monkeypatch):
    """KVCacheManager remembers each waiting request's longest cache hit between steps; under KV
    pressure (blocks evicted, preempted requests' blocks published) every lookup must still return
    what a walk over the hash map from the first block returns."""
    from reader.sim.kv_manager import KVCacheManager

    remembered = KVCacheManager._longest_hit
    checked = []

    def compared(self, r, limit):
        got = remembered(self, r, limit)
        fresh = []
        for key in self.content.block_hashes(r, 0, limit):
            b = self.pool.get_cached_block(key)
            if b is None:
                break
            fresh.append(b)
        assert got == fresh, f"request {r}: remembered {len(got)} blocks, the hash map has {len(fresh)}"
        checked.append(len(got))
        return got

    monkeypatch.setattr(KVCacheManager, "_longest_hit", compared)
    settings, workload, mode = CASES[name]
    _, res = engine_run(settings, workload, mode, leaps=True)
    assert res.preemptions > 0 and checked and max(checked) > 0


@pytest.mark.parametrize("name", ["chat-20rps", "closed-loop-kv-pressure", "closed-loop-sync", "naive"])
def test_leaps_with_the_real_step_time_model_give_the_step_by_step_result(name):
    """The roofline model offers decode_time(), which leaps call for decode-only steps instead of
    building the batch: the results must still be identical to the step-by-step run."""
    from reader.calibration.profile import default_calibration
    from reader.capacity.steptime import StepTimeModel
    from reader.catalog.load import get_gpu, get_model

    stm = StepTimeModel(get_model("meta-llama/Llama-3.1-8B"), get_gpu("H100-SXM"), default_calibration(get_gpu("H100-SXM").id))
    assert stm.decode_time is not None
    settings, workload, mode = CASES[name]
    run_a, res_a = engine_run(settings, workload, mode, leaps=True, fn=stm)
    run_b, res_b = engine_run(settings, workload, mode, leaps=False, fn=stm)
    assert run_a.leap_steps > 0
    assert_same_runs(run_a, run_b)
    assert res_a.model_dump() == res_b.model_dump()


@pytest.mark.parametrize("order", [[5, 9], [9, 5]])
def test_an_evicted_hit_cuts_the_remembered_run_at_its_earliest_place(order):
    from reader.sim.block_pool import CachingBlockPool

    pool = CachingBlockPool(16, unhashed_to_front=True)
    pool.hash_of[5], pool.hash_of[9], pool.hash_of[11] = "k3", "k1", None
    pool.watch = {5: {7: 2}, 9: {7: 1, 8: 0}, 11: {7: 0}}   # block 11 lost its hash earlier: not an eviction
    pool._evicting(order + [11])
    assert pool.stale_watchers == {7: 1, 8: 0}
    assert pool.watch == {}
