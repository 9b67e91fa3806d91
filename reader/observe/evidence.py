"""A window of metrics -> Evidence (the type the verdict reads) and the load the server saw.

Counters are exact; histograms give exact means and bucket-interpolated percentiles; gauges are known only
at the snapshots. Scheduler state is read per interval between snapshots, over the span in which the
server was busy (from the last idle snapshot before traffic to the first idle one after it):

- requests waited: the waiting gauge was above zero at a snapshot and at the next one too (a request that
  has just arrived waits until the next step; a queue that lasts is what counts);
- waiting for KV blocks: the interval had preemptions, or fewer blocks were free than a prompt of the mean
  length needs (its first chunk: at most the token budget), while fewer than max_num_seqs ran;
- max_num_seqs full with blocks free: max_num_seqs requests ran, nothing was preempted, blocks were free;
- the token budget full: the interval's steps carried on average at least BUDGET_BOUND of the budget.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
from pydantic import BaseModel, Field

from ..evidence.model import Evidence
from .client_view import SERVER_SIDE, client_figures
from .histogram import Histogram
from .names import BY_KEY
from .series import Window

BUDGET_BOUND = 0.8
KV_FULL = 0.95
# Read from the requests' histograms when the gauges missed the busy span: a request queued when it waited
# longer than this many of the server's mean steps (one that has just arrived waits a step or two).
QUEUED_STEPS = 10
# ... and the budget held them when at least this share of steps used BUDGET_BOUND of it; time averages are
# given when the busy span's lower bound is at least RESOLVED of its upper one.
BUDGET_HELD = 0.5
RESOLVED = 0.8
# Requests came together when their mean queueing time is at least this share of the busy span (load.py).
BURST_WAIT_SHARE = 0.25


class Settings(BaseModel):
    """What the metrics do not say about the server's scheduler, given by the user or read from its config."""

    max_num_seqs: Optional[int] = None
    max_num_batched_tokens: Optional[int] = None


class Interval(BaseModel):
    """Between two snapshots: how many requests arrived (finished + change in those in the server), and how
    many were waiting at its end."""

    start: float
    end: float
    arrived: float
    steps: float
    waiting_at_end: float = 0.0
    in_server_at_start: float = 0.0  # running + waiting at its first snapshot
    in_server_at_end: float = 0.0
    # the mean wait in the queue of the requests that left it in the interval (vllm:request_queue_time_seconds)
    queue_mean_s: Optional[float] = None


class HistogramData(BaseModel):
    """A histogram's change as data: the finite bucket bounds and their cumulative counts (+Inf holds `count`)."""

    bounds: list[float]
    counts: list[float]
    total: float
    count: float

    @classmethod
    def of(cls, h: Histogram) -> "HistogramData":
        finite = [(b, c) for b, c in zip(h.bounds, h.counts) if not math.isinf(b)]
        return cls(bounds=[b for b, _ in finite], counts=[c for _, c in finite], total=h.total, count=h.count)

    def histogram(self) -> Histogram:
        return Histogram(tuple(self.bounds) + (math.inf,), tuple(self.counts) + (self.count,), self.total, self.count)


class ObservedLoad(BaseModel):
    """The load the server saw in the window, as far as its metrics tell: enough to simulate it again."""

    num_requests: int
    span_s: float
    in_flight_at_start: float = 0.0
    intervals: list[Interval] = Field(default_factory=list)
    prompt_len: Optional[HistogramData] = None
    output_len: Optional[HistogramData] = None
    prompt_mean: Optional[float] = None
    output_mean: Optional[float] = None
    step_ms: Optional[float] = None     # the server's mean step while busy
    busy_low_s: Optional[float] = None  # the busy span's lower bound (the slowest request, the steps' snapshots)
    # the queueing-time histogram says the requests came together: their mean wait is a good share of the busy
    # span (None: no histogram)
    queued_at_once: Optional[bool] = None


# Without these read at both ends, no verdict: which requests finished, how many steps ran, who queued.
VERDICT_NEEDS = ("finished", "step_tokens", "queue")


class Observation(BaseModel):
    evidence: Evidence
    load: ObservedLoad
    source: str
    snapshots: int
    window_s: float
    busy_s: float
    traffic: bool
    engines: int = 1
    model_name: Optional[str] = None
    names_used: dict[str, str] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)
    unread: list[str] = Field(default_factory=list)   # metrics present but not at both ends: unknown, not zero
    settings: Settings = Field(default_factory=Settings)

    @property
    def unjudged(self) -> list[str]:
        """What a verdict needs that the window holds only at one end (a scrape cut short)."""
        return [key for key in VERDICT_NEEDS if key in self.unread]


@dataclass
class _State:
    """Gauges and interval changes at each snapshot of the busy span."""

    times: np.ndarray
    running: np.ndarray
    waiting: np.ndarray
    kv: np.ndarray
    preempted: np.ndarray      # preemptions in the interval ending at the snapshot
    steps: np.ndarray
    step_tokens: np.ndarray


def observe(w: Window, settings: Settings, source: str, unit: str) -> Observation:
    notes: list[str] = []
    missing = [key for key in ("preemptions", "finished", "step_tokens", "running", "waiting", "kv_usage",
                               "cache_config") if w.name_of(key) is None]
    read = _Reader(w)
    finished_by = read.increase("finished", by="finished_reason")
    finished = int(round(sum(finished_by.values()))) if finished_by is not None else None
    steps_h = read.histogram("step_tokens")
    steps = int(round(steps_h.count)) if steps_h is not None else None
    prompt_tokens, gen_tokens = read.increase("prompt_tokens"), read.increase("generation_tokens")
    traffic = any(v for v in (finished, steps, prompt_tokens, gen_tokens))
    first, last = _busy(w)
    busy_s = max(w.snapshots[last].time - w.snapshots[first].time, 0.0)
    if len(w.snapshots) == 1:
        start = w.created()
        busy_s = max(w.end - start, 0.0) if start else 0.0
        notes.append("one scrape: counts are since the server started"
                     + (f" ({busy_s:,.0f} s before the scrape)" if start else " (its start time is not in the page)"))
    span = busy_span(w, first, last, read.histogram("e2el"), read.histogram("inference"), settings, busy_s)
    cache = _cache_config(w)
    prompt_h, output_h = read.histogram("prompt_len"), read.histogram("output_len")
    state = _state(w, first, last)
    need = _blocks_needed(prompt_h, settings, cache)
    ev = Evidence(
        source="metrics", description=f"{len(w.snapshots)} {unit} of {source}", duration_s=busy_s or None,
        duration_low_s=span.low if span.low < busy_s else None,
        num_requests=finished or 0,
        request_throughput=finished / busy_s if busy_s and finished is not None else None,
        output_throughput=gen_tokens / busy_s if busy_s and gen_tokens is not None else None,
        total_token_throughput=(prompt_tokens + gen_tokens) / busy_s
        if busy_s and prompt_tokens is not None and gen_tokens is not None else None,
        prompt_tokens=prompt_h.stats() if prompt_h else None,
        output_tokens=output_h.stats() if output_h else None,
        prompt_token_share=prompt_tokens / (prompt_tokens + gen_tokens)
        if prompt_tokens is not None and gen_tokens and prompt_tokens + gen_tokens > 0 else None,
        prompt_tokens_total=_int(prompt_tokens), output_tokens_total=_int(gen_tokens),
        steps_with_output=steps,
        preemptions=int(round(read.increase("preemptions") or 0)),
        recomputed_tokens=_int(read.increase("recomputed_tokens")),
        prefix_cache_queries=_int(read.increase("prefix_queries")),
        prefix_cache_hits=_int(read.increase("prefix_hits")),
        num_gpu_blocks=cache.get("num_gpu_blocks"), block_size=cache.get("block_size"),
        kv_cache_tokens=cache.get("kv_cache_tokens"),
        sample_unit=unit, max_num_seqs=settings.max_num_seqs, token_budget=settings.max_num_batched_tokens,
        waiting_by_reason=_waiting_by_reason(w, first, last),
        ttft_ms=read.ms("ttft"), itl_ms=read.ms("itl"), tpot_ms=read.ms("tpot"), e2el_ms=read.ms("e2el"),
        queue_time_ms=read.ms("queue"), bucket_ranges=read.ranges,
        unknown=read.unknown_figures(), notes=notes,
    )
    if span.how:
        notes.append(span.how)
    ev.figures = client_figures({key: read.histogram(key) for key in ("ttft", "e2el")})
    if ev.ttft_ms.count or ev.itl_ms.count:
        notes.append(SERVER_SIDE)
    read.keep_ranges("prompt_len", prompt_h)
    read.keep_ranges("output_len", output_h)
    ev.bucket_ranges = read.ranges
    if steps_h is not None and steps:
        ev.mean_tokens_per_step = steps_h.mean
        budget = settings.max_num_batched_tokens
        if budget:
            ev.budget_fill_mean = steps_h.mean / budget
            ev.budget_full_share = steps_h.share_above(budget * BUDGET_BOUND)
    if _gauges_see_the_busy_span(state):
        _fill_state(ev, state, settings, cache, need)
        ev.step_ms_mean = _busy_step_ms(state)
    else:
        _fill_from_requests(ev, read, settings, busy_s, notes)
    load = ObservedLoad(num_requests=finished or 0, span_s=busy_s, in_flight_at_start=_in_flight_at_start(w),
                        intervals=_intervals(w), prompt_len=HistogramData.of(prompt_h) if prompt_h else None,
                        output_len=HistogramData.of(output_h) if output_h else None,
                        prompt_mean=prompt_h.mean if prompt_h else None,
                        output_mean=output_h.mean if output_h else None, step_ms=ev.step_ms_mean,
                        busy_low_s=span.low, queued_at_once=_queued_at_once(read, span.low))
    if w.restarts_at:
        notes.append(f"the server's counters started again {len(w.restarts_at)} time(s) in the window (a restart): "
                     "increases count from zero after each")
    aborted = (finished_by or {}).get("abort", 0) + (finished_by or {}).get("error", 0)
    if aborted:
        notes.append(f"{aborted:.0f} of the {finished} finished requests were aborted or failed")
    for key in read.unread:
        notes.append(f"{BY_KEY[key].what} ({w.name_of(key)}) is not in both the first and the last "
                     f"{unit[:-1] if unit.endswith('s') else unit}: its change is unknown, not zero")
    ev.notes = notes   # pydantic kept a copy of the list given at construction
    return Observation(evidence=ev, load=load, source=source, snapshots=len(w.snapshots),
                       window_s=w.end - w.start, busy_s=busy_s, traffic=traffic,
                       engines=max(1, len(w.info("cache_config"))), model_name=w.model,
                       names_used=dict(w.names_used), missing=missing, unread=list(read.unread),
                       settings=settings)


def _int(value: Optional[float]) -> Optional[int]:
    return None if value is None else int(round(value))


# The figures a metric's absence leaves unknown (those whose Evidence field would otherwise read as zero first).
FIGURES_OF = {"finished": ("load.requests", "throughput.requests"), "preemptions": ("sched.preemptions",),
              "step_tokens": ("sched.steps", "sched.tokens_per_step"), "generation_tokens": ("throughput.output",)}


class _Reader:
    """The window's counters and histograms, each known only when read at both ends of the window (or, from
    one scrape, since the server started); which were not, and the bucket each percentile lies in."""

    def __init__(self, w: Window):
        self.w = w
        self.unread: list[str] = []
        self.ranges: dict[str, tuple[float, float]] = {}

    def known(self, key: str) -> bool:
        if self.w.name_of(key) is None:
            return False
        if len(self.w.snapshots) == 1 or self.w.read_at_both_ends(key):
            return True
        if key not in self.unread:
            self.unread.append(key)
        return False

    def increase(self, key: str, by: Optional[str] = None):
        return self.w.increase(key, by=by) if self.known(key) else None

    def histogram(self, key: str) -> Optional[Histogram]:
        return self.w.histogram(key) if self.known(key) else None

    def ms(self, key: str):
        """count, exact mean and bucket-interpolated percentiles in ms; each percentile's bucket (in ms) kept in
        `ranges` as "<key>.median", "<key>.p90", "<key>.p99"."""
        from ..sim.result import LatencyStats

        h = self.histogram(key)
        if h is None:
            return LatencyStats()
        self.keep_ranges(key, h, 1000.0)
        return h.stats(1000.0)

    def keep_ranges(self, key: str, h: Optional[Histogram], scale: float = 1.0) -> None:
        for name, q in (("median", 0.5), ("p90", 0.9), ("p99", 0.99)):
            bucket = h.bucket_of(q) if h is not None else None
            if bucket is not None:
                self.ranges[f"{key}.{name}"] = (scale * bucket[0], scale * bucket[1])

    def unknown_figures(self) -> list[str]:
        return [f for key in self.unread for f in FIGURES_OF.get(key, ())]


class Span(BaseModel):
    """The busy span's bounds: at most the time between the idle snapshots around it, at least the longest of
    what the counters prove (steps ran in the snapshots' intervals between; the slowest request's latency)."""

    low: float
    high: float
    how: str = ""


def busy_span(w: Window, first: int, last: int, e2el: Optional[Histogram], inference: Optional[Histogram],
              settings: Settings, high: float) -> Span:
    steps = w.track("step_tokens", "_count") if w.read_at_both_ends("step_tokens") else []
    grew = [i for i in range(first + 1, last + 1) if steps and steps[i] > steps[i - 1]]
    inner = w.snapshots[grew[-1] - 1].time - w.snapshots[grew[0]].time if len(grew) >= 2 else 0.0
    slowest = e2el.lowest_bound_above_all() if e2el is not None else None
    # at most max_num_seqs requests run at once, so their summed running time needs at least this long
    packed = inference.total / settings.max_num_seqs if inference is not None and settings.max_num_seqs else 0.0
    low = min(high, max(inner, slowest or 0.0, packed))
    if high <= 0 or low >= high * 0.98:
        return Span(low=high, high=high)
    gap = max((b.time - a.time for a, b in zip(w.snapshots[first:last], w.snapshots[first + 1:last + 1])),
              default=0.0)
    why = [f"steps ran from one snapshot to another {inner:,.1f} s apart"] if inner else []
    if slowest:
        why.append(f"the slowest request took more than {slowest:g} s (its latency histogram's bucket)")
    if packed:
        why.append(f"the requests ran {inference.total:,.1f} s in all, at most {settings.max_num_seqs} at a time")
    return Span(low=low, high=high, how=(
        f"busy for between {low:,.1f} s and {high:,.1f} s: the snapshots around the traffic are up to {gap:,.1f} s "
        f"apart (the resolution), and {' and '.join(why) or 'nothing narrows it'}; rates are given over both"))


def _busy(w: Window) -> tuple[int, int]:
    """Indices of the busy span's first and last snapshot: the last idle one before steps ran, the first idle
    one after the last step (the whole window when nothing tells)."""
    steps = w.track("step_tokens", "_count") or w.track("finished")
    n = len(w.snapshots)
    if not steps or n == 1:
        return 0, n - 1
    grew = [i for i in range(1, n) if steps[i] > steps[i - 1]]
    if not grew:
        return 0, n - 1
    return grew[0] - 1, grew[-1]


def _state(w: Window, first: int, last: int) -> _State:
    times = np.array([s.time for s in w.snapshots])

    def gauge(key: str, how: str = "sum") -> np.ndarray:
        values = dict(w.gauge(key, how))
        return np.array([values.get(t, np.nan) for t in times])

    def per_interval(track: list[float]) -> np.ndarray:
        if not track:
            return np.full(times.size, np.nan)
        a = np.array(track)
        return np.concatenate(([0.0], np.diff(a)))

    sl = slice(first, last + 1)
    return _State(times=times[sl], running=gauge("running")[sl], waiting=gauge("waiting")[sl],
                  kv=gauge("kv_usage", "max")[sl], preempted=per_interval(w.track("preemptions"))[sl],
                  steps=per_interval(w.track("step_tokens", "_count"))[sl],
                  step_tokens=per_interval(w.track("step_tokens", "_sum"))[sl])


def _fill_state(ev: Evidence, st: _State, settings: Settings, cache: dict, need: Optional[int]) -> None:
    n = st.times.size
    if n == 0 or np.all(np.isnan(st.running)):
        return
    weights = np.diff(st.times) if n > 1 else np.ones(1)
    held = slice(0, n - 1) if n > 1 else slice(0, 1)    # a snapshot's value holds until the next one

    def mean(values: np.ndarray) -> Optional[float]:
        v, wts = values[held], weights
        ok = ~np.isnan(v)
        return float((v[ok] * wts[ok]).sum() / wts[ok].sum()) if ok.any() and wts[ok].sum() > 0 else None

    waiting = np.nan_to_num(st.waiting)
    running = np.nan_to_num(st.running)
    lasted = waiting > 0
    if n > 1:
        lasted = lasted & np.concatenate((waiting[1:] > 0, [False]))
    ev.running_mean, ev.running_peak = mean(st.running), float(np.nanmax(st.running))
    ev.waiting_mean = mean(st.waiting)
    ev.waiting_peak = int(waiting[lasted].max()) if lasted.any() else 0
    if not np.all(np.isnan(st.kv)):
        ev.kv_usage_peak = float(np.nanmax(st.kv))
        ev.kv_usage_mean = mean(st.kv)
        full = np.nan_to_num(st.kv[held]) >= KV_FULL
        ev.fraction_time_kv_above_95pct = float(weights[full].sum() / weights.sum()) if weights.sum() > 0 else None
    # the interval ending at each snapshot (the first snapshot has none)
    intervals = np.arange(n) > 0 if n > 1 else np.ones(1, dtype=bool)
    ev.samples = int(intervals.sum())
    below_seqs = running < settings.max_num_seqs if settings.max_num_seqs else np.ones(n, dtype=bool)
    free = _free_blocks(st.kv, cache)
    short_of_blocks = (free < need) if (free is not None and need) else (np.nan_to_num(st.kv) >= KV_FULL)
    preempted = np.nan_to_num(st.preempted) > 0
    ev.samples_blocked_by_kv = int((intervals & lasted & below_seqs & (preempted | short_of_blocks)).sum())
    if settings.max_num_seqs:
        blocks_free = ~short_of_blocks & ~preempted
        ev.samples_seqs_full_blocks_free = int((intervals & lasted & ~below_seqs & blocks_free).sum())
    budget = settings.max_num_batched_tokens
    if budget:
        with np.errstate(invalid="ignore", divide="ignore"):
            per_step = np.where(st.steps > 0, st.step_tokens / np.where(st.steps > 0, st.steps, 1), 0.0)
        full = np.nan_to_num(per_step) >= BUDGET_BOUND * budget
        ev.samples_stopped_by_budget = int((intervals & lasted & below_seqs & full & ~preempted).sum())


def _gauges_see_the_busy_span(st: _State) -> bool:
    """Did at least two snapshots find requests in the server? Fewer (a pair of scrapes around a burst, points
    minutes apart) leave the gauges blind to the queue, and the requests' histograms must tell instead."""
    in_server = np.nan_to_num(st.running) + np.nan_to_num(st.waiting)
    return st.times.size == 1 or int((in_server > 0).sum()) >= 2


def _fill_from_requests(ev: Evidence, read: _Reader, settings: Settings, busy_s: float,
                        notes: list[str]) -> None:
    """The scheduler's state from the requests' histograms: how many queued (the queueing-time buckets) and so
    what held them back: preemptions say the KV cache; steps that mostly filled the token budget say the budget;
    else max_num_seqs (the only other cap on admission). Shares are of the finished requests. Time averages
    come from the latency histograms' exact sums over the busy span (Little's law), and only when the span is
    known to RESOLVED: else they are unknown and a note gives their bounds."""
    queue, running = read.histogram("queue"), read.histogram("inference")
    low = ev.duration_low_s or busy_s
    if queue is None or not low or not ev.num_requests:
        return
    step_s = low / ev.steps_with_output if ev.steps_with_output else None
    bound = queue.bound_at_or_above(QUEUED_STEPS * step_s) if step_s else None
    queued = int(round(queue.count_above(bound))) if bound is not None else None
    ev.samples, ev.sample_unit, ev.requests_queued = ev.num_requests, "requests", queued
    ev.waiting_by_reason = {}   # its snapshots saw the server empty: their zeros are not the busy span's
    resolved = low >= RESOLVED * busy_s
    span = (low + busy_s) / 2
    if resolved:
        ev.waiting_mean = queue.total / span
        ev.running_mean = running.total / span if running is not None else None
        ev.step_ms_mean = 1000.0 * span / ev.steps_with_output if ev.steps_with_output else None
    if queued is None:
        return
    kv_short = ev.preemptions > 0
    budget_full = (ev.budget_full_share or 0.0) >= BUDGET_HELD
    ev.samples_blocked_by_kv = queued if kv_short else 0
    ev.samples_seqs_full_blocks_free = (queued if not kv_short and not budget_full else 0) \
        if settings.max_num_seqs else None
    ev.samples_stopped_by_budget = (queued if budget_full and not kv_short else 0) \
        if settings.max_num_batched_tokens else None
    averages = (f"requests ran {running.total / busy_s:.1f} to {running.total / low:.1f} at a time on average and "
                f"waited {queue.total / busy_s:.1f} to {queue.total / low:.1f} (the latency histograms' sums over "
                "the busy span's bounds)") if running is not None and not resolved else ""
    notes.append("the gauges did not see the busy span (fewer than two snapshots found requests in the server): "
                 f"{queued:,} of {ev.num_requests:,} requests waited more than {_seconds(bound)} in the queue (the "
                 f"queueing-time histogram's bucket at or above {QUEUED_STEPS} mean steps)"
                 + (f"; {averages}" if averages else ""))


def _seconds(value: float) -> str:
    return f"{value:g} s" if value >= 1 else f"{1000 * value:g} ms"


def _queued_at_once(read: _Reader, busy_low_s: float) -> Optional[bool]:
    queue = read.histogram("queue")
    if queue is None or queue.mean is None or busy_low_s <= 0:
        return None
    return queue.mean >= BURST_WAIT_SHARE * busy_low_s


def _busy_step_ms(st: _State) -> Optional[float]:
    """Time over steps in the intervals during which requests were in the server at both ends."""
    if st.times.size < 2:
        return None
    in_server = np.nan_to_num(st.running) + np.nan_to_num(st.waiting)
    busy = (in_server[:-1] > 0) & (in_server[1:] > 0) & (np.nan_to_num(st.steps[1:]) > 0)
    steps = float(np.nan_to_num(st.steps[1:])[busy].sum())
    return 1000.0 * float(np.diff(st.times)[busy].sum()) / steps if steps else None


def _free_blocks(kv: np.ndarray, cache: dict) -> Optional[np.ndarray]:
    blocks = cache.get("num_gpu_blocks")
    if not blocks:
        return None
    # vLLM's usage is 1 - free / (num_gpu_blocks - 1): the null block is never free (BlockPool.get_usage)
    return np.floor((1.0 - np.nan_to_num(kv)) * (blocks - 1) + 1e-9)


def _blocks_needed(prompt_h: Optional[Histogram], settings: Settings, cache: dict) -> Optional[int]:
    block = cache.get("block_size")
    if not block or prompt_h is None or prompt_h.mean is None:
        return None
    tokens = prompt_h.mean
    if settings.max_num_batched_tokens:
        tokens = min(tokens, settings.max_num_batched_tokens)
    return max(1, math.ceil(tokens / block))


def _waiting_by_reason(w: Window, first: int, last: int) -> dict[str, float]:
    out = {}
    lo, hi = w.snapshots[first].time, w.snapshots[last].time
    for labels in {s.label("reason") for snap in w.snapshots for s in snap.samples
                   if w.name_of("waiting_by_reason") and s.name == w.name_of("waiting_by_reason")}:
        if labels is None:
            continue
        values = [v for t, v in w.gauge("waiting_by_reason", where={"reason": labels}) if lo <= t <= hi]
        if values:
            out[labels] = float(np.mean(values))
    return out


def _cache_config(w: Window) -> dict:
    """num_gpu_blocks, block_size and the KV size in tokens from vllm:cache_config_info (summed over engines)."""
    infos = w.info("cache_config")
    out: dict = {}
    blocks = [_as_int(i.get("num_gpu_blocks")) for i in infos]
    sizes = [_as_int(i.get("block_size")) for i in infos]
    tokens = [_as_int(i.get("kv_cache_size_tokens")) for i in infos]
    if blocks and all(b is not None for b in blocks):
        out["num_gpu_blocks"] = sum(blocks)
    if sizes and sizes[0] is not None:
        out["block_size"] = sizes[0]
    if tokens and all(t is not None for t in tokens):
        out["kv_cache_tokens"] = sum(tokens)
    elif "num_gpu_blocks" in out and "block_size" in out:
        out["kv_cache_tokens"] = out["num_gpu_blocks"] * out["block_size"]
    return out


def _as_int(text: Optional[str]) -> Optional[int]:
    try:
        return int(float(text)) if text not in (None, "None", "") else None
    except ValueError:
        return None


def _in_flight_at_start(w: Window) -> float:
    running = w.gauge("running")
    waiting = w.gauge("waiting")
    if not running or len(w.snapshots) == 1:
        return 0.0
    return (running[0][1] if running[0][0] == w.start else 0.0) + \
        (waiting[0][1] if waiting and waiting[0][0] == w.start else 0.0)


def _intervals(w: Window) -> list[Interval]:
    """Arrivals between consecutive snapshots: finished requests plus the change in those running or waiting."""
    if len(w.snapshots) < 2:
        return []
    finished = w.track("finished")
    steps = w.track("step_tokens", "_count") or [0.0] * len(w.snapshots)
    queue_sum, queue_count = w.track("queue", "_sum"), w.track("queue", "_count")
    in_server = {t: v for t, v in w.gauge("running")}
    waiting = dict(w.gauge("waiting"))
    for t, v in waiting.items():
        in_server[t] = in_server.get(t, 0.0) + v
    out = []
    for i in range(1, len(w.snapshots)):
        t0, t1 = w.snapshots[i - 1].time, w.snapshots[i].time
        done = (finished[i] - finished[i - 1]) if finished else 0.0
        change = in_server.get(t1, 0.0) - in_server.get(t0, 0.0)
        scheduled = (queue_count[i] - queue_count[i - 1]) if queue_count and queue_sum else 0.0
        mean_wait = (queue_sum[i] - queue_sum[i - 1]) / scheduled if scheduled > 0 else None
        out.append(Interval(start=t0, end=t1, arrived=max(0.0, done + change), steps=steps[i] - steps[i - 1],
                            waiting_at_end=waiting.get(t1, 0.0), in_server_at_start=in_server.get(t0, 0.0),
                            in_server_at_end=in_server.get(t1, 0.0), queue_mean_s=mean_wait))
    return out
