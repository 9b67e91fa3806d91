"""The bounds a plan prunes with must never drop a shape that works: floors below what the simulator finds,
a rate bound above what it completes."""
from __future__ import annotations

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_command_line
from reader.config.resolve import resolve
from reader.diagnose.scenario import build_scenario
from reader.plan.bounds import below_floor, min_replicas, shape_bounds

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
