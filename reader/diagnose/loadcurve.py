"""The load curve: the workload's shape (lengths, prefix sharing) offered at rising load until it no longer fits.

Load is what the workload's arrivals say it is: requests per second for open-loop arrivals (Poisson, gamma, a
trace scaled in time; a batch is read as a rate), concurrent clients for a closed loop. The search brackets
the highest load that fits (from the workload's own load: up 2x and 4x, or down by the lightest load's margin
to the SLOs) and cuts the bracket into thirds once (bracket.py, the search the plan sizes replicas with too); a
last round places the load where the first default starts to bind. Every point is one trial of the one trial
runner, so the points of a round run in its parallel workers.

A load fits when the replica keeps up with it and every SLO is met (slo_fit, as a plan sizes replicas); a rate
never fits above a tenth more than the most requests per second any load simulated completed.
Without SLOs, a load fits up to the knee: while its P99 time to first token (where waiting for admission
shows) and its P99 end-to-end latency (where a crowded batch's slower decoding shows) have each grown, since
the lightest load simulated (a quarter of the workload's own, simulated first), by no more than its output
throughput has (all as ratios; a lighter one still when that quarter is past the knee itself). Past the knee
each extra request buys more waiting than serving.

A default binds at a load when its signal in the verdict's scoring (evidence/verdict.py) is above noise:
preemptions and admission waiting for KV blocks (PagedAttention), max_num_seqs full while blocks are free
with requests waiting (continuous batching), steps whose token budget is full while prompts wait, or
prefill steps that stall decoding (chunked prefill).
"""
from __future__ import annotations

import math
from typing import Literal, Optional

from pydantic import BaseModel, Field

from ..evidence.verdict import MIN_SCORE, decide
from ..sim.traffic import Share, Traffic
from ..sim.workload import WorkloadSpec
from .bracket import BISECT_ROUNDS, narrow, split
from .metrics import Metrics
from .scenario import Change, Scenario
from .slo_fit import OVERLOADED, fits, margin, overload
from .trials import RuleErrors, Trial, try_changes

SCHEDULER_LIMITS = ("kv_memory", "admission", "budget_small", "budget_large")
# Requests per load point (at most; fewer when the workload has fewer): a P99 over 250 requests is the third
# slowest, and a point costs a quarter of a 1,000-request diagnosis run (the curve's budget is about one more
# diagnosis, issue 24). A run this short may end before a growing queue shows; an SLO, or the knee's latency
# growth, still tells that the load does not fit.
POINT_REQUESTS = 250
WIDEN = 4.0  # how far a bracket that has not yet found a fit (or a miss) moves per round
TRANSITION_ROUNDS = 1  # narrows the gap below the first binding load to its square root
KNEE_REFERENCE = 4.0  # without SLOs, the knee is measured from a quarter of the workload's own load
GAP = 1.3  # a limit's first binding load is refined when the point below it is further than this factor


class LoadPoint(BaseModel):
    load: float
    status: str = "simulated"
    why_not: Optional[str] = None
    metrics: Optional[Metrics] = None
    fits: bool = False
    margin: Optional[float] = None  # min over the SLOs of target / P99 (without SLOs: how far it keeps up)
    overload: Optional[float] = None  # offered / completed req/s where the queue grew
    limit: str = "load"  # what the verdict's scoring names at this load alone
    binding: list[str] = Field(default_factory=list)  # scheduler defaults whose signal is above noise
    kv_usage_peak_pct: Optional[float] = None
    waiting_peak: int = 0


class Binding(BaseModel):
    limit: str
    load: float  # the lowest load simulated at which it binds


class LoadCurve(BaseModel):
    kind: Literal["rate", "clients"]
    unit: str
    shape: str  # the workload's lengths and prefix sharing, offered at every load
    rule: Literal["slos", "knee"]
    replicas: int = 1
    points: list[LoadPoint] = Field(default_factory=list)  # by load
    capacity: Optional[float] = None  # the highest load that fits, per replica
    capacity_is_lower_bound: bool = False  # no load simulated missed: the search stopped before the limit
    first_miss: Optional[float] = None
    saturation_output_tok_s: float = 0.0
    saturation_request_rate: float = 0.0
    free_until: Optional[float] = None  # the highest load at which no default binds
    order: list[Binding] = Field(default_factory=list)
    given: bool = True  # the workload's load is the user's own, not a preset's
    offered: Optional[float] = None  # the user's own load per replica, when it is a rate or clients
    headline: str = ""  # the capacity, the order in which the defaults bind, where the throughput levels off

    @property
    def service_capacity(self) -> Optional[float]:
        return self.capacity * self.replicas if self.capacity is not None else None

    def first_binding(self) -> Optional[Binding]:
        return self.order[0] if self.order else None


def load_curve(base: Scenario, rule_errors: RuleErrors, ridge: Optional[float], workers: Optional[int] = None,
               replicas: int = 1, given: bool = True, own: Optional[Trial] = None) -> LoadCurve:
    """The curve of a scenario that starts; its own workload gives the shape and the first load tried. given: the
    workload's load is the user's own (the config, the command line or a server's metrics), not a preset's.
    own: the diagnosis's run at the workload's own load, reused as that load's point."""
    traffic, kind = _traffic(base)
    search = _Search(base, traffic, kind, rule_errors, ridge, workers)
    start = float(traffic.total)
    first = [] if base.slos_ms else [start / KNEE_REFERENCE]  # the knee's yardstick: a light load, once
    if own is not None:  # the diagnosis already simulated the workload's own load
        search.points[search.load_of(start)] = search.point(search.load_of(start), own)
    else:
        first.append(start)
    search.run(first)
    for _ in range(3):
        ok, miss = search.split()
        if ok is None:
            guess = search.guess_below()
            search.run([guess / 2, guess])
        elif miss is None:
            search.run([search.highest() * math.sqrt(WIDEN), search.highest() * WIDEN])
        elif ok == search.lowest() and not base.slos_ms:
            search.run([search.lowest() / KNEE_REFERENCE])  # the yardstick was past the knee already: lighter
        else:
            break
    narrow(search.fits(), search.run, BISECT_ROUNDS, integral=kind == "clients")
    for _ in range(TRANSITION_ROUNDS):
        search.run(search.transitions())
    curve = search.curve(replicas)
    curve.given = given
    curve.offered = traffic.total if given and base.spec.arrival.process != "burst" else None
    curve.headline = headline(curve)
    return curve


def _traffic(base: Scenario) -> tuple[Traffic, Literal["rate", "clients"]]:
    traffic = Traffic(base.spec)
    if traffic.kind == "batch":  # a batch has no rate: its requests are offered as Poisson arrivals, the search
        # starting at the rate that spreads the batch over a minute
        traffic = Traffic(base.spec, target_rate=max(base.workload.num_requests / 60.0, 0.1))
    return traffic, "clients" if traffic.kind == "clients" else "rate"


class _Search:
    def __init__(self, base: Scenario, traffic: Traffic, kind: Literal["rate", "clients"], rule_errors: RuleErrors,
                 ridge: Optional[float], workers: Optional[int]) -> None:
        self.base, self.traffic, self.kind = base, traffic, kind
        self.rule_errors, self.ridge, self.workers = rule_errors, ridge, workers
        self.points: dict[float, LoadPoint] = {}

    def run(self, loads: list[float]) -> dict[float, bool]:
        """Simulates the loads not simulated yet; returns whether each load simulated so far fits."""
        wanted = sorted({self.load_of(x) for x in loads if x > 0} - set(self.points))
        if not wanted:
            self.judge()
            return self.fits()
        trials = try_changes(self.base, [Change(workload=self._share(x)) for x in wanted], self.rule_errors,
                             self.workers)
        for load, trial in zip(wanted, trials):
            self.points[load] = self.point(load, trial)
        self.judge()
        return self.fits()

    def fits(self) -> dict[float, bool]:
        return {load: p.fits for load, p in self.points.items()}

    def load_of(self, x: float) -> float:
        return float(max(1, round(x))) if self.kind == "clients" else float(f"{x:.3g}")

    def _share(self, load: float) -> Share:
        share = self.traffic.share(1, load)
        if isinstance(share, WorkloadSpec) and not share.trace:
            share = share.model_copy(update={"num_requests": min(share.num_requests, POINT_REQUESTS)})
        return share

    def point(self, load: float, trial: Trial) -> LoadPoint:
        point = LoadPoint(load=load, status=trial.status, why_not=trial.why_not, metrics=trial.metrics)
        ev = trial.evidence
        if ev is None or trial.metrics is None:
            return point
        verdict = decide(ev, self.base.slos_ms, self.ridge)
        point.limit = verdict.limit
        point.binding = [s.limit for s in verdict.signals if s.limit in SCHEDULER_LIMITS and s.score >= MIN_SCORE]
        point.kv_usage_peak_pct = 100 * ev.kv_usage_peak if ev.kv_usage_peak is not None else None
        point.waiting_peak = ev.waiting_peak
        if self.kind == "rate" and trial.metrics.request_throughput:
            point.overload = overload(load, trial.metrics, ev)
        return point

    def judge(self) -> None:
        """Whether each point fits; without SLOs, against the lightest point simulated so far (the knee)."""
        done = self.sorted()
        lightest = next((p for p in done if p.metrics is not None and p.metrics.completed), None)
        # A short run may end before its queue shows: no rate fits above what any load simulated completed.
        ceiling = OVERLOADED * max((p.metrics.request_throughput for p in done if p.metrics is not None),
                                   default=0.0) / self.kept_up(lightest)
        for p in done:
            if p.metrics is None:
                p.fits = False
                continue
            slos = self.base.slos_ms
            p.margin = margin(p.metrics, slos, p.overload)
            p.fits = fits(p.metrics, p.margin, p.overload)
            if not slos and p.fits and lightest is not None:
                p.fits = _before_knee(p.metrics, lightest.metrics)
            if self.kind == "rate" and p.load > ceiling:
                p.fits = False

    def kept_up(self, lightest: Optional[LoadPoint]) -> float:
        """Completed over offered requests per second where the replica keeps up: below 1 even there, because
        every load replays one seeded arrival sample stretched to its rate (96 Poisson arrivals can span 15% more
        than 96 / rate) and a run ends one drain after its last arrival. The lightest load's shortfall is every
        load's, so the ceiling is set against it (a served burst of 96 read 0.85 at every load)."""
        if self.kind != "rate" or lightest is None or not lightest.metrics.request_throughput:
            return 1.0
        return min(1.0, max(0.5, lightest.metrics.request_throughput / lightest.load))

    def sorted(self) -> list[LoadPoint]:
        return [self.points[x] for x in sorted(self.points)]

    def guess_below(self) -> float:
        """Where to look when every load simulated misses: the lightest load scaled by its margin to the SLOs (a
        tail twice its target suggests half the load), kept between a sixteenth and half of it."""
        light = self.sorted()[0]
        scale = light.margin if light.margin is not None else 1 / WIDEN
        return light.load * min(0.5, max(1 / 16, scale))

    def lowest(self) -> float:
        return min(self.points)

    def highest(self) -> float:
        return max(self.points)

    def split(self) -> tuple[Optional[float], Optional[float]]:
        return split(self.fits())

    def transitions(self) -> list[float]:
        """A load between the first point where a default binds and the point below it, where they are far apart;
        and one beyond the heaviest load when no default bound yet and none was overloaded, to see which binds."""
        done = self.sorted()
        out = []
        first = next((i for i, p in enumerate(done) if p.binding), None)
        if first and done[first].load / done[first - 1].load > GAP:
            out.append(math.sqrt(done[first].load * done[first - 1].load))
        if not any(p.binding for p in done) and not any(p.overload for p in done):
            out.append(self.highest() * 2)
        return out

    def curve(self, replicas: int) -> LoadCurve:
        done = self.sorted()
        ok, miss = self.split()
        simulated = [p for p in done if p.metrics is not None]
        order = []
        for limit in SCHEDULER_LIMITS:
            first = next((p for p in done if limit in p.binding), None)
            if first is not None:
                order.append(Binding(limit=limit, load=first.load))
        order.sort(key=lambda b: b.load)
        free = [p.load for p in done if p.metrics is not None and not p.binding
                and (not order or p.load < order[0].load)]
        return LoadCurve(
            kind=self.kind, unit=self.traffic.unit if self.kind == "rate" else "clients", shape=shape_words(self.base),
            rule="slos" if self.base.slos_ms else "knee", replicas=replicas, points=done, capacity=ok,
            capacity_is_lower_bound=miss is None, first_miss=miss,
            saturation_output_tok_s=max((p.metrics.output_throughput for p in simulated), default=0.0),
            saturation_request_rate=max((p.metrics.request_throughput for p in simulated), default=0.0),
            free_until=max(free) if free else None, order=order)


def _before_knee(m: Metrics, lightest: Metrics) -> bool:
    if not lightest.output_throughput:
        return True
    growth = m.output_throughput / lightest.output_throughput
    return all(not now or not then or now / then <= growth
               for now, then in ((m.ttft_p99_ms, lightest.ttft_p99_ms), (m.e2el_p99_ms, lightest.e2el_p99_ms)))


def shape_words(base: Scenario) -> str:
    """The workload's shape, without its load: what every point of the curve offers."""
    wl = base.workload
    prompt, output = float(wl.prompt_len.mean()), float(wl.output_len.mean())
    shared = float(wl.prefix_len.sum()) / max(float(wl.prompt_len.sum()), 1.0)
    name = f"the {base.spec.preset} preset's" if base.spec.preset else "this workload's"
    return (f"{name} requests (prompts {prompt:,.0f} tokens on average, outputs {output:,.0f}"
            + (f", {shared:.0%} of prompt tokens in shared prefixes" if shared >= 0.01 else "") + ")")


BINDS = {"kv_memory": "the KV cache fills (PagedAttention)",
         "admission": "max_num_seqs caps the batch (continuous batching)",
         "budget_small": "the token budget holds prompts back (chunked prefill)",
         "budget_large": "large prefill steps stall decoding (chunked prefill)"}


def amount(load: float, curve: LoadCurve) -> str:
    return f"{load:.0f} clients" if curve.kind == "clients" else f"{load:.3g} req/s"


def within(curve: LoadCurve) -> str:
    return "within its SLOs" if curve.rule == "slos" else "before the knee"


def headline(c: LoadCurve) -> str:
    """The capacity, the order in which the defaults bind as load rises, and where throughput levels off."""
    if c.capacity is None:
        lightest = c.points[0].load if c.points else 0.0
        text = f"no load simulated fits {within(c)}: even {amount(lightest, c)} of {c.shape} misses"
    else:
        text = (f"one replica sustains {'at least' if c.capacity_is_lower_bound else 'about'} "
                f"{amount(c.capacity, c)} of {c.shape} {within(c)}"
                + (" (no SLOs given: the highest load before latency grows faster than throughput)"
                   if c.rule == "knee" else ""))
        if c.replicas > 1:
            text += f"; the service's {c.replicas} replicas, {amount(c.service_capacity, c)}"
    return text + "; " + order_words(c) + f"; throughput levels off at {c.saturation_output_tok_s:,.0f} output tok/s " \
        f"({c.saturation_request_rate:.3g} req/s completed)"


def order_words(c: LoadCurve) -> str:
    if not c.order:
        return f"no default binds at any load simulated (up to {amount(c.points[-1].load, c)})" if c.points else ""
    first, rest = c.order[0], c.order[1:]
    text = (f"up to {amount(c.free_until, c)} no default binds; " if c.free_until is not None else "") \
        + f"at {amount(first.load, c)} {BINDS[first.limit]} first"
    return text + "".join(f", {BINDS[b.limit].split(' (')[0]} from {amount(b.load, c)}" for b in rest)


def at_load(c: LoadCurve) -> Optional[str]:
    """The user's own load set against the capacity."""
    if c.offered is None or c.capacity is None:
        return None
    ratio = c.offered / c.capacity
    where = (f"{100 * (1 - ratio):.0f}% below" if ratio <= 1 else f"{ratio:.1f}x") + \
        f" the {amount(c.capacity, c)} this replica sustains {within(c)}"
    return f"at {amount(c.offered, c)}, {where}"
