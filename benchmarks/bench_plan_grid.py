"""Issue 21's "done when": each of its two runs returns a plan whose cost equals the cheapest point that the
simulator accepts at the plan's sized load, checked by re-simulating a grid around it: every (GPU type, TP, replicas)
cheaper than the winner, with token budgets 256-4,096 (including 768 and 1,536, which the plan's grid lacks),
max_num_seqs 32-256 and both KV cache dtypes.

    python benchmarks/bench_plan_grid.py [1 2]

Measured (2026-12-02, the chat workload's 1,000 requests): run 1 ($3.60/h, 1 x H200 TP1): 336 cheaper points, 168
do not start (L40S TP1), none of the other 168 meets (nearest: 1 x H100 TP1, budget 256, fp8, TTFT P99 40.7 s).
Run 2 (1 GPU, 1 x H100 TP1, budget 256, fp8): no cheaper point exists; the grid at the previous answer's cost
found the same three settings meeting on one H100 (budget 256, fp8).
"""
from __future__ import annotations

import itertools
import sys

from reader.config.context import LoadOptions
from reader.config.load import load_command_line
from reader.config.resolve import resolve
from reader.diagnose.checks import rule_errors
from reader.diagnose.scenario import build_scenario
from reader.diagnose.trials import try_changes
from reader.pipeline import workload_spec
from reader.plan import result as R
from reader.plan.search import Planner, PlanRequest
from reader.plan.space import Shape
from reader.sim.traffic import Traffic

PRICES = {"H100-SXM": 2.5, "H200-SXM": 3.6, "A100-80GB-SXM": 1.8, "L40S": 0.9}
RUNS = {"1": ({"itl": 80.0, "ttft": 2000.0}, 6.0, list(PRICES), PRICES),
        "2": ({"itl": 60.0, "ttft": 3000.0}, 3.0, ["H100-SXM"], {})}
GRID = list(itertools.product((256, 512, 768, 1024, 1536, 2048, 4096), (32, 64, 128, 256), ("auto", "fp8")))


def check(run: str) -> None:
    slos, rate, gpus, prices = RUNS[run]
    resolved = resolve(load_command_line("vllm serve Qwen/Qwen2.5-32B-Instruct",
                                         LoadOptions(gpu="H100-SXM", workload="chat")))
    traffic = Traffic(workload_spec(resolved, "chat"), rate)
    root = build_scenario(resolved, spec=traffic.spec, slos_ms=slos)
    planner = Planner(root, traffic, PlanRequest(gpus=gpus, prices=prices), rule_errors)
    w = planner.run().winner
    cost = w.cost_per_hour if w.cost_per_hour is not None else w.gpus_total
    points = [(gpu, tp, n, _knobs(b, s, d)) for gpu in gpus for tp, n in itertools.product((1, 2, 4, 8), range(1, 9))
              for b, s, d in GRID if tp * n <= 8 and prices.get(gpu, 1.0) * tp * n < cost - 1e-9 and s <= b]
    trials = try_changes(root, [planner.trial_change(Shape(g, tp), k, n) for g, tp, n, k in points], rule_errors)
    met = [p for p, t in zip(points, trials) if _meets(planner, p[2], t)]
    print(f"run {run}: plan costs {cost:g}; {len(points)} cheaper points, "
          f"{sum(t.status == 'simulated' for t in trials)} simulated, {len(met)} meet the SLOs {met[:3]}", flush=True)


def _knobs(budget: int, seqs: int, dtype: str) -> dict:
    return {"max_num_batched_tokens": budget, "max_num_seqs": seqs, **({"kv_cache_dtype": "fp8"} if dtype == "fp8"
                                                                         else {})}


def _meets(planner: Planner, replicas: int, trial) -> bool:
    load = planner.traffic.per_replica(replicas, planner.req.headroom)
    point = R.Point(candidate=0, replicas=replicas, load=load, stage="search", status=trial.status,
                    metrics=trial.metrics)
    return bool(planner.judge(point, trial.evidence).meets_slos)


if __name__ == "__main__":
    for name in sys.argv[1:] or list(RUNS):
        check(name)
