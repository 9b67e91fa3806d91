"""The verdict follows what the simulation saw, not the config's values."""
from __future__ import annotations

import pytest

from reader.evidence.verdict import MIN_SCORE, decide
from reader.sim.api import SchedulerSettings, simulate
from reader.evidence.from_sim import from_simulation
from reader.evidence.model import Evidence
from reader.sim.result import LatencyStats, StepTimeEvidence


@pytest.fixture(scope="module")
def quiet_run():
    """A real, tiny, uneventful run to start from (nothing waits, nothing preempts)."""
    settings = SchedulerSettings(vllm_version="0.32.0", max_num_seqs=64, max_num_batched_tokens=2048,
                                 num_gpu_blocks=4000)
    workload = {"num_requests": 40, "arrival": {"process": "poisson", "rate": 2.0}, "prompt_len": 200,
                "output_len": 50}
    return simulate(settings, workload, step_time=lambda batch: 0.01, seed=1)


def with_evidence(run, **changes):
    evidence = run.evidence.model_copy(update=changes)
    return run.model_copy(update={"evidence": evidence})


def test_an_uneventful_run_is_limited_by_the_load(quiet_run):
    v = decide(from_simulation(quiet_run), slos_ms={}, compute_ridge_tokens=300.0)
    assert v.limit == "load"
    assert all(s.score < MIN_SCORE for s in v.signals if s.limit != "load")


def test_preemptions_name_the_kv_cache(quiet_run):
    run = quiet_run.model_copy(update={"preemptions": 30, "preempted_requests": 10, "recomputed_tokens": 5000})
    run = with_evidence(run, waiting_peak=12, steps_admission_blocked_by_kv=200, num_steps=1000)
    v = decide(from_simulation(run), {}, 300.0)
    assert v.limit == "kv_memory"
    assert "30 preemptions" in v.signals[0].evidence[0]


def test_max_num_seqs_full_with_free_blocks_names_admission(quiet_run):
    run = with_evidence(quiet_run, waiting_peak=40, waiting_mean=9.0, steps_seqs_full_blocks_free=600,
                        num_steps=1000, queue_time_ms=LatencyStats(p99=12_000.0))
    v = decide(from_simulation(run), {}, 300.0)
    assert v.limit == "admission"


def test_seqs_full_without_anyone_waiting_is_not_a_limit(quiet_run):
    run = with_evidence(quiet_run, waiting_peak=0, steps_seqs_full_blocks_free=600, num_steps=1000)
    assert decide(from_simulation(run), {}, 300.0).limit != "admission"


def test_budget_stopping_admission_names_a_small_budget(quiet_run):
    run = with_evidence(quiet_run, waiting_peak=30, admission_stops={"token_budget": 700}, steps_budget_full=900,
                        num_steps=1000, token_budget=512)
    assert decide(from_simulation(run), {}, 300.0).limit == "budget_small"


def test_a_long_itl_tail_from_prefill_steps_names_a_large_budget(quiet_run):
    run = quiet_run.model_copy(update={"itl_ms": LatencyStats(median=10.0, p99=90.0)})
    run = with_evidence(run, step_time=StepTimeEvidence(p50_ms=10.0, p99_ms=90.0, spike_mean_tokens=8000.0,
                                                        spike_mean_prefill_tokens=7900.0))
    assert decide(from_simulation(run), {}, 300.0).limit == "budget_large"


def test_a_mild_itl_tail_is_not_a_limit_unless_it_breaks_the_slo(quiet_run):
    run = quiet_run.model_copy(update={"itl_ms": LatencyStats(median=10.0, p99=30.0)})
    run = with_evidence(run, step_time=StepTimeEvidence(p50_ms=10.0, p99_ms=30.0, spike_mean_tokens=2000.0,
                                                        spike_mean_prefill_tokens=1900.0))
    assert decide(from_simulation(run), {}, 300.0).limit == "load"
    missed = decide(from_simulation(run), {"itl": 20.0}, 300.0)
    assert missed.limit == "budget_large" and not missed.slo[0].met


def test_queueing_without_a_scheduler_limit_is_the_gpu(quiet_run):
    run = with_evidence(quiet_run, waiting_peak=5, step_time=StepTimeEvidence(p50_ms=10.0, mean_tokens=500.0,
                                                                              mean_seqs=64.0))
    v = decide(from_simulation(run), {}, compute_ridge_tokens=300.0)
    assert v.limit == "gpu" and v.bound == "compute"
    assert decide(from_simulation(run), {}, compute_ridge_tokens=900.0).bound == "bandwidth"


def test_slo_checks_report_the_simulated_p99(quiet_run):
    v = decide(from_simulation(quiet_run), {"ttft": 1.0, "itl": 10_000.0}, 300.0)
    by_metric = {c.metric: c for c in v.slo}
    assert by_metric["ttft"].met is False and by_metric["itl"].met is True
    assert by_metric["ttft"].p99_ms == quiet_run.ttft_ms.p99


# ---- evidence from a server's metrics: the same rules, with what metrics cannot see left unknown ----------

def metrics_evidence(**changes):
    base = dict(source="metrics", num_requests=80, samples=6, sample_unit="scrapes", running_mean=4.0,
                itl_ms=LatencyStats(median=5.0, p99=12.0), mean_tokens_per_step=34.0, request_throughput=12.0,
                output_throughput=900.0)
    return Evidence(**{**base, **changes})


def test_preemptions_count_per_request_when_the_source_cannot_tell_preempted_requests():
    v = decide(metrics_evidence(preemptions=15, waiting_peak=70, samples_blocked_by_kv=3), {}, None)
    assert v.limit == "kv_memory"
    assert v.signals[0].evidence[0] == "15 preemptions in 80 finished requests"
    assert "3 scrapes" in v.headline


def test_unknown_max_num_seqs_is_said_and_scores_nothing():
    v = decide(metrics_evidence(waiting_peak=40), {}, None)
    admission = next(s for s in v.signals if s.limit == "admission")
    assert admission.score == 0 and "not known" in admission.evidence[0]


def test_without_step_times_a_long_itl_tail_needs_requests_running_together():
    tail = LatencyStats(median=5.0, p99=60.0)
    alone = decide(metrics_evidence(itl_ms=tail, running_mean=1.0, prompt_token_share=0.9), {}, None)
    assert alone.limit == "load"
    together = decide(metrics_evidence(itl_ms=tail, running_mean=6.0, prompt_token_share=0.9), {}, None)
    signal = next(s for s in together.signals if s.limit == "budget_large")
    assert signal.score > 0 and "not known" in signal.evidence[1]


def test_no_bound_is_claimed_without_the_gpu():
    v = decide(metrics_evidence(), {}, None)
    assert v.limit == "load" and v.bound is None
    assert v.headline.endswith("steps carry 34 tokens on average")
