"""plan: the cheapest replica configuration and count that meets the SLOs at the target load.

An exact search over the what-if trial runner (`diagnose.trials`): every candidate is resolved again,
checked by the version's rules and sized by the capacity model before it is simulated.

1. shapes: every GPU type x TP x PP within a node, and for a MoE model each TP > 1 also with expert
   parallelism. Refused by the rules, not starting, or unable by the bounds (`bounds.py`) to meet an SLO:
   dropped with the reason.
2. per shape, cheapest first, the knobs that decide the SLOs (token budget, max_num_seqs, KV-cache
   dtype, chunked prefill, long_prefill_token_threshold) are searched jointly with the replica count:
   every setting of the grid (narrowed by the shape's bounds) is simulated at the most replicas that
   could still beat the best plan found, and the fewest replicas any of them needs is found by
   bisection. This is exact over the grid because, at a fixed setting, more replicas never hurt at the
   per-replica load (each carries less; tests/plan/test_plan_exact.py checks it, and the whole search
   against brute force). Search trials end once they certainly miss a P99 by far (FAR_MISS), and a
   max_num_seqs above the requests a replica can hold is simulated once (`_stand_ins`).
3. sizing: the winner at the target load (no headroom), and its per-replica capacity, bracketed.

A shape whose one replica already costs as much as the best plan is never simulated. Deterministic for
a seed: every round's trials are fixed by earlier results, and their results come back in order. A
--budget cut ends the search between rounds and says what it left out.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .. import __version__
from ..calibration.select import describe_use
from ..catalog.load import get_gpu
from ..diagnose.bracket import BISECT_ROUNDS, narrow
from ..diagnose.scenario import Change, Scenario
from ..diagnose.trials import RuleErrors, Trial, prepare, same_simulation, try_changes
from ..sim.traffic import Traffic
from ..sim.workload import describe
from . import result as R
from .bounds import Bounds, below_floor, min_replicas, shape_bounds, useful_budgets, useful_seqs
from .closest import nearest_miss
from .launch import build_launch
from .scoring import judge, mark_pareto, miss_words, score
from .space import KNOBS, PARALLEL, KnobSpace, Shape, knob_grid, model_max_len, shapes

# A search trial stops once a P99 is certainly above this many times its target: it misses, and by so much that
# its figures matter to no choice (the nearest miss, where nothing meets, is simulated to the end).
FAR_MISS = 2.0
ProgressFn = Callable[[str, int, int], None]  # (stage, simulations done, simulations in this round)
TrialsFn = Callable[..., list[Trial]]  # try_changes, or what runs its trials elsewhere


@dataclass
class PlanRequest:
    gpus: list[str]
    max_gpus: int = 8
    gpus_per_node: int = 8
    prices: dict[str, float] = field(default_factory=dict)
    headroom: float = 0.2
    vary: frozenset[str] = frozenset()
    budget_s: float = 300.0
    workers: Optional[int] = None
    ray: Optional[str] = None  # a Ray cluster's address (or "auto") to run the trials on
    space: KnobSpace = field(default_factory=KnobSpace)


@dataclass
class _Option:
    """One knob setting on a shape, checked and bounded."""

    candidate: int
    fewest: int  # the rate bound's fewest replicas


@dataclass
class _ShapeState:
    shape: Shape
    result: R.ShapeResult
    bounds: Bounds  # with vLLM's defaults for the knobs
    n_cap: int
    options: Optional[list[_Option]] = None  # built when the shape is searched
    found: Optional[tuple[int, int, int]] = None  # (candidate, replicas, point) of its cheapest setting
    refusal: Optional[str] = None  # why the first knob setting refused was


class Planner:
    def __init__(self, root: Scenario, traffic: Traffic, req: PlanRequest, rule_errors: RuleErrors,
                 progress: Optional[ProgressFn] = None, clock: Callable[[], float] = time.monotonic,
                 trials: TrialsFn = try_changes) -> None:
        self.root, self.traffic, self.req, self.rule_errors = root, traffic, req, rule_errors
        self.trials = trials
        self.progress = progress
        self.clock = clock
        self.started = clock()
        self.slos = dict(root.slos_ms)
        self.pinned = _pinned(root, req.vary)
        # A flag released with --vary starts from vLLM's default (None removes the config's value).
        self.released = {dest: None for dest in req.vary if dest in root.resolved.deployment.flags}
        self.max_len = self.pinned.get("max_model_len") or model_max_len(root.workload.longest_request)
        self.plan = R.Plan(
            tool_version=__version__, source=root.resolved.deployment.source,
            model=root.resolved.deployment.model or root.resolved.require_model().id,
            vllm_version=root.resolved.version, workload=describe(traffic.spec),
            traffic=R.Traffic(kind=traffic.kind, total=traffic.total, unit=traffic.unit, headroom=req.headroom),
            slos_ms=self.slos, seed=root.seed, gpus=list(req.gpus), max_gpus=req.max_gpus,
            gpus_per_node=req.gpus_per_node, prices=dict(req.prices), pinned=self.pinned,
            notes=list(traffic.notes),
            calibration=describe_use(root.resolved) if root.resolved.calibration is not None else None)
        self.flags: list[dict[str, Any]] = []  # per candidate: every flag a trial sets
        self.scenarios: list[Scenario] = []  # per candidate: prepared in this process (rules, capacity)
        self.keys: dict[tuple, int] = {}
        self.evidence: dict[int, Any] = {}  # per point index: the simulation's Evidence

    # ---- the stages --------------------------------------------------------------------------------

    def run(self) -> R.Plan:
        states = self._shapes()
        best = None
        for st in sorted(states, key=lambda st: (self._cost(st.shape, self._fewest(st)), st.shape)):
            if self._over_budget():
                self._skip(st)
                continue
            self._search(st, best)
            if st.found is not None and (best is None or self._cost(st.shape, st.found[1]) < best[0]):
                best = (self._cost(st.shape, st.found[1]), st)
        self._choose(states, best[1] if best else None)
        if self.plan.winner is None:
            self._finish_stopped()
        mark_pareto(self.plan.points)
        if self.plan.winner is None:
            self.plan.closest = nearest_miss(self.plan, self.pinned)
        return self.plan

    def _shapes(self) -> list[_ShapeState]:
        model = self.root.resolved.require_model()
        space = self.req.space
        found, left_out = shapes([get_gpu(g) for g in self.req.gpus], model, self.req.max_gpus,
                                 self.req.gpus_per_node, space.tp_sizes, space.pp_sizes, space.expert_parallel)
        self.plan.notes += [f"not searched: {why}" for why in left_out]
        found = self._calibrated(found)
        if "tensor_parallel_size" in self.root.resolved.deployment.flags:
            self.plan.notes.append("the config's parallel sizes are searched with the GPU type (they belong to it)")
        self.plan.counts.shapes = len(found)
        return [st for st in (self._shape(shape) for shape in found) if st is not None]

    def _calibrated(self, found: list[Shape]) -> list[Shape]:
        """With a calibration profile, the shapes it was fitted for: its step-time coefficients (and memory terms)
        describe that GPU at that parallel layout, so every other shape is skipped with the profile's reason."""
        from ..calibration.select import problems, target_of
        from ..errors import ReaderError

        r = self.root.resolved
        if r.calibration is None:
            return found
        base, name = target_of(r), f"the calibration profile {r.calibration_path or r.calibration.name}"
        kept: list[Shape] = []
        skipped: dict[str, str] = {}
        for shape in found:
            target = base.model_copy(update={"device": shape.gpu, "tensor_parallel_size": shape.tp,
                                             "pipeline_parallel_size": shape.pp})
            try:
                problems(r.calibration, target, name)
            except ReaderError as refusal:
                skipped[shape.label] = refusal.message
                continue
            kept.append(shape)
        self.plan.notes += [f"not searched: {label}: {why}" for label, why in skipped.items()]
        if not kept:
            on = r.calibration.fitted_on
            raise ReaderError(
                f"{name} was fitted on {on.device} at TP {on.tensor_parallel_size} x PP {on.pipeline_parallel_size}, "
                f"and none of the shapes searched ({', '.join(skipped) or 'none'}) is that: its step times hold for "
                f"that hardware only. Give --gpus {on.device} (with room for "
                f"{on.tensor_parallel_size * on.pipeline_parallel_size} GPUs per replica), or drop --calibration.",
                key="--calibration")
        return kept

    def _shape(self, shape: Shape) -> Optional[_ShapeState]:
        res = R.ShapeResult(gpu=shape.gpu, tp=shape.tp, pp=shape.pp, ep=shape.ep, gpus=shape.gpus, outcome="planned")
        self.plan.shapes.append(res)
        index, refusal = self._candidate(shape, {})
        if index is None:
            res.outcome = "refused_by_rules" if refusal.status == "rejected_by_rules" else "does_not_start"
            res.reason = refusal.why_not or refusal.status
            self._count(res.outcome)
            return None
        res.candidate = index
        seqs_cap = self._seqs(self.scenarios[index], max(self.req.space.seqs))
        res.bounds = shape_bounds(self.scenarios[index], self.slos, seqs_cap)
        return _ShapeState(shape=shape, result=res, bounds=res.bounds, n_cap=self.req.max_gpus // shape.gpus)

    def _fewest(self, st: _ShapeState) -> int:
        """The rate bound's fewest replicas with the default knobs: the order shapes are searched in (only)."""
        return min_replicas(st.bounds, self.traffic.per_replica(1, self.req.headroom), self.traffic.integral)

    def _search(self, st: _ShapeState, best: Optional[tuple[float, _ShapeState]]) -> None:
        """The fewest replicas any knob setting of the shape needs, below what would cost as much as `best`.
        A setting that misses at n replicas misses at fewer: every setting is simulated from the rate bound's
        count up, doubling, until some meet; those are bisected down together."""
        top = self._top(st, best)
        if top < 1:
            return self._lose(st, "not_cheaper", f"one replica costs {self._money(st.shape, 1)}, no less than the "
                              f"plan found ({self._money(best[1].shape, best[1].found[1])} on {best[1].shape.label})")
        options = self._options(st)
        live = [o for o in options if o.fewest <= top]
        if not options or not live:
            return self._unreachable(st, options, top, best)
        st.result.min_replicas = min(o.fewest for o in live)
        lo, hi, met = self._gallop(live, top)
        if not met:
            return self._skip(st) if self._over_budget() else self._missed(st, live, top, best)
        while hi - lo > 1 and not self._over_budget():
            mid = (lo + hi) // 2
            got = self._meeting([o for o, _ in met if o.fewest <= mid], mid)
            lo, hi, met = (lo, mid, got) if got else (mid, hi, met)
        if hi - lo > 1:
            self.plan.skipped.append(f"fewer than {hi} replicas of {st.shape.label} (the --budget ran out)")
        option, point = max(met, key=lambda op: (score(self.plan.points[op[1]]), -op[0].candidate))
        st.found = (option.candidate, hi, point)
        changes = self.plan.candidates[option.candidate].changes
        st.result.outcome, st.result.replicas, st.result.candidate = "planned", hi, option.candidate
        st.result.cost_per_hour = self._price(st.shape.gpu, hi * st.shape.gpus)
        st.result.reason = (f"cheapest setting: {hi} replica(s) with {_words(changes)}, "
                            f"{self._money(st.shape, hi)}")

    def _gallop(self, live: list[_Option], top: int) -> tuple[int, int, list[tuple[_Option, int]]]:
        """(most replicas known to miss, fewest known to meet, the settings meeting there); none meeting at top:
        an empty list. A setting is simulated at n only where its rate bound allows n."""
        lo = min(o.fewest for o in live) - 1
        n = lo + 1
        while not self._over_budget():
            met = self._meeting([o for o in live if o.fewest <= n], n)
            if met or n >= top:
                return lo, n, met
            lo, n = n, min(top, 2 * n)
        return lo, n, []

    def _top(self, st: _ShapeState, best: Optional[tuple[float, _ShapeState]]) -> int:
        """The most replicas worth trying: within --max-gpus, and costing less than the best plan found."""
        if best is None:
            return st.n_cap
        per_replica = self._cost(st.shape, 1)
        return min(st.n_cap, math.ceil(best[0] / per_replica - 1e-9) - 1)

    def _options(self, st: _ShapeState) -> list[_Option]:
        """The shape's knob grid, narrowed by its bounds, each setting checked by the rules and the capacity
        model; a setting below an SLO floor is dropped, the rest carry their rate bound."""
        if st.options is not None:
            return st.options
        base, space = self.scenarios[st.result.candidate], self.req.space
        fp8 = bool(get_gpu(st.shape.gpu).fp8_tflops)
        grid = knob_grid(useful_budgets(base, st.bounds, self.slos, space.budgets), useful_seqs(st.bounds, space.seqs),
                         [d for d in space.kv_dtypes if d != "fp8" or fp8], self._chunking(), self.max_len,
                         set(self.pinned), space.long_prefill)
        needed = self.traffic.per_replica(1, self.req.headroom)
        st.options, seen, floors = [], [], []
        for changes in grid:
            index, refusal = self._candidate(st.shape, changes, same_as=seen)
            if index is None:
                st.refusal = st.refusal or refusal.why_not
            if index is None or index in seen:
                continue
            seen.append(index)
            sc = self.scenarios[index]
            b = shape_bounds(sc, self.slos, self._seqs(sc, int(sc.resolved.value("max_num_seqs"))))
            floor = below_floor(b, self.slos)
            if floor is not None:
                floors.append(floor)
                continue
            st.options.append(_Option(index, min_replicas(b, needed, self.traffic.integral)))
        if floors and not st.options:
            self._lose(st, "below_floor", floors[0])
        return st.options

    def _chunking(self) -> list[bool]:
        if "enable_chunked_prefill" in self.pinned:
            return [bool(self.pinned["enable_chunked_prefill"])]
        return [True, False] if self.req.space.unchunked else [True]

    def _meeting(self, options: list[_Option], n: int) -> list[tuple[_Option, int]]:
        """Each option simulated as one of n replicas at the sized load; those that meet the SLOs, each with
        its point (an option that admits the same requests as a simulated one shares that one's point)."""
        stand_in = self._stand_ins(options, n)
        run = [o for o in options if stand_in[id(o)] is o]
        if not run:
            return []
        points = dict(zip(map(id, run), self._simulate([(o.candidate, n, self._sized(n), "search") for o in run])))
        met = [(o, points[id(stand_in[id(o)])]) for o in options]
        return [(o, i) for o, i in met if self.plan.points[i].meets_slos]

    def _stand_ins(self, options: list[_Option], n: int) -> dict[int, _Option]:
        """Per option, the one simulated for it at n replicas (itself, mostly). Where a replica can hold at most
        C requests at once (its clients, its batch, a rate's cap), every max_num_seqs of at least C admits all
        of them: a setting equal to another but for a larger such max_num_seqs, and with no more KV cache (a
        larger max_num_seqs only reserves more memory for the step's activations), is not simulated; the
        smallest one stands in for it."""
        out = {id(o): o for o in options}
        cap = self.traffic.most_in_flight(n, self._sized(n))
        if cap is None:
            return out
        covering = sorted(((o, self._rest(o)) for o in options if (self._seqs_of(o) or 0) >= cap),
                          key=lambda orest: self._seqs_of(orest[0]))
        for k, (o, rest) in enumerate(covering):
            first = next((x for x, r in covering[:k] if r == rest and self._kv_of(x) >= self._kv_of(o)), None)
            if first is not None:
                out[id(o)] = out[id(first)]
                self.plan.counts.admitting_all += 1
        return out

    def _rest(self, o: _Option) -> tuple:
        changes = self.plan.candidates[o.candidate].changes
        return tuple(sorted((k, repr(v)) for k, v in changes.items() if k != "max_num_seqs"))

    def _seqs_of(self, o: _Option) -> Optional[int]:
        return self.plan.candidates[o.candidate].changes.get("max_num_seqs")

    def _kv_of(self, o: _Option) -> int:
        return self.plan.candidates[o.candidate].settings["kv_cache_tokens"]

    def _unreachable(self, st: _ShapeState, options: list[_Option], top: int,
                     best: Optional[tuple[float, _ShapeState]]) -> None:
        if not options:
            if st.result.outcome == "planned":
                self._lose(st, "refused_by_rules", f"vLLM's rules or the capacity model refuse every knob setting "
                                                   f"({st.refusal})")
            return
        fewest = min(o.fewest for o in options)
        st.result.min_replicas = fewest
        b = st.bounds
        why = (f"at best one replica completes {b.max_rate:.3g} req/s (a decode batch of {b.batch}, the KV cache "
               f"holds {b.kv_requests:.0f} requests), so {self.traffic.total:g} {self.traffic.unit} with "
               f"{self.req.headroom:.0%} headroom needs {fewest} replicas = {fewest * st.shape.gpus} GPUs")
        if top >= st.n_cap:
            return self._lose(st, "needs_more_gpus", f"{why}, more than --max-gpus {self.req.max_gpus}")
        self._lose(st, "not_cheaper", f"{why}, costing {self._money(st.shape, fewest)}: no less than the plan "
                                      f"found ({self._money(best[1].shape, best[1].found[1])})")

    def _missed(self, st: _ShapeState, live: list[_Option], top: int,
                best: Optional[tuple[float, _ShapeState]]) -> None:
        tried = [p for p in self.plan.points[-len(live):]]
        nearest = max(tried, key=lambda p: (p.margin or 0.0))
        miss = miss_words(nearest, self.slos)
        if top >= st.n_cap:
            return self._lose(st, "slos_missed", f"none of its {len(live)} knob settings meets the SLOs with {top} "
                                                 f"replica(s) (nearest: {miss}); more replicas would exceed "
                                                 f"--max-gpus")
        self._lose(st, "not_cheaper", f"none of its {len(live)} knob settings meets the SLOs with {top} replica(s) "
                                      f"(nearest: {miss}); {top + 1} would cost no less than the plan found "
                                      f"({self._money(best[1].shape, best[1].found[1])})")

    def _lose(self, st: _ShapeState, outcome: str, reason: str) -> None:
        st.result.outcome, st.result.reason = outcome, reason
        if outcome in ("below_floor", "needs_more_gpus", "refused_by_rules"):
            self._count(outcome)

    def _skip(self, st: _ShapeState) -> None:
        self._lose(st, "skipped", "the --budget ran out before its search")
        self.plan.skipped.append(f"the search of {st.shape.label}")

    # ---- the answer ---------------------------------------------------------------------------------

    def _choose(self, states: list[_ShapeState], best: Optional[_ShapeState]) -> None:
        choices: dict[str, R.Choice] = {}
        for st in states:
            if st.found is None:
                continue
            choice = self._choice(st)
            old = choices.get(st.shape.gpu)
            if old is None or (choice.gpus_total, -(choice.margin or 0)) < (old.gpus_total, -(old.margin or 0)):
                choices[st.shape.gpu] = choice
        self.plan.best_per_gpu = sorted(choices.values(), key=lambda c: (
            c.cost_per_hour if c.cost_per_hour is not None else c.gpus_total, -(c.margin or 0), c.candidate))
        if best is not None:
            self.plan.winner = self._size(self._choice(best))

    def _choice(self, st: _ShapeState) -> R.Choice:
        candidate, replicas, index = st.found
        point = self.plan.points[index]
        gpus = replicas * st.shape.gpus
        return R.Choice(candidate=candidate, replicas=replicas, gpus_total=gpus,
                        cost_per_hour=self._price(st.shape.gpu, gpus), margin=point.margin, metrics=point.metrics)

    def _size(self, choice: R.Choice) -> R.Winner:
        n = choice.replicas
        target, sized = self.traffic.per_replica(n, 0.0), self._sized(n)
        sizing = R.Sizing(replicas=n, target_load=target, sized_load=sized)
        winner = R.Winner(**choice.model_dump(), sizing=sizing, launch=self._launch(choice.candidate, n, target))
        if self._over_budget():
            self.plan.skipped.append("the winner's run at the target load and its per-replica capacity")
            return winner
        shape = self.plan.shapes[self._shape_index(self._shape_of(choice.candidate))]
        loads = self._capacity_loads(sized, shape.bounds.max_rate if shape.bounds else None)
        points = self._simulate([(choice.candidate, n, target, "target")]
                                + [(choice.candidate, n, x, "capacity") for x in loads])
        at_target = self.plan.points[points[0]]
        winner.at_target = at_target.metrics
        self._bracket(sizing, choice, n, points[1:])
        if at_target.metrics is not None and at_target.metrics.output_throughput and winner.cost_per_hour:
            tokens_per_hour = at_target.metrics.output_throughput * n * 3600
            winner.cost_per_million_output_tokens = winner.cost_per_hour / tokens_per_hour * 1e6
        return winner

    def _capacity_loads(self, sized: float, ceiling: Optional[float]) -> list[float]:
        """Four loads from just above the sized load up to the rate bound (three times the sized load for
        clients and batches, which have no rate bound), evenly spaced on a log scale."""
        top = max(ceiling, sized * 1.5) if ceiling is not None and not self.traffic.integral else sized * 3
        ratio = (top / sized) ** 0.25
        loads = [sized * ratio ** k for k in range(1, 5)]
        if self.traffic.integral:
            loads = sorted({float(math.ceil(x)) for x in loads if math.ceil(x) > sized})
        return loads

    def _bracket(self, sizing: R.Sizing, choice: R.Choice, n: int, first: list[int]) -> None:
        """The highest per-replica load meeting the SLOs: a first bracket, then two loads inside it (the load
        curve's search, diagnose/bracket.py; the sized load is its floor, having met the SLOs in the search)."""
        index = {self.plan.points[i].load: i for i in first}

        def fits() -> dict[float, bool]:
            return {load: bool(self.plan.points[i].meets_slos) for load, i in index.items()}

        def run(loads: list[float]) -> dict[float, bool]:
            for i in self._simulate([(choice.candidate, n, x, "capacity") for x in loads]):
                index[self.plan.points[i].load] = i
            return fits()

        rounds = 0 if self._over_budget() else BISECT_ROUNDS
        ok, bad = narrow(fits(), run, rounds, self.traffic.integral, floor=sizing.sized_load)
        sizing.capacity = ok if ok is not None else sizing.sized_load
        sizing.capacity_is_lower_bound = bad is None
        sizing.headroom_pct = 100 * (sizing.capacity / sizing.target_load - 1) if sizing.target_load else None
        if bad is not None:
            miss = self.plan.points[index[bad]]
            sizing.above_load, sizing.above, sizing.above_overload = miss.load, miss.metrics, miss.overload

    def _launch(self, candidate: int, replicas: int, load: float) -> Any:
        sc = self.scenarios[candidate]
        return build_launch(sc.resolved, self.traffic.share(replicas, load), self.slos, replicas)

    # ---- candidates and trials ------------------------------------------------------------------------

    def _candidate(self, shape: Shape, changes: dict[str, Any], same_as: Optional[list[int]] = None
                   ) -> tuple[Optional[int], Optional[Trial]]:
        """A candidate on `shape` with `changes` on top of the shape's base: checked by the rules and the
        capacity model here, before any simulation. Returns its index (one of `same_as` when it resolves to
        the same scheduler settings), or the refusal."""
        flags = self._flags(shape, changes)
        key = (shape, tuple(sorted((k, repr(v)) for k, v in flags.items())))
        if key in self.keys:
            return self.keys[key], None
        sc, refusal = prepare(self.root, Change(flags=flags, gpu=shape.gpu, gpu_count=shape.gpus), self.rule_errors)
        if refusal is not None:
            if same_as is not None:
                self.plan.counts.not_simulated += 1
            return None, refusal
        same = next((i for i in same_as or [] if same_simulation(self.scenarios[i], sc)), None)
        if same is not None:
            return same, None
        index = len(self.plan.candidates)
        self.plan.candidates.append(R.Candidate(gpu=shape.gpu, tp=shape.tp, pp=shape.pp, ep=shape.ep,
                                                changes=dict(changes), settings=_settings(sc)))
        self.flags.append(flags)
        self.scenarios.append(sc)
        self.keys[key] = index
        return index, None

    def trial_change(self, shape: Shape, changes: dict[str, Any], replicas: int) -> Change:
        """The trial of `changes` on `shape`, as one of `replicas` replicas at the sized load, as the search
        builds it (the brute-force reference in the tests builds its trials here too)."""
        return Change(flags=self._flags(shape, changes), gpu=shape.gpu, gpu_count=shape.gpus,
                      workload=self.traffic.share(replicas, self._sized(replicas)))

    def judge(self, point: R.Point, evidence: Any) -> R.Point:
        return judge(point, self.traffic.kind, self.slos, evidence)

    def _flags(self, shape: Shape, changes: dict[str, Any]) -> dict[str, Any]:
        return {**shape.flags(), **self.released,
                **({} if "max_model_len" in self.pinned else {"max_model_len": self.max_len}), **changes}

    def _simulate(self, jobs: list[tuple[int, int, float, str]]) -> list[int]:
        """Simulate (candidate, replicas, per-replica load, stage) jobs in parallel; returns their point indices.
        A search trial that misses an SLO by more than FAR_MISS times ends as soon as that is certain."""
        out = []
        for job, trial in zip(jobs, self._trials(jobs, stop=True)):
            out.append(len(self.plan.points))
            self._keep(len(self.plan.points), job, trial)
        return out

    def _trials(self, jobs: list[tuple[int, int, float, str]], stop: bool) -> list[Trial]:
        limits = {m: FAR_MISS * t for m, t in self.slos.items()}
        changes = [Change(flags=self.flags[c], gpu=self.plan.candidates[c].gpu, gpu_count=self.plan.candidates[c].gpus,
                          workload=self.traffic.share(n, load),
                          stop_beyond_ms=limits if stop and stage == "search" and limits else None)
                   for c, n, load, stage in jobs]
        if self.progress is not None:
            self.progress(jobs[0][3], self.plan.counts.simulated, len(jobs))
        trials = self.trials(self.root, changes, self.rule_errors, self.req.workers, ray=self.req.ray)
        self.plan.counts.simulated += sum(1 for t in trials if t.status in ("simulated", "stopped"))
        self.plan.counts.stopped_early += sum(1 for t in trials if t.status == "stopped")
        if self.progress is not None:
            self.progress(jobs[0][3], self.plan.counts.simulated, 0)
        return trials

    def _keep(self, index: int, job: tuple[int, int, float, str], trial: Trial) -> None:
        """The trial's point at `index` (appended, or replacing a stopped one)."""
        if trial.evidence is not None:
            self.evidence[index] = trial.evidence
        point = self._point(*job, trial)
        if index == len(self.plan.points):
            self.plan.points.append(point)
        else:
            self.plan.points[index] = point

    def _finish_stopped(self) -> None:
        """With no plan found, the nearest miss is the answer: the trials stopped early are simulated to the end
        (they miss by more than FAR_MISS times, but which misses least among them is then known)."""
        stopped = [i for i, p in enumerate(self.plan.points) if p.status == "stopped"]
        if not stopped or self._over_budget():
            return
        jobs = [(p.candidate, p.replicas, p.load, p.stage) for p in (self.plan.points[i] for i in stopped)]
        for i, job, trial in zip(stopped, jobs, self._trials(jobs, stop=False)):
            self._keep(i, job, trial)

    def _point(self, c: int, n: int, load: float, stage: str, trial: Trial) -> R.Point:
        p = R.Point(candidate=c, replicas=n, load=load, stage=stage, status=trial.status, why_not=trial.why_not,
                    metrics=trial.metrics)
        self.judge(p, trial.evidence)
        if p.metrics is not None:
            p.output_per_gpu = p.metrics.output_throughput / self.plan.candidates[c].gpus
        return p

    # ---- helpers ------------------------------------------------------------------------------------------

    def _sized(self, replicas: int) -> float:
        return self.traffic.per_replica(replicas, self.req.headroom)

    def _cost(self, shape: Shape, replicas: int) -> float:
        price = self.req.prices.get(shape.gpu)
        return replicas * shape.gpus * (price if price is not None else 1.0)

    def _price(self, gpu: str, gpus: int) -> Optional[float]:
        price = self.req.prices.get(gpu)
        return price * gpus if price is not None else None

    def _money(self, shape: Shape, replicas: int) -> str:
        price = self._price(shape.gpu, replicas * shape.gpus)
        return f"${price:,.2f}/h" if price is not None else f"{replicas * shape.gpus} GPUs"

    def _shape_of(self, candidate: int) -> Shape:
        c = self.plan.candidates[candidate]
        return Shape(c.gpu, c.tp, c.pp, c.ep)

    def _shape_index(self, shape: Shape) -> int:
        return next(i for i, s in enumerate(self.plan.shapes) if Shape(s.gpu, s.tp, s.pp, s.ep) == shape)

    def _seqs(self, sc: Scenario, searched: int) -> int:
        """The largest max_num_seqs a bound may assume: the config's, where it pins it."""
        return int(sc.resolved.value("max_num_seqs")) if "max_num_seqs" in self.pinned else searched

    def _count(self, outcome: str) -> None:
        setattr(self.plan.counts, outcome, getattr(self.plan.counts, outcome) + 1)

    def _over_budget(self) -> bool:
        return self.clock() - self.started > self.req.budget_s


# ---- helpers ----------------------------------------------------------------------------------------------

def _words(changes: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in changes.items()) or "vLLM's defaults"


def _pinned(root: Scenario, vary: frozenset[str]) -> dict[str, Any]:
    """The flags the config sets that every candidate keeps (the parallel sizes are searched with the GPU)."""
    flags = root.resolved.deployment.flags
    return {dest: f.value for dest, f in flags.items() if dest not in PARALLEL and dest not in vary and dest != "model"}


def _settings(sc: Scenario) -> dict[str, Any]:
    r = sc.resolved
    out = {k: r.value(k) for k in ("max_model_len",) + KNOBS}
    out["long_prefill_token_threshold"] = r.value("long_prefill_token_threshold")
    out["speculative"] = f"{r.speculative.method} k={r.speculative.num_speculative_tokens}" if r.speculative else None
    out["kv_cache_tokens"] = int(sc.capacity.gpu_kv_cache_tokens.value)
    return out
