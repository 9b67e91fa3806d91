"""Building plans in-process for the tests: small workloads, few GPU types, one or two workers."""
from __future__ import annotations

from typing import Any, Optional

from reader.config.context import LoadOptions
from reader.config.load import load_command_line
from reader.config.resolve import resolve
from reader.diagnose.checks import rule_errors
from reader.diagnose.scenario import build_scenario
from reader.pipeline import workload_spec
from reader.plan.search import Planner, PlanRequest
from reader.sim.traffic import Traffic

SMALL_CHAT = {"num_requests": 150, "seed": 3, "arrival": {"process": "poisson", "rate": 4.0},
              "prompt_len": {"dist": "lognormal", "median": 500.0, "sigma": 0.6, "min": 32, "max": 3000},
              "output_len": {"dist": "lognormal", "median": 120.0, "sigma": 0.5, "min": 8, "max": 600}}


def make_plan(*args: Any, **kwargs: Any):
    return make_planner(*args, **kwargs).run()


def make_planner(command: str = "vllm serve meta-llama/Llama-3.1-8B-Instruct", workload: Any = None,
              slos: Optional[dict[str, float]] = None, version: str = "0.18.0", target_rate: Optional[float] = None,
              clock=None, trials=None, **request: Any):
    resolved = resolve(load_command_line(command, LoadOptions(vllm_version=version, gpu="H100-SXM")))
    spec = workload_spec(resolved, workload if workload is not None else SMALL_CHAT)
    traffic = Traffic(spec, target_rate)
    root = build_scenario(resolved, spec=traffic.spec, slos_ms=slos if slos is not None else {"itl": 50.0})
    request.setdefault("gpus", ["H100-SXM"])
    request.setdefault("workers", 1)
    extra = {k: v for k, v in (("clock", clock), ("trials", trials)) if v is not None}
    return Planner(root, traffic, PlanRequest(**request), rule_errors, **extra)
