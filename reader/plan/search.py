"""plan: the cheapest replica configuration and count that meets the SLOs at the target load.

A coarse-to-fine search over the what-if trial runner (`diagnose.trials`); every candidate is
resolved again, checked by the version's rules and sized by the capacity model before it is
simulated, and only survivors reach the simulator:

1. shapes: every GPU type x TP x PP within a node. Refused by the rules, not starting, or unable by
   the bounds (`bounds.py`) to meet an SLO or the load within --max-gpus: dropped with the reason.
2. coarse: per shape, with vLLM's defaults for the knobs, the fewest replicas meeting the SLOs at the
   load with headroom (gallop up from the rate bound, then bisect), all shapes of a round in parallel.
   Within a GPU type, a shape that cannot use fewer GPUs than one already found stops.
3. fine: on the best shapes, each knob moved alone, then the best moves combined; then one replica
   fewer, while some setting still meets the SLOs.
4. sizing: the winner at the target load (no headroom), and its per-replica capacity, bracketed.

Deterministic for a seed: every round's trials are fixed by earlier results, and their results come
back in order. A --budget cut ends the search between rounds and says what it left out.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from .. import __version__
from ..calibration.select import describe_use
from ..catalog.load import get_gpu
from ..diagnose.scenario import Change, Scenario
from ..diagnose.trials import RuleErrors, Trial, prepare, same_simulation, try_changes
from ..sim.traffic import Traffic
from ..sim.workload import describe
from . import result as R
from .bounds import Bounds, below_floor, min_replicas, shape_bounds
from .launch import build_launch
from .closest import nearest_miss
from .scoring import OVERLOADED, margin, mark_pareto, miss_words, overload, p99, score
from .space import KNOBS, PARALLEL, Shape, Signals, knob_variants, model_max_len, shapes

ProgressFn = Callable[[str, int, int], None]  # (stage, simulations done, simulations in this round)
SEQS_CAP = 2048  # the largest max_num_seqs a plan tries
FINE_ROUNDS = 8  # rounds of knob moves on the finalists
STEPS = (2.0, 1.5)  # numeric knobs move by x2 until that stops helping, then by x1.5


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
    finalists: int = 3


@dataclass
class _ShapeState:
    """The coarse stage's replica search on one shape."""

    shape: Shape
    result: R.ShapeResult
    candidate: int
    bounds: Bounds
    n_min: int
    n_cap: int
    lo: int  # the most replicas known to miss the SLOs (n_min - 1 before any test)
    hi: Optional[int] = None  # the fewest known to meet them
    hi_point: Optional[int] = None
    last_fail: Optional[int] = None  # index of the last failing point
    done: bool = False

    @property
    def fewest_gpus(self) -> int:
        """The fewest GPUs this shape could still meet the SLOs with."""
        return (self.lo + 1) * self.shape.gpus

    def next_n(self, points: list[R.Point]) -> Optional[int]:
        if self.hi is not None:
            return (self.lo + self.hi) // 2 if self.hi - self.lo > 1 else None
        if self.last_fail is None:
            return self.n_min
        if self.lo >= self.n_cap or self._stalled(points):
            return None
        miss = points[self.last_fail]
        growth = miss.overload * 1.1 if miss.overload and miss.overload >= OVERLOADED else 1.5
        return min(self.n_cap, max(self.lo + 1, math.ceil(self.lo * growth)))

    def _stalled(self, points: list[R.Point]) -> bool:
        """More replicas stopped helping: twice the first count, and the SLO margin moved less than 5%."""
        tried = [p for p in points if p.stage == "coarse" and p.candidate == self.candidate and p.margin is not None]
        if len(tried) < 2 or tried[-1].replicas < 2 * tried[0].replicas:
            return False
        return tried[-1].margin <= tried[-2].margin * 1.05 and not (tried[-1].overload or 0) >= OVERLOADED


@dataclass
class _Finalist:
    gpu: str
    candidate: int
    replicas: int
    feasible: bool
    shape: Shape
    fewest: int  # the rate bound's fewest replicas: no use trying below


class Planner:
    def __init__(self, root: Scenario, traffic: Traffic, req: PlanRequest, rule_errors: RuleErrors,
                 progress: Optional[ProgressFn] = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.root, self.traffic, self.req, self.rule_errors = root, traffic, req, rule_errors
        self.progress = progress
        self.clock = clock
        self.started = clock()
        self.slos = dict(root.slos_ms)
        self.pinned = _pinned(root, req.vary)
        # A flag released with --vary starts from vLLM's default (None removes the config's value).
        self.released = {dest: None for dest in req.vary if dest in root.resolved.deployment.flags}
        lookahead = 0
        self.max_len = self.pinned.get("max_model_len") or model_max_len(root.workload.longest_request, lookahead)
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
        self._coarse(states)
        finalists = self._finalists(states)
        if finalists:
            self._fine(finalists)
        self._choose(states, finalists)
        mark_pareto(self.plan.points)
        if self.plan.winner is None:
            self.plan.closest = nearest_miss(self.plan, self.pinned)
        return self.plan

    def _shapes(self) -> list[_ShapeState]:
        model = self.root.resolved.require_model()
        found, left_out = shapes([get_gpu(g) for g in self.req.gpus], model, self.req.max_gpus,
                                 self.req.gpus_per_node)
        self.plan.notes += [f"not searched: {why}" for why in left_out]
        found = self._calibrated(found)
        if "tensor_parallel_size" in self.root.resolved.deployment.flags:
            self.plan.notes.append("the config's parallel sizes are searched with the GPU type (they belong to it)")
        self.plan.counts.shapes = len(found)
        states = []
        for shape in found:
            state = self._shape(shape)
            if state is not None:
                states.append(state)
        return states

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
                skipped[f"{shape.gpu} TP{shape.tp} PP{shape.pp}"] = refusal.message
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
        res = R.ShapeResult(gpu=shape.gpu, tp=shape.tp, pp=shape.pp, gpus=shape.gpus, outcome="planned")
        self.plan.shapes.append(res)
        index, refusal = self._candidate(shape, {})
        if index is None:
            res.outcome = "refused_by_rules" if refusal.status == "rejected_by_rules" else "does_not_start"
            res.reason = refusal.why_not or refusal.status
            self._count(res.outcome)
            return None
        res.candidate = index
        sc = self.scenarios[index]
        b = shape_bounds(sc, self.slos, self._seqs_cap(sc))
        res.bounds = b
        floor = below_floor(b, self.slos)
        if floor is not None:
            res.outcome, res.reason = "below_floor", floor
            self._count("below_floor")
            return None
        needed = self.traffic.per_replica(1, self.req.headroom)
        n_min = min_replicas(b, needed, self.traffic.integral)
        n_cap = self.req.max_gpus // shape.gpus
        res.min_replicas = n_min
        if n_min > n_cap:
            res.outcome = "needs_more_gpus"
            res.reason = (f"at best one replica completes {b.max_rate:.3g} req/s (a decode batch of {b.batch}, the KV "
                          f"cache holds {b.kv_requests:.0f} requests), so {self.traffic.total:g} {self.traffic.unit} "
                          f"with {self.req.headroom:.0%} headroom needs {n_min} replicas = {n_min * shape.gpus} GPUs, "
                          f"more than --max-gpus {self.req.max_gpus}")
            self._count("needs_more_gpus")
            return None
        return _ShapeState(shape=shape, result=res, candidate=index, bounds=b, n_min=n_min, n_cap=n_cap, lo=n_min - 1)

    def _coarse(self, states: list[_ShapeState]) -> None:
        while True:
            jobs = []
            for st in self._cheapest_first(states):
                n = st.next_n(self.plan.points)
                if n is None or self._cannot_beat(st, states):
                    self._finish(st, states)
                    continue
                jobs.append((st, n))
            if not jobs:
                for st in states:
                    if not st.done:
                        self._finish(st, states)
                return
            if self._over_budget():
                left = [st for st in states if not st.done]
                for st in left:
                    st.done = True
                    if st.hi is None:
                        st.result.outcome = "skipped"
                        st.result.reason = "the --budget ran out before its replica search finished"
                    else:
                        st.result.replicas = st.hi
                self.plan.skipped.append("coarse replica search of " + ", ".join(st.shape.label for st in left))
                return
            points = self._simulate([(st.candidate, n, self._sized(n), "coarse") for st, n in jobs])
            for (st, n), index in zip(jobs, points):
                p = self.plan.points[index]
                if p.meets_slos:
                    st.hi, st.hi_point = (n, index) if st.hi is None or n < st.hi else (st.hi, st.hi_point)
                else:
                    st.lo, st.last_fail = max(st.lo, n), index

    @staticmethod
    def _cheapest_first(states: list[_ShapeState]) -> list[_ShapeState]:
        """The shapes to try this round: per GPU type, those that could still use the fewest GPUs (a shape that
        needs more waits: a cheaper one of its type may meet the SLOs and make it pointless)."""
        active = [st for st in states if not st.done]
        floor: dict[str, int] = {}
        for st in active:
            floor[st.shape.gpu] = min(floor.get(st.shape.gpu, st.fewest_gpus), st.fewest_gpus)
        return [st for st in active if st.fewest_gpus == floor[st.shape.gpu] or st.hi is not None]

    def _cannot_beat(self, st: _ShapeState, states: list[_ShapeState]) -> bool:
        """Within one GPU type, a shape that needs at least as many GPUs as a plan already found stops."""
        best = _fewest_found(st, states)
        return best is not None and st.fewest_gpus >= best

    def _finish(self, st: _ShapeState, states: list[_ShapeState]) -> None:
        st.done = True
        res = st.result
        cannot_beat = self._cannot_beat(st, states)
        # a bracket left open (fewer replicas untried) is only a fewest count when nothing cheaper was found
        if st.hi is not None and (st.hi - st.lo <= 1 or not cannot_beat):
            res.replicas = st.hi
            return
        if cannot_beat:
            res.outcome = "not_cheaper"
            res.reason = "another shape of this GPU type meets the SLOs with as few GPUs or fewer"
            return
        res.outcome = "slos_missed"
        last = self.plan.points[st.last_fail] if st.last_fail is not None else None
        res.reason = (f"with vLLM's default knobs, {st.lo} replica(s) miss the SLOs"
                      + (f" ({miss_words(last, self.slos)})" if last is not None else "")
                      + ("; more replicas would exceed --max-gpus" if st.lo >= st.n_cap else
                         "; more replicas stopped helping"))

    def _finalists(self, states: list[_ShapeState]) -> list[_Finalist]:
        """The shapes worth tuning: per GPU type the cheapest plan found (the cheapest `finalists` types), and
        the nearest miss of a type without one: with vLLM's default knobs a shape may miss the SLOs and meet
        them once the knobs move. Misses join when nothing was found, or (one) when the rate bound leaves them
        room to be cheaper than the best plan found."""
        met = sorted((st for st in states if st.hi is not None),
                     key=lambda st: (self._cost(st.shape, st.hi), -(self.plan.points[st.hi_point].margin or 0)))
        out: list[_Finalist] = []
        for st in met:
            if all(f.gpu != st.shape.gpu for f in out) and len(out) < self.req.finalists:
                out.append(_Finalist(st.shape.gpu, st.candidate, st.hi, True, st.shape, st.n_min))
        best = self._cost(met[0].shape, met[0].hi) if met else math.inf
        room = self.req.finalists if not out else 1
        missed = sorted((st for st in states if st.hi is None and st.last_fail is not None),
                        key=lambda st: -(self.plan.points[st.last_fail].margin or 0))
        for st in missed:
            if room and all(f.gpu != st.shape.gpu for f in out) and self._cost(st.shape, st.n_min) < best:
                out.append(_Finalist(st.shape.gpu, st.candidate, st.lo, False, st.shape, st.n_min))
                room -= 1
        return out

    def _fine(self, finalists: list[_Finalist]) -> None:
        """Coordinate descent: each round moves, on every finalist, each knob its last simulation says binds,
        and keeps the best move; a move that helped is offered again from there (a budget halved twice)."""
        steps = list(STEPS)
        for _ in range(FINE_ROUNDS):
            proposals = {id(f): self._variants(f, steps[0]) for f in finalists}
            if self._over_budget():
                self.plan.skipped.append("knob tuning (the fine stage) on "
                                         + ", ".join(f.shape.label for f in finalists))
                return
            if not self._score_round(finalists, proposals):
                steps.pop(0)  # nothing moved at this step: a finer one, or done
                if not steps:
                    break
        self._fewer_replicas(finalists)

    def _variants(self, f: _Finalist, step: float) -> list[int]:
        """Candidates one knob away from the finalist's current one, not yet simulated at its replica count."""
        sc = self.scenarios[f.candidate]
        values = {k: sc.resolved.value(k) for k in KNOBS}
        values["speculative_config"] = None if sc.resolved.speculative is None else "set"
        current = self.plan.candidates[f.candidate].changes
        out = []
        for _, changes in knob_variants(values, set(self.pinned), get_gpu(f.gpu), sc.resolved.require_model(),
                                        self.max_len, self._signals(f), step):
            index, _ = self._candidate(f.shape, {**current, **changes}, base=f.candidate)
            if index is not None and index not in out and self._point_of(index, f.replicas) is None:
                out.append(index)
        return out

    def _signals(self, f: _Finalist) -> Signals:
        point = self._point_of(f.candidate, f.replicas)
        index = self.plan.points.index(point) if point is not None else None
        ev = self.evidence.get(index) if index is not None else None
        if point is None or point.metrics is None or ev is None:
            return Signals()
        stops = ev.admission_stops
        ratios = {metric: target / tail for metric, target in self.slos.items()
                  if (tail := p99(point.metrics, metric))}
        binding = min(ratios, key=ratios.get) if ratios else None
        budget = self.scenarios[f.candidate].resolved.value("max_num_batched_tokens") or 0
        preempted = point.metrics.preemptions > 0
        return Signals(seqs_capped=stops.get("max_num_seqs", 0) > 0, preempted=preempted,
                       kv_bound=preempted or (ev.samples_blocked_by_kv or 0) > 0,
                       budget_full=(ev.budget_full_share or 0) > 0,
                       itl_binding=binding == "itl", itl_tight=binding == "itl" and ratios["itl"] < 1.25,
                       long_prompts=int(self.root.workload.prompt_len.max()) > budget)

    def _score_round(self, finalists: list[_Finalist], by_finalist: dict[int, list[int]]) -> bool:
        """Simulate each finalist's candidates at its replica count; the best, where it beats the finalist's
        own, becomes the finalist's. Returns whether any finalist moved."""
        jobs = [(c, f.replicas, self._sized(f.replicas), "fine") for f in finalists for c in by_finalist[id(f)]]
        if not jobs:
            return False
        indices = iter(self._simulate(jobs))
        moved = False
        for f in finalists:
            own = self._point_of(f.candidate, f.replicas)
            scored = [(c, next(indices)) for c in by_finalist[id(f)]]
            best = max(scored, key=lambda ci: score(self.plan.points[ci[1]]), default=None)
            if best is not None and (own is None or score(self.plan.points[best[1]]) > score(own)):
                f.candidate = best[0]
                f.feasible = bool(self.plan.points[best[1]].meets_slos)
                moved = True
        return moved

    def _fewer_replicas(self, finalists: list[_Finalist]) -> None:
        """One replica fewer at a time, with the finalist's best two settings, while one still meets the SLOs."""
        active = [f for f in finalists if f.feasible and f.replicas > f.fewest]
        while active:
            if self._over_budget():
                self.plan.skipped.append("trying fewer replicas on " + ", ".join(f.shape.label for f in active))
                return
            jobs = []
            for f in active:
                for c in self._best_two(f):
                    jobs.append((f, c))
            points = self._simulate([(c, f.replicas - 1, self._sized(f.replicas - 1), "fine") for f, c in jobs])
            still = []
            for f in active:
                met = [(c, i) for (g, c), i in zip(jobs, points) if g is f and self.plan.points[i].meets_slos]
                if met:
                    met.sort(key=lambda ci: score(self.plan.points[ci[1]]), reverse=True)
                    f.candidate, f.replicas = met[0][0], f.replicas - 1
                    if f.replicas > f.fewest:
                        still.append(f)
            active = still

    def _best_two(self, f: _Finalist) -> list[int]:
        tried = [p for p in self.plan.points if p.replicas == f.replicas and p.status == "simulated"
                 and self._shape_of(p.candidate) == f.shape]
        tried.sort(key=score, reverse=True)
        out = [f.candidate]
        for p in tried:
            if p.candidate not in out and p.meets_slos:
                out.append(p.candidate)
            if len(out) == 2:
                break
        return out

    # ---- the answer ---------------------------------------------------------------------------------

    def _choose(self, states: list[_ShapeState], finalists: list[_Finalist]) -> None:
        choices: dict[str, R.Choice] = {}
        for st in states:
            if st.hi is not None:
                self._offer(choices, st.candidate, st.hi)
        for f in finalists:
            if f.feasible:
                self._offer(choices, f.candidate, f.replicas)
        ordered = sorted(choices.values(), key=lambda c: (c.cost_per_hour if c.cost_per_hour is not None
                                                          else c.gpus_total, -(c.margin or 0), c.candidate))
        self.plan.best_per_gpu = ordered
        for f in finalists:
            shape = self.plan.shapes[self._shape_index(f.shape)]
            if f.feasible and shape.outcome != "planned":
                shape.outcome, shape.reason = "planned", "meets the SLOs once the fine stage moved its knobs"
            if f.feasible:
                shape.replicas = f.replicas
        if ordered:
            self.plan.winner = self._size(ordered[0])

    def _offer(self, choices: dict[str, R.Choice], candidate: int, replicas: int) -> None:
        point = self._point_of(candidate, replicas)
        cand = self.plan.candidates[candidate]
        choice = R.Choice(candidate=candidate, replicas=replicas, gpus_total=replicas * cand.gpus,
                          cost_per_hour=self._price(cand.gpu, replicas * cand.gpus), margin=point.margin,
                          metrics=point.metrics)
        old = choices.get(cand.gpu)
        key = lambda c: (c.gpus_total, -(c.margin or 0))  # noqa: E731
        if old is None or key(choice) < key(old):
            choices[cand.gpu] = choice

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
        """The highest per-replica load meeting the SLOs: a first bracket, then two loads inside it."""
        indices = list(first)
        ok, bad = self._split(indices)
        if bad is not None and not self._over_budget():
            low = self.plan.points[ok].load if ok is not None else sizing.sized_load
            high = self.plan.points[bad].load
            inner = [low + (high - low) * k / 3 for k in (1, 2)]
            if self.traffic.integral:
                inner = sorted({float(round(x)) for x in inner if low < round(x) < high})
            if inner:
                indices += self._simulate([(choice.candidate, n, x, "capacity") for x in inner])
                ok, bad = self._split(indices)
        sizing.capacity = self.plan.points[ok].load if ok is not None else sizing.sized_load
        sizing.capacity_is_lower_bound = bad is None
        sizing.headroom_pct = 100 * (sizing.capacity / sizing.target_load - 1) if sizing.target_load else None
        if bad is not None:
            miss = self.plan.points[bad]
            sizing.above_load, sizing.above, sizing.above_overload = miss.load, miss.metrics, miss.overload

    def _split(self, indices: list[int]) -> tuple[Optional[int], Optional[int]]:
        """Among points by load: the highest meeting the SLOs below the first miss, and the first miss."""
        ok = None
        for i in sorted(indices, key=lambda i: self.plan.points[i].load):
            if not self.plan.points[i].meets_slos:
                return ok, i
            ok = i
        return ok, None

    def _launch(self, candidate: int, replicas: int, load: float) -> Any:
        sc = self.scenarios[candidate]
        return build_launch(sc.resolved, self.traffic.share(replicas, load), self.slos, replicas)

    # ---- candidates and trials ------------------------------------------------------------------------

    def _candidate(self, shape: Shape, changes: dict[str, Any], base: Optional[int] = None
                   ) -> tuple[Optional[int], Optional[Trial]]:
        """A candidate on `shape` with `changes` on top of the shape's base: checked by the rules and the
        capacity model here, before any simulation. Returns its index (an existing one when it resolves to
        the same scheduler settings), or the refusal."""
        flags = {**shape.flags(), **self.released,
                 **({} if "max_model_len" in self.pinned else {"max_model_len": self.max_len}), **changes}
        key = (shape, tuple(sorted((k, repr(v)) for k, v in flags.items())))
        if key in self.keys:
            return self.keys[key], None
        sc, refusal = prepare(self.root, Change(flags=flags, gpu=shape.gpu, gpu_count=shape.gpus), self.rule_errors)
        if refusal is not None:
            if base is not None:
                self.plan.counts.not_simulated += 1
            return None, refusal
        if base is not None and same_simulation(self.scenarios[base], sc):
            return base, None
        index = len(self.plan.candidates)
        self.plan.candidates.append(R.Candidate(gpu=shape.gpu, tp=shape.tp, pp=shape.pp, changes=dict(changes),
                                                settings=_settings(sc)))
        self.flags.append(flags)
        self.scenarios.append(sc)
        self.keys[key] = index
        return index, None

    def _simulate(self, jobs: list[tuple[int, int, float, str]]) -> list[int]:
        """Simulate (candidate, replicas, per-replica load, stage) jobs in parallel; returns their point indices."""
        changes = [Change(flags=self.flags[c], gpu=self.plan.candidates[c].gpu, gpu_count=self.plan.candidates[c].gpus,
                          workload=self.traffic.share(n, load)) for c, n, load, _ in jobs]
        if self.progress is not None:
            self.progress(jobs[0][3], self.plan.counts.simulated, len(jobs))
        trials = try_changes(self.root, changes, self.rule_errors, self.req.workers)
        out = []
        for (c, n, load, stage), trial in zip(jobs, trials):
            out.append(len(self.plan.points))
            if trial.evidence is not None:
                self.evidence[len(self.plan.points)] = trial.evidence
            self.plan.points.append(self._point(c, n, load, stage, trial))
        self.plan.counts.simulated += sum(1 for t in trials if t.status == "simulated")
        if self.progress is not None:
            self.progress(jobs[0][3], self.plan.counts.simulated, 0)
        return out

    def _point(self, c: int, n: int, load: float, stage: str, trial: Trial) -> R.Point:
        p = R.Point(candidate=c, replicas=n, load=load, stage=stage, status=trial.status, why_not=trial.why_not,
                    metrics=trial.metrics)
        m = trial.metrics
        if m is None:
            return p
        if self.traffic.kind in ("rate", "trace") and m.request_throughput:
            p.overload = overload(load, m, trial.evidence)
        p.margin = margin(m, self.slos, p.overload)
        p.meets_slos = m.completed > 0 and p.margin >= 1.0 and p.overload is None
        p.output_per_gpu = m.output_throughput / self.plan.candidates[c].gpus
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

    def _point_of(self, candidate: int, replicas: int) -> Optional[R.Point]:
        found = [p for p in self.plan.points if p.candidate == candidate and p.replicas == replicas
                 and p.stage in ("coarse", "fine")]
        return found[-1] if found else None

    def _shape_of(self, candidate: int) -> Shape:
        c = self.plan.candidates[candidate]
        return Shape(c.gpu, c.tp, c.pp)

    def _shape_index(self, shape: Shape) -> int:
        return next(i for i, s in enumerate(self.plan.shapes) if (s.gpu, s.tp, s.pp) == (shape.gpu, shape.tp, shape.pp))

    def _seqs_cap(self, sc: Scenario) -> int:
        return int(sc.resolved.value("max_num_seqs")) if "max_num_seqs" in self.pinned else SEQS_CAP

    def _count(self, outcome: str) -> None:
        setattr(self.plan.counts, outcome, getattr(self.plan.counts, outcome) + 1)

    def _over_budget(self) -> bool:
        return self.clock() - self.started > self.req.budget_s


# ---- scoring ----------------------------------------------------------------------------------------------

def _fewest_found(st: _ShapeState, states: list[_ShapeState]) -> Optional[int]:
    """The fewest GPUs another shape of st's GPU type has met the SLOs with."""
    return min((o.hi * o.shape.gpus for o in states if o.shape.gpu == st.shape.gpu and o.hi is not None
                and o is not st), default=None)


def _pinned(root: Scenario, vary: frozenset[str]) -> dict[str, Any]:
    """The flags the config sets that every candidate keeps (the parallel sizes are searched with the GPU)."""
    flags = root.resolved.deployment.flags
    return {dest: f.value for dest, f in flags.items() if dest not in PARALLEL and dest not in vary and dest != "model"}


def _settings(sc: Scenario) -> dict[str, Any]:
    r = sc.resolved
    out = {k: r.value(k) for k in ("max_model_len",) + KNOBS[:-1]}
    out["speculative"] = f"{r.speculative.method} k={r.speculative.num_speculative_tokens}" if r.speculative else None
    out["kv_cache_tokens"] = int(sc.capacity.gpu_kv_cache_tokens.value)
    return out
