"""Where snapshots come from: saved scrape files, a live /metrics URL scraped over a window, or a Prometheus
server's range query. Each returns the snapshots and how to name them in the report."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ..errors import ReaderError
from . import prometheus
from .http import get, is_url, metrics_url
from .samples import Snapshot, parse
from .scrape import Scrape, load_files, save

ProgressFn = Callable[[str], None]


@dataclass
class Collected:
    snapshots: list[Snapshot]
    source: str            # in words, for the report
    unit: str              # what one snapshot is: "scrapes" or "Prometheus points"
    scrapes: list[Scrape] = field(default_factory=list)   # the raw pages (live scraping), for --save
    notes: list[str] = field(default_factory=list)


def from_files(paths: list[str]) -> Collected:
    scrapes = load_files(paths)
    notes = []
    if any(not s.time_known for s in scrapes):
        notes.append("a saved scrape without a vllm-reader header line: its file's modification time stands in "
                     "for when it was taken")
    names = ", ".join(paths) if len(paths) <= 3 else f"{paths[0]} and {len(paths) - 1} more"
    return Collected([parse(s) for s in scrapes], names, "scrapes", scrapes, notes)


@dataclass
class LiveWindow:
    window_s: float = 60.0
    interval_s: float = 5.0
    until_idle: bool = False
    timeout_s: float = 10.0


def from_url(url: str, plan: LiveWindow, progress: Optional[ProgressFn] = None,
             clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep) -> Collected:
    """Scrape now, then every interval until the window is over (or, with until_idle, until traffic was seen
    and two scrapes in a row found the server idle with its counters still)."""
    page = metrics_url(url)
    started = clock()
    scrapes: list[Scrape] = []
    snapshots: list[Snapshot] = []
    busy_seen = False
    next_at = started
    while True:
        scrape = Scrape(text=get(page, plan.timeout_s), time=clock(), source=page)
        snapshot = parse(scrape)
        scrapes.append(scrape)
        snapshots.append(snapshot)
        in_flight = _in_flight(snapshot)
        busy_seen = busy_seen or in_flight > 0 or _grew(snapshots)
        elapsed = clock() - started
        if progress is not None:
            progress(f"scraped {page} {len(scrapes)} time(s): {in_flight:.0f} requests in the server, "
                     f"{max(0.0, plan.window_s - elapsed):.0f} s of the {plan.window_s:g} s window left")
        if plan.until_idle and busy_seen and _settled(snapshots):
            break
        if elapsed >= plan.window_s:
            break
        next_at += plan.interval_s
        sleep(max(0.0, min(next_at, started + plan.window_s) - clock()))
    return Collected(snapshots, page, "scrapes", scrapes)


def _in_flight(snapshot: Snapshot) -> float:
    return _total(snapshot, "vllm:num_requests_running") + _total(snapshot, "vllm:num_requests_waiting")


# Counters that move while a burst is being worked through. One page that shows an empty server is not enough
# to stop on: in a CI run (2026-12-02) observe stopped at such a page with 7 of the 8 preemptions the server
# counted for the burst. Two empty pages with these counters unchanged between them are.
SETTLING = ("vllm:iteration_tokens_total_count", "vllm:num_preemptions_total", "vllm:request_success_total")


def _total(snapshot: Snapshot, name: str) -> float:
    return sum(s.value for s in snapshot.samples if s.name == name)


def _grew(snapshots: list[Snapshot]) -> bool:
    """Did engine steps run between the last two snapshots (traffic too short to be caught in flight)?"""
    if len(snapshots) < 2:
        return False
    return _total(snapshots[-1], SETTLING[0]) != _total(snapshots[-2], SETTLING[0])


def _settled(snapshots: list[Snapshot]) -> bool:
    """Idle for good: the last two snapshots found nothing in the server, and no counter moved between them."""
    if len(snapshots) < 3 or _in_flight(snapshots[-1]) or _in_flight(snapshots[-2]):
        return False
    return all(_total(snapshots[-1], n) == _total(snapshots[-2], n) for n in SETTLING)


@dataclass
class PrometheusRange:
    url: str
    range_s: float = 900.0
    end: Optional[float] = None       # unix seconds; None: now
    step_s: Optional[float] = None    # None: the range over about 500 points, at least 1 s
    selector: Optional[str] = None
    timeout_s: float = 30.0


def from_prometheus(spec: PrometheusRange, clock: Callable[[], float] = time.time) -> Collected:
    end = spec.end if spec.end is not None else clock()
    start = end - spec.range_s
    step = spec.step_s or max(1.0, round(spec.range_s / 500.0))
    payload = prometheus.fetch_range(spec.url, start, end, step, spec.selector, spec.timeout_s)
    snapshots = prometheus.snapshots(payload, spec.url)
    where = f" ({spec.selector})" if spec.selector else ""
    if not snapshots:
        raise ReaderError(f"the Prometheus server at {spec.url} has no vLLM series{where} between "
                          f"{_when(start)} and {_when(end)}.", key="--prometheus",
                          hint="Check that it scrapes the vLLM server, the --range and --end, and --selector.")
    return Collected(snapshots, f"Prometheus at {spec.url}{where}", "Prometheus points",
                     notes=[f"Prometheus range: {spec.range_s:,.0f} s up to {_when(end)}, a point every {step:g} s"])


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def collect(sources: list[str], plan: LiveWindow, prom: Optional[PrometheusRange],
            progress: Optional[ProgressFn] = None) -> Collected:
    if prom is not None:
        if sources:
            raise ReaderError("give either SOURCE (a /metrics URL or saved scrapes) or --prometheus, not both.",
                              key="--prometheus")
        return from_prometheus(prom)
    if not sources:
        raise ReaderError("nothing to observe: give a server's /metrics URL, saved scrape files, or --prometheus URL.",
                          key="SOURCE")
    urls = [s for s in sources if is_url(s)]
    if urls and len(sources) > 1:
        raise ReaderError("a live URL is observed on its own: give one URL, or only saved scrape files.",
                          key="SOURCE")
    if urls:
        return from_url(urls[0], plan, progress)
    return from_files(sources)


def save_scrapes(collected: Collected, path: str) -> None:
    if not collected.scrapes:
        raise ReaderError("--save keeps scraped pages; a Prometheus range has none to keep.", key="--save")
    try:
        save(collected.scrapes, Path(path))
    except OSError as err:
        raise ReaderError(f"cannot write the scrapes: {err.strerror}.", file=path, key="--save") from None
