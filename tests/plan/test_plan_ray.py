"""plan and sweep --ray: the same trials as tasks on a Ray cluster give byte-identical plans and sweeps to local
worker processes (same seed). The test starts a local Ray instance of its own; skipped where Ray is not installed
(it is the optional extra `vllm-reader[ray]`)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from _plan_helpers import make_plan, make_planner
from reader.diagnose.checks import rule_errors
from reader.diagnose.sweep import run_sweep
from reader.plan.space import KnobSpace

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SMALL = KnobSpace(budgets=(512, 2048), seqs=(64, 256), kv_dtypes=("auto",), unchunked=False, long_prefill=False,
                  tp_sizes=(1, 2), pp_sizes=(1,))
FEW = {"num_requests": 40, "seed": 3, "arrival": {"process": "poisson", "rate": 4.0},
       "prompt_len": {"dist": "lognormal", "median": 500.0, "sigma": 0.6, "min": 32, "max": 3000},
       "output_len": {"dist": "lognormal", "median": 120.0, "sigma": 0.5, "min": 8, "max": 600}}


@pytest.fixture(scope="module")
def cluster():
    """A local Ray instance: its workers import this checkout."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def planned(**extra):
    return make_plan(workload=FEW, slos={"itl": 40.0, "ttft": 2000.0}, target_rate=12.0, max_gpus=2,
                     gpus=["H100-SXM"], space=SMALL, **extra)


def test_a_plan_on_ray_is_byte_identical_to_the_local_one(cluster):
    local = planned(workers=2)
    assert local.winner is not None
    assert planned(ray=cluster).model_dump_json() == local.model_dump_json()


def test_a_sweep_on_ray_is_the_local_sweep(cluster):
    root = make_planner(workload=FEW, slos={"itl": 40.0}).root
    params = {"max_num_batched_tokens": [512, 2048]}
    local = run_sweep(root, params, rule_errors, workers=2)
    assert run_sweep(root, params, rule_errors, ray=cluster).model_dump_json() == local.model_dump_json()


def test_an_address_no_cluster_answers_is_bad_input_at_once():
    """Ray itself retries such an address for minutes."""
    from reader.diagnose.ray_trials import _reachable
    from reader.errors import ReaderError

    with pytest.raises(ReaderError, match="no Ray cluster answers there"):
        _reachable("127.0.0.1:1")
    _reachable("auto")  # found by Ray itself, on a node of the cluster
