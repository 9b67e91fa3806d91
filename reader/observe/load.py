"""The load a server's metrics show, as requests to simulate again.

How many requests finished, their prompt and output lengths (from the per-request histograms: values spread
evenly inside each bucket, their mean held to the exact _sum / _count), and when they arrived (per interval
between snapshots: finished requests plus the change in those running or waiting). What the metrics do not
say is drawn: which prompt went with which output, and the order within an interval; `seed` picks the draw.

Arrivals: an interval had its arrivals all at once when they were mostly still waiting at its end
(BURST_WAITING of them), or when the requests it scheduled had waited, on average, a good share of the time
the server was busy in it (BURST_WAIT_SHARE): a stream spread over the interval that the server keeps up with
waits little, and a burst the server worked through before the next snapshot leaves no queue at its end but
long waits behind it (vllm:request_queue_time_seconds). A burst is placed where the steps the server ran after
it begin (the interval's steps times its mean step while busy, back from the interval's end), so a burst that
straddles two snapshots stays one burst. An interval that began with the server empty and ended with most of
its arrivals still in it caught the start of a burst: those arrivals are spread over its busy tail (its steps
at the mean step, back from its end), not over the idle time before. Any other interval's arrivals are spread
evenly over it.
A single snapshot gives only a mean rate (Poisson).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..errors import ReaderError
from ..sim.workload import ArrivalSpec, LengthSpec, Workload, WorkloadSpec
from .evidence import BURST_WAIT_SHARE, HistogramData, Interval, ObservedLoad

BURST_WAITING = 0.5


def lengths(h: Optional[HistogramData], mean: Optional[float], n: int, what: str) -> np.ndarray:
    if h is not None and h.count > 0:
        values = h.histogram().spread(n, lowest=1.0)
    elif mean:
        values = np.full(n, mean)
    else:
        raise ReaderError(f"the metrics do not show the requests' {what} lengths (no vllm:request_{what}_tokens "
                          "histogram and no token counters): the observed load cannot be simulated.", key="--metrics")
    return np.maximum(1, np.rint(values)).astype(np.int64)


def arrivals(load: ObservedLoad, n: int, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    if not load.intervals:
        rate = n / load.span_s if load.span_s > 0 else 1.0
        gaps = rng.exponential(1.0 / rate, size=n)
        gaps[0] = 0.0
        return np.cumsum(gaps), f"Poisson at the mean rate, {rate:.2f} req/s (one snapshot: arrivals not seen)"
    origin = load.intervals[0].start
    # (start, end, arrivals, all at once?) per interval with arrivals; those in the server at the start first
    parts = [(0.0, 0.0, load.in_flight_at_start, True)]
    for i in load.intervals:
        if i.arrived > 0:
            queued = _came_at_once(i, load)
            start = _burst_start(i, load.step_ms) if queued or _came_late(i) else i.start
            parts.append((start - origin, i.end - origin, i.arrived, queued))
    weights = np.array([p[2] for p in parts])
    if weights.sum() <= 0:
        return np.zeros(n), "all at once (the snapshots do not show when they came)"
    share = weights / weights.sum()
    counts = np.floor(share * n).astype(int)
    for k in np.argsort(-(share * n - counts))[: n - int(counts.sum())]:
        counts[k] += 1
    times = [np.full(c, t0) if at_once else t0 + (t1 - t0) * (np.arange(c) + 0.5) / c
             for (t0, t1, _, at_once), c in zip(parts, counts) if c]
    out = np.sort(np.concatenate(times)) - min(float(t[0]) for t in times)
    bursts = sum(1 for p, c in zip(parts, counts) if c and p[3])
    spread = sum(1 for p, c in zip(parts, counts) if c and not p[3])
    if len(load.intervals) == 1 and load.queued_at_once is not None:
        gap = load.intervals[0].end - load.intervals[0].start
        return out, (("all at once (their queueing times say they came together" if load.queued_at_once else
                      "spread evenly (their queueing times show no burst") +
                     f"; two scrapes {gap:,.0f} s apart cannot say when)")
    if spread == 0 and bursts == 1:
        return out, "all at once"
    return out, (f"as counted between snapshots: {bursts} burst(s) that queued, {spread} interval(s) spread "
                 "evenly")


def _came_at_once(interval: Interval, load: ObservedLoad) -> bool:
    if interval.waiting_at_end >= BURST_WAITING * interval.arrived:
        return True
    step_ms = load.step_ms
    if len(load.intervals) == 1 and load.queued_at_once is not None:
        # one interval (a pair of scrapes): its gauges saw nothing of the queue; the requests' own queueing
        # times against the busy span say whether they came together
        return load.queued_at_once
    busy_s = interval.end - interval.start
    if step_ms:
        busy_s = min(busy_s, interval.steps * step_ms / 1000.0)
    waited = interval.queue_mean_s
    return waited is not None and busy_s > 0 and waited >= BURST_WAIT_SHARE * busy_s


def _came_late(interval: Interval) -> bool:
    """Arrivals into an empty server that were mostly still in it at the interval's end came in its busy tail
    (the start of a burst that the next snapshot caught the rest of): they are spread over that tail, not over
    the idle time before it."""
    return interval.in_server_at_start == 0 and interval.in_server_at_end >= BURST_WAITING * interval.arrived


def _burst_start(interval: Interval, step_ms: Optional[float]) -> float:
    """When a burst that queued came: its interval's steps, at the server's mean step, back from the end."""
    if not step_ms:
        return interval.start
    return max(interval.start, interval.end - interval.steps * step_ms / 1000.0)


def workload(load: ObservedLoad, seed: int = 0, max_model_len: Optional[int] = None) -> tuple[WorkloadSpec, Workload]:
    """The observed load as a workload spec (for the report) and its concrete requests (for the simulator)."""
    n = load.num_requests
    if n <= 0:
        raise ReaderError("no request finished in the observed window: there is no load to simulate.",
                          key="--metrics")
    rng = np.random.default_rng(seed)
    prompt = lengths(load.prompt_len, load.prompt_mean, n, "prompt")
    output = lengths(load.output_len, load.output_mean, n, "generation")
    rng.shuffle(prompt)
    rng.shuffle(output)
    if max_model_len:
        prompt = np.minimum(prompt, max_model_len - 1)
        output = np.maximum(1, np.minimum(output, max_model_len - prompt))
    arrival, how = arrivals(load, n, rng)
    spec = WorkloadSpec(num_requests=n, seed=seed, preset=None,
                        arrival=ArrivalSpec(process="burst") if not arrival.any()
                        else ArrivalSpec(process="poisson", rate=max(n / max(float(arrival[-1]), 1e-3), 1e-3)),
                        prompt_len=LengthSpec(dist="empirical", values=sorted(set(prompt.tolist()))),
                        output_len=LengthSpec(dist="empirical", values=sorted(set(output.tolist()))))
    description = (f"the observed load: {n} requests, prompts {prompt.mean():.0f} tokens on average, outputs "
                   f"{output.mean():.0f}; arrivals {how}")
    zeros = np.zeros(n, dtype=np.int64)
    return spec, Workload(arrival=arrival, prompt_len=prompt, output_len=output, prefix_group=np.full(n, -1),
                          prefix_len=zeros, priority=zeros.copy(), max_concurrency=None, description=description)
