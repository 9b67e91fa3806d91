"""The plan's optimum is the optimum of its space, proven against brute force: on small spaces (2 GPU types, TP 1-4,
5 token budgets, 3 max_num_seqs, 1-4 replicas), the cost `plan` returns equals the cheapest point of an exhaustive
simulation of every (shape, knob setting, replica count); where nothing meets the SLOs, the closest-miss advice
names the SLO the nearest point misses by most. Both searches share one memo of trials, so the plan costs nothing
beyond the brute force."""
from __future__ import annotations

import itertools

import pytest

from _plan_helpers import make_planner
from reader.plan import result as R
from reader.diagnose.trials import try_changes
from reader.diagnose.slo_fit import p99
from reader.plan.space import KnobSpace, Shape

pytestmark = pytest.mark.slow

SPACE = KnobSpace(budgets=(512, 1024, 2048, 4096, 8192), seqs=(64, 128, 256), kv_dtypes=("auto",), unchunked=False,
                  long_prefill=False, tp_sizes=(1, 2, 4), pp_sizes=(1,))
QWEN = "vllm serve Qwen/Qwen2.5-32B-Instruct"
LLAMA = "vllm serve meta-llama/Llama-3.1-8B-Instruct"
CHAT = {"num_requests": 40, "seed": 5, "arrival": {"process": "poisson", "rate": 4.0},
        "prompt_len": {"dist": "lognormal", "median": 700.0, "sigma": 0.8, "min": 32, "max": 6000},
        "output_len": {"dist": "lognormal", "median": 200.0, "sigma": 0.6, "min": 8, "max": 800}}
# 40 clients in a closed loop: at one replica every max_num_seqs of the space admits all of them, at two the
# smallest does, so the search simulates one of each such group for the rest (Planner._stand_ins). Three requests
# per client: with one each, a replica's run is a single wave whose ITL P99 sits on whichever few ITLs stalled
# behind the wave's prompts (Llama-3.1-8B on H100, budget 8,192: 6.8 ms at 40 clients, 26.1 ms at 20).
CLIENTS = {**CHAT, "num_requests": 120, "arrival": {"process": "closed", "concurrency": 40}}
CASES = {  # name: (command, SLOs, target rate, GPU types, prices[, workload])
    "first user run (prices)": (QWEN, {"itl": 80.0, "ttft": 2000.0}, 6.0, ["H100-SXM", "H200-SXM"],
                                {"H100-SXM": 2.5, "H200-SXM": 3.6}),
    "second user run": (QWEN, {"itl": 60.0, "ttft": 3000.0}, 3.0, ["H100-SXM", "A100-80GB-SXM"], {}),
    "a small model, a tight ITL": (LLAMA, {"itl": 25.0, "ttft": 1000.0}, 20.0, ["H100-SXM", "L40S"],
                                   {"H100-SXM": 2.5, "L40S": 0.9}),
    "clients in a closed loop": (LLAMA, {"itl": 25.0, "ttft": 1000.0}, None, ["H100-SXM", "L40S"],
                                 {"H100-SXM": 2.5, "L40S": 0.9}, CLIENTS),
}
UNMET = (QWEN, {"itl": 30.0, "ttft": 300.0}, 3.0, ["H100-SXM", "A100-80GB-SXM"], {})


class Memo:
    """try_changes with every trial kept: a trial is a pure function of its change."""

    def __init__(self):
        self.seen = {}

    def __call__(self, root, changes, rule_errors, workers=None, **options):
        keys = [_key(c) for c in changes]
        todo = {k: c for k, c in zip(keys, changes) if k not in self.seen}
        for k, trial in zip(todo, try_changes(root, list(todo.values()), rule_errors, workers, **options)):
            self.seen[k] = trial
        return [self.seen[k] for k in keys]


def _key(change):
    return (tuple(sorted((k, repr(v)) for k, v in change.flags.items())), change.gpu, change.gpu_count,
            repr(change.workload), repr(change.stop_beyond_ms))


def planner(case, memo):
    command, slos, rate, gpus, prices, *workload = case
    return make_planner(command, workload=workload[0] if workload else CHAT, slos=slos, target_rate=rate, gpus=gpus, prices=prices, max_gpus=4,
                        space=SPACE, trials=memo, workers=2)


def brute_force(planner, plan, memo):
    """Every knob setting of the space on every shape that starts, at every replica count within --max-gpus:
    (setting, cost, judged point)."""
    grid = []
    for s in plan.shapes:
        if s.outcome in ("refused_by_rules", "does_not_start"):
            continue
        shape = Shape(s.gpu, s.tp, s.pp)
        for budget, seqs, n in itertools.product(SPACE.budgets, SPACE.seqs, range(1, 4 // shape.gpus + 1)):
            if seqs <= budget:
                knobs = {"max_num_batched_tokens": budget, "max_num_seqs": seqs}
                grid.append(((shape, budget, seqs), n, planner.trial_change(shape, knobs, n)))
    trials = memo(planner.root, [c for _, _, c in grid], planner.rule_errors, 2)
    out = []
    for (setting, n, change), trial in zip(grid, trials):
        arrival = change.workload.arrival
        load = arrival.rate if arrival.process != "closed" else arrival.concurrency
        point = R.Point(candidate=0, replicas=n, load=load, stage="search",
                        status=trial.status, metrics=trial.metrics)
        shape = setting[0]
        out.append((setting, plan.prices.get(shape.gpu, 1.0) * shape.gpus * n, planner.judge(point, trial.evidence)))
    return out


def searched(case):
    memo = Memo()
    p = planner(case, memo)
    plan = p.run()
    return plan, brute_force(p, plan, memo)


_SEARCHED = {}


@pytest.fixture(scope="module", params=list(CASES))
def met_case(request):
    if request.param not in _SEARCHED:
        _SEARCHED[request.param] = searched(CASES[request.param])
    return _SEARCHED[request.param]


def test_in_a_closed_loop_a_max_num_seqs_above_the_clients_is_simulated_once():
    """...and the plan above still costs the brute force's cheapest (the same case is among met_case's)."""
    name = "clients in a closed loop"
    if name not in _SEARCHED:
        _SEARCHED[name] = searched(CASES[name])
    plan, points = _SEARCHED[name]
    assert plan.counts.admitting_all > 0
    assert plan.counts.simulated < len(points)


def test_the_plan_costs_what_the_cheapest_point_of_the_whole_space_costs(met_case):
    plan, points = met_case
    cheapest = min(cost for _, cost, p in points if p.meets_slos)
    w = plan.winner
    assert w is not None
    assert (w.cost_per_hour if w.cost_per_hour is not None else w.gpus_total) == pytest.approx(cheapest)


def test_more_replicas_never_turn_a_met_setting_into_a_miss(met_case):
    """The property the search's bisection rests on, at every setting of the space."""
    _, points = met_case
    by_setting = {}
    for setting, _, p in sorted(points, key=lambda sp: sp[2].replicas):
        by_setting.setdefault(setting, []).append(bool(p.meets_slos))
    for setting, met in by_setting.items():
        assert met == sorted(met), setting


def test_where_nothing_meets_the_slos_the_advice_names_the_slo_the_nearest_point_misses_most():
    plan, points = searched(UNMET)
    assert plan.winner is None and not any(p.meets_slos for _, _, p in points)
    nearest = max((p for _, _, p in points if p.margin is not None), key=lambda p: p.margin)
    missed_most = min(plan.slos_ms, key=lambda m: plan.slos_ms[m] / p99(nearest.metrics, m))
    assert plan.closest.closest_metric == missed_most
