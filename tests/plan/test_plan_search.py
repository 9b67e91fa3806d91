"""The search: pruned by the rules, the capacity model and the bounds before simulating; the cheapest plan that
meets the SLOs, its replica count and capacity; the same plan for the same seed."""
from __future__ import annotations

import itertools

import pytest

from _plan_helpers import SMALL_CHAT, make_plan


@pytest.fixture(scope="module")
def plan():
    return make_plan(slos={"itl": 40.0, "ttft": 2000.0}, target_rate=30.0)


def test_the_winner_meets_the_slos_at_its_sized_and_target_loads(plan):
    w = plan.winner
    assert w is not None
    assert w.metrics.itl_p99_ms <= 40.0 and w.metrics.ttft_p99_ms <= 2000.0
    assert w.at_target.itl_p99_ms <= 40.0 and w.at_target.ttft_p99_ms <= 2000.0
    assert w.sizing.target_load == pytest.approx(30.0 / w.replicas)
    assert w.sizing.sized_load == pytest.approx(30.0 * 1.2 / w.replicas)


def assert_fewest_replicas(plan):
    """Either the rate bound allows no fewer, or one replica fewer was simulated and missed (with every setting
    that met at more replicas: the others miss at fewer anyway)."""
    searched = [s for s in plan.shapes if s.replicas is not None]
    assert searched
    for s in searched:
        fewer = [p for p in plan.points if p.replicas == s.replicas - 1 and p.stage == "search"
                 and (plan.candidates[p.candidate].gpu, plan.candidates[p.candidate].tp,
                      plan.candidates[p.candidate].pp) == (s.gpu, s.tp, s.pp)]
        assert s.replicas == s.min_replicas or (fewer and not any(p.meets_slos for p in fewer))


def test_each_shapes_replica_count_is_the_fewest_that_meets_the_slos(plan):
    assert_fewest_replicas(plan)


def test_the_capacity_is_the_highest_load_simulated_that_meets_the_slos(plan):
    s = plan.winner.sizing
    assert s.capacity >= s.sized_load
    assert s.headroom_pct == pytest.approx(100 * (s.capacity / s.target_load - 1))
    if not s.capacity_is_lower_bound:
        assert s.above_load > s.capacity and s.above is not None
        assert s.above.itl_p99_ms > 40.0 or s.above.ttft_p99_ms > 2000.0 or s.above_overload


def test_the_pareto_front_has_no_dominated_point(plan):
    front = [p for p in plan.points if p.pareto]
    assert front
    for p, q in itertools.permutations(front, 2):
        better = (q.output_per_gpu >= p.output_per_gpu and q.metrics.itl_p99_ms <= p.metrics.itl_p99_ms
                  and q.metrics.ttft_p99_ms <= p.metrics.ttft_p99_ms)
        assert not better or (q.output_per_gpu, q.metrics.itl_p99_ms, q.metrics.ttft_p99_ms) == \
            (p.output_per_gpu, p.metrics.itl_p99_ms, p.metrics.ttft_p99_ms)


def test_a_plan_is_the_same_for_the_same_seed_whatever_the_worker_count(plan):
    again = make_plan(slos={"itl": 40.0, "ttft": 2000.0}, target_rate=30.0, workers=2)
    assert again.model_dump() == plan.model_dump()


def test_another_seed_draws_other_requests():
    a = make_plan(slos={"itl": 40.0}, workload=dict(SMALL_CHAT, seed=1))
    b = make_plan(slos={"itl": 40.0}, workload=dict(SMALL_CHAT, seed=2))
    assert a.points[0].metrics != b.points[0].metrics


def test_a_larger_target_takes_more_replicas():
    small = make_plan(slos={"itl": 40.0}, target_rate=4.0, max_gpus=16)
    large = make_plan(slos={"itl": 40.0}, target_rate=120.0, max_gpus=16)
    assert large.winner.gpus_total > small.winner.gpus_total
    assert large.winner.replicas > 1
    assert_fewest_replicas(large)


def test_a_config_vllm_refuses_is_never_simulated():
    spec = '\'{"method": "draft_model", "model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 4}\''
    refused = make_plan(f"vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config {spec}", version="0.10.0")
    assert refused.winner is None and refused.counts.simulated == 0 and not refused.points
    assert {s.outcome for s in refused.shapes} == {"refused_by_rules"}
    assert "VR304" in refused.shapes[0].reason
    assert any("--vary" in need for need in refused.closest.needs)


def test_a_shape_that_would_not_start_is_dropped_with_vllms_reason():
    plan = make_plan("vllm serve meta-llama/Llama-3.1-70B-Instruct", gpus=["L40S"], max_gpus=2,
                     slos={"itl": 200.0})
    assert plan.counts.does_not_start == len(plan.shapes) and plan.counts.simulated == 0
    assert all(s.outcome == "does_not_start" for s in plan.shapes)
    assert "memory" in plan.shapes[0].reason.lower() or "kv cache" in plan.shapes[0].reason.lower()


def test_an_slo_below_every_floor_is_answered_with_the_floor():
    plan = make_plan(slos={"itl": 1.0})
    assert plan.winner is None and plan.counts.simulated == 0
    assert {s.outcome for s in plan.shapes} == {"below_floor"}
    gap = next(g for g in plan.closest.gaps if g.metric == "itl")
    assert gap.floor_ms > 1.0
    assert any("floor" in need for need in plan.closest.needs)


def test_a_load_beyond_the_gpu_limit_is_dropped_by_the_rate_bound():
    plan = make_plan(slos={"itl": 40.0}, target_rate=2000.0, max_gpus=2)
    assert plan.winner is None and plan.counts.simulated == 0
    assert {s.outcome for s in plan.shapes} == {"needs_more_gpus"}
    assert any("--max-gpus" in need for need in plan.closest.needs)


def test_prices_choose_the_cheaper_gpu_type_and_cost_the_plan():
    cheap_h200 = make_plan(slos={"itl": 40.0}, gpus=["H100-SXM", "H200-SXM"],
                           prices={"H100-SXM": 9.0, "H200-SXM": 3.0})
    cheap_h100 = make_plan(slos={"itl": 40.0}, gpus=["H100-SXM", "H200-SXM"],
                           prices={"H100-SXM": 1.0, "H200-SXM": 30.0})
    assert cheap_h200.candidates[cheap_h200.winner.candidate].gpu == "H200-SXM"
    assert cheap_h100.candidates[cheap_h100.winner.candidate].gpu == "H100-SXM"
    w = cheap_h100.winner
    assert w.cost_per_hour == pytest.approx(1.0 * w.gpus_total)
    per_hour_tokens = w.at_target.output_throughput * w.replicas * 3600
    assert w.cost_per_million_output_tokens == pytest.approx(w.cost_per_hour / per_hour_tokens * 1e6)


def test_a_budget_that_runs_out_says_what_it_left_out():
    ticks = itertools.count()
    plan = make_plan(slos={"itl": 40.0}, gpus=["H100-SXM", "L40S"], budget_s=0.5, clock=lambda: next(ticks))
    assert plan.skipped and "the search of" in plan.skipped[0]
    assert plan.counts.simulated == 0
    assert all(s.outcome in ("skipped", "below_floor", "needs_more_gpus", "does_not_start") for s in plan.shapes)


def test_every_shape_says_why_it_lost(plan):
    """Its cheapest setting meeting the SLOs and its cost, or the bound or the cost that rules it out."""
    assert all(s.reason for s in plan.shapes)
    won = [s for s in plan.shapes if s.outcome == "planned"]
    assert won and all(s.replicas and s.reason.startswith("cheapest setting:") for s in won)
    w = plan.winner
    c = plan.candidates[w.candidate]
    mine = next(s for s in won if (s.gpu, s.tp, s.pp) == (c.gpu, c.tp, c.pp))
    assert mine.replicas == w.replicas and mine.candidate == w.candidate
    assert all("no less than the plan found" in s.reason for s in plan.shapes if s.outcome == "not_cheaper")


def test_a_moe_config_that_sets_expert_parallelism_has_it_searched_with_the_shape():
    plan = make_plan("vllm serve Qwen/Qwen3-30B-A3B -tp 2 --enable-expert-parallel", max_gpus=2, slos={"itl": 1.0})
    assert "enable_expert_parallel" not in plan.pinned
    assert {(s.tp, s.ep) for s in plan.shapes} >= {(2, True), (2, False), (1, False)}
    assert plan.counts.simulated == 0  # below every floor: answered before simulating
