"""Metrics as vllm bench serve defines them, the engine clock, and the four serving modes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reader.errors import ReaderError
from reader.sim.api import MODES, run_modes, simulate
from reader.sim.engine import settings_for_mode
from reader.sim.settings import SchedulerSettings, resolve

WORKLOADS = Path(__file__).resolve().parents[2] / "fixtures" / "workloads"
SYNC = dict(vllm_version="0.32.0", enable_prefix_caching=False, async_scheduling=False, num_gpu_blocks=2000)


def const(seconds):
    return lambda batch: seconds


TWO = {"num_requests": 2, "arrival": {"process": "burst"}, "prompt_len": 10,
       "output_len": {"dist": "empirical", "values": [3, 1]}}


def two_requests():
    from reader.sim.workload import Workload
    return Workload(arrival=np.zeros(2), prompt_len=np.array([10, 10]), output_len=np.array([3, 1]),
                    prefix_group=np.array([-1, -1]), prefix_len=np.zeros(2, dtype=np.int64),
                    priority=np.zeros(2, dtype=np.int64), max_concurrency=None)


def test_metrics_follow_vllm_bench_serve_definitions():
    # Step 0 (0-10 ms): both prompts; step 1 and 2: r0's decodes. r1 stops at 1 token.
    r = simulate(SYNC, two_requests(), const(0.010), overhead_s=0.0, keep_requests=True,
                 slos_ms={"e2el": 20.0})
    assert r.completed == 2 and r.num_steps == 3
    assert r.duration_s == pytest.approx(0.030)
    assert r.request_throughput == pytest.approx(2 / 0.030)
    assert r.output_throughput == pytest.approx(4 / 0.030)
    assert r.total_token_throughput == pytest.approx(24 / 0.030)
    assert r.ttft_ms.mean == pytest.approx(10.0) and r.ttft_ms.count == 2
    assert r.tpot_ms.count == 1 and r.tpot_ms.mean == pytest.approx(10.0)   # (30 - 10) / (3 - 1)
    assert r.itl_ms.count == 2 and r.itl_ms.p99 == pytest.approx(10.0)
    assert r.e2el_ms.median == pytest.approx(20.0) and r.e2el_ms.max == pytest.approx(30.0)
    assert r.queue_ms.mean == pytest.approx(0.0)
    assert r.goodput.good_requests == 1 and r.goodput.request_goodput == pytest.approx(1 / 0.030)


def test_scheduler_overhead_adds_to_every_step_unless_async_hides_it():
    sync = simulate(SYNC, two_requests(), const(0.010), overhead_s=0.002)
    assert sync.duration_s == pytest.approx(3 * 0.012)
    overlapped = simulate(dict(SYNC, async_scheduling=True), two_requests(), const(0.010), overhead_s=0.002)
    assert overlapped.duration_s == pytest.approx(0.002 + 3 * 0.010)


def test_percentiles_use_linear_interpolation():
    from reader.sim.metrics import latency_stats
    s = latency_stats(np.array([0.001, 0.002, 0.003, 0.004]))
    assert s.median == pytest.approx(2.5) and s.p90 == pytest.approx(3.7) and s.p99 == pytest.approx(3.97)


def test_unknown_goodput_keys_and_modes_are_bad_input():
    with pytest.raises(ReaderError):
        simulate(SYNC, two_requests(), const(0.01), slos_ms={"latency": 1.0})
    with pytest.raises(ReaderError):
        simulate(SYNC, two_requests(), const(0.01), mode="turbo")


# named (tests/sim/test_sim_workload.py checks the folder holds exactly these): an empty glob would run nothing
EXAMPLES = ("chat_small", "closed_loop_1k_200", "empirical_lengths", "shared_prefix_gamma", "trace_replay")


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_four_modes_run_on_the_bundled_examples(name):
    path = WORKLOADS / f"{name}.yaml"
    settings = dict(vllm_version="0.32.0", max_num_seqs=64, max_num_batched_tokens=4096, num_gpu_blocks=6000,
                    max_model_len=8192)
    from reader.sim.workload import load_workload
    wl = load_workload(str(path)).model_copy(update={"num_requests": 40})
    wl.model_fields_set.add("num_requests")
    results = run_modes(settings, wl, lambda b: 0.004 + 2e-5 * b.num_tokens, "all", seed=1)
    assert [r.mode for r in results] == list(MODES)
    for r in results:
        assert r.completed + r.failed == r.num_requests and r.completed > 0, r.mode
        assert r.ttft_ms.mean is not None and r.duration_s > 0


def test_naive_runs_one_request_at_a_time():
    wl = {"preset": "chat", "num_requests": 40}
    r = simulate(SYNC, wl, const(0.01), mode="naive", keep_requests=True)
    q = r.requests
    spans = sorted((s, f) for s, f in zip(q.first_scheduled_s, q.finish_s) if s is not None)
    assert all(a[1] <= b[0] + 1e-12 for a, b in zip(spans, spans[1:]))
    assert r.evidence.running_mean <= 1.0


def test_static_batches_finish_together_and_wait_for_their_slowest_member():
    wl = {"num_requests": 8, "arrival": {"process": "burst"}, "prompt_len": {"dist": "uniform", "low": 10, "high": 50},
          "output_len": {"dist": "empirical", "values": [2, 2, 2, 20]}, "seed": 2}
    r = simulate(dict(SYNC, max_num_seqs=4), wl, const(0.01), mode="static", keep_requests=True, overhead_s=0.0)
    finish = np.array(r.requests.finish_s)
    first = np.array(r.requests.first_scheduled_s)
    for start in np.unique(first):
        members = finish[first == start]
        assert np.all(members == members[0])                # the batch completes as one
    assert len(np.unique(first)) == 2                        # 8 requests, batches of 4
    # the second batch starts only when the whole first batch is done
    assert np.unique(first)[1] == pytest.approx(np.unique(finish).min())


def test_continuous_mode_is_chunked_prefill_off_with_whole_prompts():
    cfg = resolve(SchedulerSettings(vllm_version="0.32.0", max_num_batched_tokens=512, max_model_len=4096,
                                    long_prefill_token_threshold=128))
    cont = settings_for_mode(cfg, "continuous")
    assert not cont.enable_chunked_prefill and cont.long_prefill_token_threshold == 0
    assert cont.max_num_batched_tokens == 4096
    assert settings_for_mode(cfg, "naive").max_num_seqs == 1
    assert settings_for_mode(cfg, "chunked") is cfg


def test_same_seed_same_result_and_progress_reaches_the_end():
    seen = []
    wl = {"preset": "chat", "num_requests": 300}
    spec = {"method": "ngram", "num_speculative_tokens": 2, "acceptance_rate": 0.5}
    a = simulate(dict(SYNC, speculative=spec), wl, const(0.01), seed=3, progress=lambda d, t: seen.append((d, t)))
    b = simulate(dict(SYNC, speculative=spec), wl, const(0.01), seed=3)
    assert a.model_dump() == b.model_dump()
    assert seen[-1] == (300, 300)
    assert 0.3 < a.spec_accepted_tokens / a.spec_draft_tokens < 0.5   # E[accepted]/k for rate 0.5, k=2: 0.375


def test_requests_longer_than_max_model_len_fail_instead_of_running():
    wl = {"num_requests": 5, "arrival": {"process": "burst"}, "output_len": 5, "seed": 0,
          "prompt_len": {"dist": "empirical", "values": [100, 5000]}}
    r = simulate(dict(SYNC, max_model_len=2048), wl, const(0.01))
    assert r.failed == int(r.num_requests - r.completed) and r.failed > 0


def test_evidence_reports_kv_limited_admission_and_preemption():
    wl = {"num_requests": 80, "arrival": {"process": "burst"}, "prompt_len": 400, "output_len": 300, "seed": 0}
    r = simulate(dict(SYNC, num_gpu_blocks=300, max_num_seqs=64), wl, const(0.01))
    ev = r.evidence
    assert ev.steps_admission_blocked_by_kv > 0 and ev.kv_usage_peak > 0.9
    assert r.preemptions > 0 and ev.steps_with_preemption > 0 and r.recomputed_tokens > 0
    seq_bound = simulate(dict(SYNC, num_gpu_blocks=20000, max_num_seqs=8), wl, const(0.01))
    assert seq_bound.evidence.admission_stops.get("max_num_seqs", 0) > 0
    assert seq_bound.evidence.steps_seqs_full_blocks_free > 0
    assert len(r.timeseries.kv_usage) == len(r.timeseries.t_s) <= 500
