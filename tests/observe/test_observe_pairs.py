"""observe on what a user saves: two scrapes around a burst, or a scrape cut short, recorded from the real vLLM
0.32.0 CPU server under `vllm bench serve` (fixtures/live/metrics/bench, tools/record_observe_fixtures.py bench).

A pair of scrapes sees no gauge while the server is busy; the requests' histograms must tell whether they
queued and why, and the verdict must be the one the same run scraped every second gives. What the pair cannot
pin down (the busy span, a percentile) is a range that holds the bench's own figure; a series the last page
lacks is unknown, never zero.
"""
from __future__ import annotations

import json

import pytest

from reader.observe.evidence import Settings
from reader.observe.report import build_report
from reader.observe.sources import Collected, from_files

from ._pages import RECORDED

BENCH = RECORDED / "bench"
SETTINGS = Settings(max_num_seqs=16, max_num_batched_tokens=512)


def every_scrape(burst: str) -> Collected:
    return from_files([str(BENCH / f"{burst}.prom.gz")])


def pair(burst: str) -> Collected:
    """The first and the last scrape of the burst's recording: idle before it, idle after."""
    every = every_scrape(burst)
    return Collected([every.snapshots[0], every.snapshots[-1]], f"{burst} pair", "scrapes")


def bench(burst: str) -> dict:
    return json.loads((BENCH / f"{burst}.bench.json").read_text())


@pytest.mark.parametrize("burst, limit", [("saturated", "admission"), ("idle", "load")])
def test_a_pair_of_scrapes_gives_the_verdict_of_every_scrape(burst, limit):
    assert build_report(every_scrape(burst), SETTINGS, {}).verdict.limit == limit
    assert build_report(pair(burst), SETTINGS, {}).verdict.limit == limit


def test_the_saturated_pair_says_requests_queued_from_the_queueing_histogram():
    ev = build_report(pair("saturated"), SETTINGS, {}).evidence
    assert ev.waiting_peak == 0                      # no scrape saw the queue
    assert ev.requests_queued >= 64                  # 96 requests for 16 places: at least five waves waited
    assert ev.sample_unit == "requests" and ev.samples == 96


def test_a_pair_bounds_the_busy_span_and_its_rates_hold_the_benchs_throughput():
    r = build_report(pair("saturated"), SETTINGS, {})
    ev, measured = r.evidence, bench("saturated")
    assert ev.duration_low_s <= measured["duration"] <= ev.duration_s
    for field in ("request_throughput", "output_throughput"):
        over_longest = getattr(ev, field)
        assert over_longest <= measured[field] <= over_longest * ev.duration_s / ev.duration_low_s, field


def test_a_bucket_percentile_is_reported_as_its_bucket():
    ev = build_report(pair("saturated"), SETTINGS, {}).evidence
    low, high = ev.bucket_ranges["itl.median"]
    assert low <= bench("saturated")["median_itl_ms"] <= high
    low, high = ev.bucket_ranges["queue.p99"]
    assert low < ev.queue_time_ms.p99 <= high


def test_a_page_cut_short_leaves_its_missing_series_unknown_not_zero():
    every = every_scrape("saturated")
    cut = from_files([str(BENCH / "saturated-cut.prom")])
    r = build_report(Collected([every.snapshots[0], cut.snapshots[0]], "cut", "scrapes"), SETTINGS, {})
    assert r.traffic and r.verdict is None
    assert {"finished", "step_tokens", "queue"} <= set(r.unread)
    assert "load.requests" in r.evidence.unknown and "sched.steps" in r.evidence.unknown
    assert r.evidence.output_tokens_total == 96 * 128     # read at both ends: exact


def test_the_report_of_a_cut_page_says_unknown_and_gives_no_verdict():
    from reader.render.observe_view import render_observation

    every = every_scrape("saturated")
    cut = from_files([str(BENCH / "saturated-cut.prom")])
    text = render_observation(build_report(Collected([every.snapshots[0], cut.snapshots[0]], "cut", "scrapes"),
                                           SETTINGS, {}))
    assert "No verdict: the window holds only part" in text and "no traffic" not in text
    assert "| requests finished | unknown" in text and "(exact)" not in text.split("| requests finished |")[1][:40]


@pytest.mark.parametrize("case, limit", [("burst-kv", "kv_memory"), ("light", "load")])
def test_the_kv_bound_and_light_recordings_give_their_verdict_from_a_pair_too(case, limit):
    every = from_files([str(RECORDED / case / "scrapes.prom.gz")])
    pair_only = Collected([every.snapshots[0], every.snapshots[-1]], f"{case} pair", "scrapes")
    assert build_report(every, SETTINGS, {}).verdict.limit == limit
    assert build_report(pair_only, SETTINGS, {}).verdict.limit == limit
