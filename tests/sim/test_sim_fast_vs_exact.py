"""The numpy fast path makes exactly the decisions of the one-request-at-a-time walk.

The same workloads run both ways (fast_path=True, with multi-step leaps, / fast_path=False, step
by step) must give identical per-request outcomes: send, first-scheduled, first-token and finish
times, output tokens, preemptions, and identical step counts. Workloads are chosen to hit the hand-over points: KV pressure with
preemption (FCFS and priority), prefix caching with eviction, async scheduling, speculative
decoding, chunking off.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.sim.api import simulate

BASE = dict(max_num_seqs=32, max_num_batched_tokens=1024, num_gpu_blocks=400, vllm_version="0.32.0")
WL = {"num_requests": 150, "seed": 4, "arrival": {"process": "poisson", "rate": 40.0},
      "prompt_len": {"dist": "lognormal", "median": 300.0, "sigma": 0.8, "min": 8, "max": 3000},
      "output_len": {"dist": "lognormal", "median": 80.0, "sigma": 0.7, "min": 1, "max": 600},
      "shared_prefix": {"fraction": 0.5, "groups": 3}}


# A recorded trace with priorities (every fifth request is less urgent), arrivals 4 req/s.
TRACE = str(Path(__file__).resolve().parents[2] / "fixtures" / "workloads" / "trace_small.jsonl")


def step_time(batch):
    return 0.004 + 2e-5 * batch.num_tokens + 1e-8 * float(batch.past_tokens.sum())


CASES = {
    "fcfs-kv-pressure-caching": dict(BASE),
    "fcfs-kv-pressure-no-caching-sync": dict(BASE, enable_prefix_caching=False, async_scheduling=False),
    "priority-preemption": dict(BASE, scheduling_policy="priority", num_gpu_blocks=600),
    "chunking-off": dict(BASE, enable_chunked_prefill=False, max_num_batched_tokens=4096, max_model_len=4096),
    "threshold-0.18": dict(BASE, vllm_version="0.18.0", long_prefill_token_threshold=128),
    "spec-decode-eagle": dict(BASE, speculative={"method": "eagle", "num_speculative_tokens": 3,
                                                 "acceptance_rate": 0.6}),
    "watermark-adaptive": dict(BASE, watermark=0.05, long_prefill_token_threshold=64,
                               long_prefill_token_threshold_adaptive=True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fast_and_exact_paths_give_identical_results(name):
    settings = CASES[name]
    wl = TRACE if "priority" in name else WL
    fast = simulate(settings, wl, step_time, "chunked", seed=4, keep_requests=True, fast_path=True)
    exact = simulate(settings, wl, step_time, "chunked", seed=4, keep_requests=True, fast_path=False)
    assert fast.num_steps == exact.num_steps
    assert fast.preemptions == exact.preemptions
    assert fast.recomputed_tokens == exact.recomputed_tokens
    assert fast.prefix_cache_hits == exact.prefix_cache_hits
    assert fast.requests == exact.requests
    assert fast.model_dump(exclude={"requests"}) == exact.model_dump(exclude={"requests"})


def test_the_kv_pressure_cases_really_preempt():
    r = simulate(CASES["fcfs-kv-pressure-caching"], WL, step_time, "chunked", seed=4)
    assert r.preemptions > 0 and r.prefix_cache_hits > 0
    r = simulate(CASES["priority-preemption"], TRACE, step_time, "chunked", seed=5, keep_requests=True)
    assert r.preemptions > 0


def test_private_blocks_shortcut_changes_nothing(monkeypatch):
    """Blocks only their own request can hit skip the hash map until it is preempted; entering
    every block in the map as vLLM does must give the same run."""
    from reader.sim import engine
    from reader.sim.request import SharedPrefixContent

    class EveryBlockInTheMap(SharedPrefixContent):
        def unique_from(self, r):
            return 1 << 40

    settings = dict(CASES["fcfs-kv-pressure-caching"], num_gpu_blocks=300)
    shortcut = simulate(settings, WL, step_time, "chunked", seed=4, keep_requests=True)
    monkeypatch.setattr(engine, "SharedPrefixContent", EveryBlockInTheMap)
    plain = simulate(settings, WL, step_time, "chunked", seed=4, keep_requests=True)
    assert shortcut.preemptions > 0 and shortcut.prefix_cache_hits > 0
    assert shortcut.model_dump() == plain.model_dump()
