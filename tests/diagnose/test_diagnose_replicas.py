"""A workload given for the whole service (`scope: service`) is split between the replicas the file runs, as a load
balancer would: each replica is simulated with its share, and the diagnosis says so. A workload without a scope is
one replica's, and the diagnosis says that too when the file runs several."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.diagnose.scenario import build_scenario

DEPLOYMENT = Path(__file__).resolve().parents[2] / "fixtures" / "forms" / "deployment-replicas.yaml"


def scenario(**workload):
    spec = {"num_requests": 40, "prompt_len": 300, "output_len": 60, **workload}
    d = load_deployment(str(DEPLOYMENT), LoadOptions(gpu="H100-SXM", workload=spec))
    return build_scenario(resolve(d))


def test_a_service_rate_is_split_between_the_replicas():
    sc = scenario(scope="service", arrival={"process": "poisson", "rate": 20.0})
    assert sc.spec.arrival.rate == pytest.approx(5.0)
    assert ("the workload is the whole service's (scope: service): each of the 4 replicas (Deployment spec.replicas, "
            "line 6) is simulated with 1/4 of it, 5 of 20 req/s") in sc.notes


def test_service_clients_are_split_between_the_replicas():
    sc = scenario(scope="service", arrival={"process": "closed", "concurrency": 32})
    assert sc.spec.arrival.concurrency == 8


def test_a_workload_without_a_scope_is_one_replicas_and_says_so():
    sc = scenario(arrival={"process": "poisson", "rate": 20.0})
    assert sc.spec.arrival.rate == 20.0
    assert any(n.startswith("the workload is read as one replica's load; the file runs 4 replicas") for n in sc.notes)
