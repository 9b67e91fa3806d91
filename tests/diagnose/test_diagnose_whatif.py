"""What-ifs: re-resolved, refused when vLLM would refuse them, ranked by what the simulation shows."""
from __future__ import annotations


import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_command_line
from reader.config.resolve import resolve
from reader.diagnose.checks import rule_errors
from reader.diagnose.scenario import build_scenario, rebuild
from reader.diagnose.sweep import SweepPoint, _best, _mark, parse_params
from reader.diagnose.trials import same_simulation
from reader.diagnose.metrics import Metrics
from reader.diagnose.whatif import Candidate, evaluate_all, objective
from reader.errors import ReaderError

WORKLOAD = {"num_requests": 80, "arrival": {"process": "poisson", "rate": 6.0}, "prompt_len": 300, "output_len": 60}


@pytest.fixture(scope="module")
def base():
    d = load_command_line("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 4096 --max-num-seqs 8",
                          LoadOptions(vllm_version="0.18.0", gpu="H100-SXM", workload=WORKLOAD))
    return build_scenario(resolve(d), slos_ms={"ttft": 2000.0})


def metrics(thr: float, itl: float = 20.0, ttft: float = 100.0, goodput=None, completed: int = 10) -> Metrics:
    return Metrics(output_throughput=thr, total_token_throughput=thr, request_throughput=1.0, ttft_mean_ms=ttft,
                   ttft_p99_ms=ttft, itl_median_ms=itl / 2, itl_p99_ms=itl, tpot_mean_ms=itl / 2,
                   e2el_p99_ms=1000.0, preemptions=0, completed=completed, goodput_rps=goodput)


def test_a_rebuilt_scenario_moves_dependent_defaults(base):
    changed = rebuild(base, {"max_num_seqs": 4096})
    # vLLM clamps the defaulted budget to max_num_seqs x max_model_len only when that is smaller; the budget
    # default stays 8192 here while max_num_seqs follows the change
    assert changed.resolved.value("max_num_seqs") == 4096
    assert changed.workload is base.workload and changed.spec is base.spec


def test_a_change_the_rules_refuse_is_marked_and_never_recommended(base):
    refused = Candidate(changes={"max_num_seqs": 16384, "max_num_batched_tokens": 8192}, reason="test",
                        addresses="admission")
    fine = Candidate(changes={"max_num_seqs": 64}, reason="test", addresses="admission")
    baseline = Metrics.of(base.run())
    results = {tuple(w.changes.items()): w for w in evaluate_all(base, [refused, fine], baseline, rule_errors, 1)}
    bad = results[tuple(refused.changes.items())]
    assert bad.status == "rejected_by_rules" and "max_num_batched_tokens" in bad.why_not and not bad.recommended
    good = results[tuple(fine.changes.items())]
    # simulated; on this light load its figures come out as configured, so it is marked as changing nothing
    assert good.status == "no_effect" and good.metrics.completed == WORKLOAD["num_requests"]
    assert "changes nothing" in good.why_not and not good.recommended


def test_a_change_that_leaves_the_simulation_as_it_was_is_not_simulated_again(base):
    # The workload's longest request is 360 tokens: any max_model_len that holds it schedules the same.
    same = Candidate(changes={"max_model_len": 2048}, reason="test", addresses="kv_memory")
    cut = Candidate(changes={"max_model_len": 320}, reason="test", addresses="kv_memory")
    baseline = Metrics.of(base.run())
    results = {tuple(w.changes.items()): w for w in evaluate_all(base, [same, cut], baseline, rule_errors, 1)}
    unchanged = results[tuple(same.changes.items())]
    assert unchanged.status == "no_effect" and unchanged.metrics is None and not unchanged.recommended
    assert results[tuple(cut.changes.items())].status == "simulated"  # requests now stop at 320 tokens


def test_same_simulation_compares_every_input_of_the_simulation(base):
    assert same_simulation(base, rebuild(base, {"max_model_len": 8192}))
    assert not same_simulation(base, rebuild(base, {"max_model_len": 300}))
    assert not same_simulation(base, rebuild(base, {"max_num_seqs": 9}))
    assert not same_simulation(base, rebuild(base, {"gpu_memory_utilization": 0.8}))   # fewer KV blocks
    assert not same_simulation(base, rebuild(base, {"enforce_eager": True}))           # other step times


def test_objective_prefers_goodput_under_slos_and_guards_latency():
    base = metrics(100.0, goodput=1.0)
    assert objective(metrics(100.0, goodput=2.0), base, {"ttft": 1.0}) == pytest.approx(2.0)
    assert objective(metrics(150.0), metrics(100.0), {}) == pytest.approx(1.5)
    worse_itl = objective(metrics(150.0, itl=60.0), metrics(100.0, itl=20.0), {})
    assert worse_itl < 1.5  # a throughput gain paid for in ITL P99 is discounted
    assert objective(metrics(10.0), metrics(0.0, completed=0), {}) > 2.0  # anything that starts beats nothing


def test_a_few_lucky_requests_within_the_slos_do_not_outrank_doubled_throughput():
    slos = {"ttft": 2000.0, "itl": 60.0}
    base = metrics(100.0, goodput=0.004)            # 1.0 req/s completed, 0.4% within the SLOs
    doubled = metrics(200.0, goodput=0.0)
    lucky = metrics(101.0, goodput=0.02)
    assert objective(doubled, base, slos) > objective(lucky, base, slos) > 1.0


def test_with_the_same_goodput_the_change_nearer_the_slo_targets_wins():
    slos = {"itl": 40.0}
    base = metrics(100.0, itl=276.0, goodput=0.5)
    closer = metrics(100.0, itl=70.0, goodput=0.5)
    assert objective(closer, base, slos) > 1.02      # recommended: ITL P99 moved 4x toward its target
    assert objective(base, base, slos) == pytest.approx(1.0)
    # Without SLOs a better tail earns nothing, a worse one still costs.
    assert objective(closer, base, {}) == pytest.approx(1.0)
    assert objective(base, closer, {}) < 1.0


def test_sweep_parameters_are_numeric_vllm_settings():
    assert parse_params(["max-num-batched-tokens=512,1024"], lambda d: True) == {"max_num_batched_tokens": [512, 1024]}
    assert parse_params(["gpu_memory_utilization=0.85,0.9"], lambda d: True) == {"gpu_memory_utilization": [0.85, 0.9]}
    for bad in (["max_num_seqs"], ["max_num_seqs=a,b"], []):
        with pytest.raises(ReaderError):
            parse_params(bad, lambda d: True)
    with pytest.raises(ReaderError):
        parse_params(["enable_prefix_caching=1"], lambda d: False)


def test_pareto_front_and_best_within_slo():
    pts = [SweepPoint(values={"b": 1}, status="simulated", metrics=metrics(100.0, itl=10.0)),
           SweepPoint(values={"b": 2}, status="simulated", metrics=metrics(150.0, itl=20.0)),
           SweepPoint(values={"b": 3}, status="simulated", metrics=metrics(140.0, itl=30.0)),  # dominated by b=2
           SweepPoint(values={"b": 4}, status="simulated", metrics=metrics(200.0, itl=60.0))]
    _mark(pts, {"itl": 40.0})
    assert [p.pareto for p in pts] == [True, True, False, True]
    assert [p.within_slo for p in pts] == [True, True, True, False]
    assert _best(pts) == 1


def test_a_what_if_whose_figures_are_the_baselines_is_no_recommendation():
    """Issue 27: `diagnose server.log` listed kv_cache_dtype=fp8 at 1,356 -> 1,356 tok/s, every tail the same."""
    from reader.diagnose.metrics import Metrics
    from reader.diagnose.whatif import _changes_nothing

    base = Metrics(output_throughput=1356.0, total_token_throughput=4000.0, request_throughput=5.0,
                   ttft_mean_ms=20.0, ttft_p99_ms=36.7, itl_median_ms=0.6, itl_p99_ms=0.7, tpot_mean_ms=0.7,
                   e2el_p99_ms=120.0, preemptions=0, completed=100)
    assert _changes_nothing(base.model_copy(update={"output_throughput": 1356.4}), base)
    assert not _changes_nothing(base.model_copy(update={"ttft_p99_ms": 35.1}), base)
    assert not _changes_nothing(base.model_copy(update={"preemptions": 3}), base)
