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


# Each bench recording's folder and bursts (fixtures/live/metrics/README.md): the saturated and idle bursts, and
# the saturated burst against 24 KV blocks.
BENCH_RECORDINGS = [("bench", "saturated"), ("bench", "idle"), ("bench-kv", "kv")]


def every_scrape(burst: str, case: str = "bench") -> Collected:
    return from_files([str(RECORDED / case / f"{burst}.prom.gz")])


def pair(burst: str, case: str = "bench") -> Collected:
    """The first and the last scrape of the burst's recording: idle before it, idle after."""
    every = every_scrape(burst, case)
    return Collected([every.snapshots[0], every.snapshots[-1]], f"{burst} pair", "scrapes")


def bench(burst: str, case: str = "bench") -> dict:
    return json.loads((RECORDED / case / f"{burst}.bench.json").read_text())


@pytest.mark.parametrize("case, burst, limit", [("bench", "saturated", "admission"), ("bench", "idle", "load"),
                                               ("bench-kv", "kv", "kv_memory")])
def test_a_pair_of_scrapes_gives_the_verdict_of_every_scrape(case, burst, limit):
    assert build_report(every_scrape(burst, case), SETTINGS, {}).verdict.limit == limit
    assert build_report(pair(burst, case), SETTINGS, {}).verdict.limit == limit


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


# What each figure of the bench's summary is, in the report of the pair around its burst: a range the report
# gives for it (the client's own view), or a figure the report calls server-side, with its reason printed.
CLIENT_RANGES = {"median_ttft_ms": "client.ttft_median", "p99_ttft_ms": "client.ttft_p99",
                 "request_throughput": "throughput.requests", "output_throughput": "throughput.output"}
SERVER_SIDE_ONLY = {"median_itl_ms": "latency.itl_median", "p99_itl_ms": "latency.itl_p99"}


@pytest.mark.parametrize("case, burst", BENCH_RECORDINGS)
def test_every_figure_of_the_bench_lies_in_the_reports_range_or_is_called_server_side(case, burst):
    from reader.evidence.compare import figures
    from reader.render.observe_view import render_observation

    r = build_report(pair(burst, case), SETTINGS, {})
    measured, shown = bench(burst, case), {f.key: f for f in figures(r.evidence)}
    for field, key in CLIENT_RANGES.items():
        assert shown[key].low <= measured[field] <= shown[key].high, (field, shown[key])
    assert r.evidence.duration_low_s <= measured["duration"] <= r.evidence.duration_s
    assert r.evidence.num_requests == measured["completed"]
    assert r.evidence.prompt_tokens_total == measured["total_input_tokens"]
    assert r.evidence.output_tokens_total == measured["total_output_tokens"]
    for field, key in SERVER_SIDE_ONLY.items():
        inside = shown[key].low <= measured[field] <= shown[key].high
        assert inside or shown[key].label.endswith("server-side"), (field, shown[key])
    text = render_observation(r)
    assert "TPOT" not in text.split("Notes:")[0]       # the server's TPOT is not shown as if it were the client's
    assert "its ITL and TPOT percentiles are unknown here" in text


@pytest.mark.parametrize("case, burst", [("bench", "saturated"), ("bench-kv", "kv")])
def test_the_servers_ttft_bucket_alone_misses_the_benchs_median_which_is_why_the_client_row_exists(case, burst):
    """On the saturated bursts (two shared CPUs) the bench's TTFT median is above the server's own bucket (2.70 s
    against 1.0-2.5 s; 5.15 s against 2.5-5.0 s with 24 blocks): connecting, parsing and streaming are on the
    client's clock, not on vLLM's."""
    ev = build_report(pair(burst, case), SETTINGS, {}).evidence
    low, high = ev.bucket_ranges["ttft.median"]
    assert high < bench(burst, case)["median_ttft_ms"]
    assert ev.figure("client.ttft_median").low == low


def test_a_clients_itl_can_lie_on_either_side_of_the_servers_which_is_why_it_is_unknown():
    """The stream bunches chunks and holds them back: with 24 blocks the bench's ITL median is 0.005 ms (chunks
    read together) and its P99 136 ms, above the server's 25-50 ms bucket."""
    ev = build_report(pair("kv", "bench-kv"), SETTINGS, {}).evidence
    measured = bench("kv", "bench-kv")
    assert measured["median_itl_ms"] < 0.1 * ev.itl_ms.mean
    assert measured["p99_itl_ms"] > ev.bucket_ranges["itl.p99"][1]


def test_a_clients_percentile_is_never_below_the_bound_given_for_it():
    """Whatever each request's untimed path (added to the server's time), a client's percentile, interpolated as
    numpy does, stays at or above the bound: also at P99 of 96, where the bucket of rank 0.99 * 96 would not."""
    import math

    import numpy as np

    from reader.observe.client_view import client_figures
    from reader.observe.histogram import Histogram

    rng = np.random.default_rng(0)
    bounds = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, math.inf)
    one_slow = np.array([0.2] * 95 + [3.0])   # P99 of 96 interpolates 5% of the way to the slowest: 0.34 s
    for n in [96] + [int(x) for x in rng.integers(2, 200, size=300)]:
        server = one_slow if n == 96 and one_slow is not None else (
            rng.choice([0.05, 0.2, 0.4, 0.9, 2.0, 4.0, 7.0], size=n) * rng.uniform(0.9, 1.0, size=n))
        one_slow = None
        client = server + rng.exponential(0.05, size=n) * rng.integers(0, 2, size=n)
        h = Histogram(bounds=bounds, counts=tuple(float((server <= b).sum()) for b in bounds),
                      total=float(server.sum()), count=float(n))
        shown = {f.key: f.low for f in client_figures({"ttft": h})}
        for key, q in (("client.ttft_median", 50), ("client.ttft_p99", 99)):
            assert shown.get(key, 0.0) <= 1000.0 * np.percentile(client, q) + 1e-9, (n, key)
