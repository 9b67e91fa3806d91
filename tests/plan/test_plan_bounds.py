"""The bounds a plan prunes with must never drop a shape that works: floors below what the simulator finds,
a rate bound above what it completes; and the knob values they narrow the grid to."""
from __future__ import annotations

import numpy as np
import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_command_line
from reader.config.resolve import resolve
from reader.diagnose.scenario import build_scenario
from reader.plan.bounds import below_floor, min_replicas, shape_bounds, useful_budgets, useful_seqs

WORKLOAD = {"num_requests": 200, "seed": 1, "arrival": {"process": "poisson", "rate": 200.0},
            "prompt_len": {"dist": "lognormal", "median": 800.0, "sigma": 0.7, "min": 32, "max": 4000},
            "output_len": {"dist": "lognormal", "median": 150.0, "sigma": 0.5, "min": 8, "max": 600}}


@pytest.fixture(scope="module", params=[("meta-llama/Llama-3.1-8B-Instruct", "H100-SXM", ""),
                                        ("meta-llama/Llama-3.1-8B-Instruct", "L40S", ""),
                                        ("Qwen/Qwen2.5-32B-Instruct", "A100-80GB-SXM", " --tensor-parallel-size 2")])
def saturated(request):
    """A shape flooded with arrivals far beyond what it can serve: it runs at its real capacity."""
    model, gpu, extra = request.param
    d = load_command_line(f"vllm serve {model} --max-model-len 8192{extra}",
                          LoadOptions(vllm_version="0.18.0", gpu=gpu, workload=WORKLOAD))
    scenario = build_scenario(resolve(d))
    return scenario, scenario.run()


def test_the_floors_are_below_every_simulated_p99(saturated):
    scenario, result = saturated
    b = shape_bounds(scenario, {}, seqs_cap=2048)
    assert b.itl_floor_ms <= result.itl_ms.p99
    assert b.ttft_floor_ms <= result.ttft_ms.p99


def test_the_rate_bound_is_above_what_the_replica_completes_when_flooded(saturated):
    scenario, result = saturated
    b = shape_bounds(scenario, {}, seqs_cap=2048)
    assert b.max_rate >= result.request_throughput
    assert b.max_rate <= 5 * result.request_throughput  # optimistic, not useless


def test_an_itl_target_caps_the_batch_the_bound_assumes(saturated):
    scenario, _ = saturated
    loose = shape_bounds(scenario, {}, seqs_cap=2048)
    tight = shape_bounds(scenario, {"itl": loose.itl_floor_ms * 1.5}, seqs_cap=2048)
    assert tight.batch < loose.batch and tight.max_rate < loose.max_rate


def test_a_target_below_a_floor_names_it(saturated):
    scenario, _ = saturated
    b = shape_bounds(scenario, {}, seqs_cap=2048)
    assert below_floor(b, {"itl": b.itl_floor_ms / 2}).startswith("ITL floor")
    assert below_floor(b, {"ttft": b.ttft_floor_ms / 2}).startswith("TTFT floor")
    assert below_floor(b, {"itl": b.itl_floor_ms * 2, "ttft": b.ttft_floor_ms * 2}) is None


def test_the_fewest_replicas_follow_the_rate_bound(saturated):
    scenario, _ = saturated
    b = shape_bounds(scenario, {}, seqs_cap=2048)
    assert min_replicas(b, b.max_rate * 2.5, integral=False) == 3
    assert min_replicas(b, b.max_rate * 0.5, integral=False) == 1
    assert min_replicas(b, 1e9, integral=True) == 1  # clients and batches have no rate bound


BUDGETS = (256, 512, 1024, 2048, 4096, 8192, 16384)


def test_a_ttft_target_drops_the_budgets_too_small_to_prefill_the_p99_prompt_in_time(saturated):
    """ceil(prompt / budget) steps, each at least the ITL floor: a budget whose steps alone pass the target goes."""
    scenario, _ = saturated
    b = shape_bounds(scenario, {}, seqs_cap=2048)
    steps_allowed = 4  # the TTFT target holds four of the shortest steps
    kept = useful_budgets(scenario, b, {"ttft": b.itl_floor_ms * steps_allowed}, BUDGETS)
    prompt = int(np.percentile(scenario.workload.prompt_len, 99))
    assert kept and all(-(-prompt // x) <= steps_allowed for x in kept)
    assert all(-(-prompt // x) > steps_allowed for x in BUDGETS if x not in kept)


def test_an_itl_target_keeps_budgets_up_to_the_first_whose_prefill_step_passes_it(saturated):
    scenario, _ = saturated
    b = shape_bounds(scenario, {}, seqs_cap=2048)
    loose = useful_budgets(scenario, b, {}, BUDGETS)
    tight = useful_budgets(scenario, b, {"itl": b.itl_floor_ms * 1.5}, BUDGETS)
    assert loose == list(BUDGETS)
    assert tight == list(BUDGETS[:len(tight)]) and len(tight) < len(BUDGETS)  # smallest first, one past the target


def test_max_num_seqs_stops_at_the_first_value_covering_what_the_kv_cache_holds(saturated):
    scenario, _ = saturated
    b = shape_bounds(scenario, {}, seqs_cap=2048)
    kept = useful_seqs(b, (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192))
    assert kept[-1] >= 2 * b.kv_requests or kept[-1] == 8192
    assert all(s < 2 * b.kv_requests for s in kept[:-1])
