"""The load a server's metrics show, as requests to simulate: lengths from histograms, arrivals from snapshots."""
from __future__ import annotations

import math

import numpy as np
import pytest

from reader.errors import ReaderError
from reader.observe.evidence import HistogramData, Interval, ObservedLoad
from reader.observe.histogram import Histogram
from reader.observe.load import workload


def uniform_histogram(values: np.ndarray, bounds=(10, 20, 50, 100, 200, 500, 1000, 2000)) -> Histogram:
    return Histogram(bounds=tuple(float(b) for b in bounds) + (math.inf,),
                     counts=tuple(float((values <= b).sum()) for b in bounds) + (float(values.size),),
                     total=float(values.sum()), count=float(values.size))


def test_quantiles_interpolate_inside_buckets_as_prometheus_does():
    h = Histogram(bounds=(1.0, 2.0, 4.0, math.inf), counts=(0.0, 50.0, 100.0, 100.0), total=250.0, count=100.0)
    assert h.quantile(0.5) == 2.0
    assert h.quantile(0.75) == 3.0
    assert h.mean == 2.5
    tail = Histogram(bounds=(1.0, math.inf), counts=(10.0, 20.0), total=0, count=20.0)
    assert tail.quantile(0.99) == 1.0       # the +Inf bucket answers with the last finite bound


def test_spread_values_fill_the_buckets_as_counted_and_keep_the_exact_mean():
    truth = np.random.default_rng(3).integers(100, 701, size=80)
    h = uniform_histogram(truth)
    values = h.spread(80)
    assert values.mean() == pytest.approx(truth.mean())
    rebuilt = uniform_histogram(np.rint(values))
    assert rebuilt.counts[:-1] == pytest.approx(h.counts[:-1], abs=1)
    # the top bucket (500, 1000] holds values of 500-700: they stay near its bottom, as the exact sum says
    assert values.max() < 760


def test_a_burst_that_queued_arrives_at_once_and_paced_requests_spread_over_their_intervals():
    lengths = HistogramData(bounds=[100, 200, 500], counts=[0, 40, 80], total=80 * 250, count=80)
    burst = ObservedLoad(num_requests=80, span_s=9.0, prompt_len=lengths, output_len=lengths,
                         intervals=[Interval(start=0, end=1, arrived=80, steps=100, waiting_at_end=70),
                                    Interval(start=1, end=2, arrived=0, steps=200)])
    spec, wl = workload(burst)
    assert wl.num_requests == 80 and not wl.arrival.any()
    assert spec.arrival.process == "burst"
    assert "all at once" in wl.description
    paced = burst.model_copy(update={"intervals": [Interval(start=t, end=t + 10, arrived=40, steps=300)
                                                   for t in (0, 10)]})
    _, wl = workload(paced)
    assert wl.arrival.min() == 0 and 9 < np.median(wl.arrival) < 11 and wl.arrival.max() < 20


def test_a_burst_served_before_the_next_snapshot_is_told_by_how_long_its_requests_waited():
    """A slow scrape (3.5 s) over a whole burst: at its end the queue is nearly empty, but the 60 requests it
    scheduled waited 1.5 s on average, which a stream spread over the interval and kept up with cannot do.
    The burst is placed where the server's 800 steps of 4 ms began, not spread over the 3.5 s."""
    lengths = HistogramData(bounds=[100, 200, 500], counts=[0, 40, 80], total=80 * 250, count=80)
    served = Interval(start=0.0, end=3.5, arrived=80, steps=800, waiting_at_end=5, queue_mean_s=1.5)
    load = ObservedLoad(num_requests=80, span_s=3.5, prompt_len=lengths, output_len=lengths, intervals=[served],
                        step_ms=4.0)
    _, wl = workload(load)
    assert not wl.arrival.any() and "all at once" in wl.description
    kept_up = served.model_copy(update={"queue_mean_s": 0.05})
    _, wl = workload(load.model_copy(update={"intervals": [kept_up]}))
    assert 1.5 < np.median(wl.arrival) < 2.0 and wl.arrival.max() > 3.0  # spread evenly over the interval



def test_the_start_of_a_burst_caught_late_in_an_idle_interval_is_placed_in_its_busy_tail():
    """A CI run (2026-12-02): a burst of 80 began 0.2 s before a snapshot. The interval before it, idle until
    then, counted 10 arrivals, all still in the server at its end, and 55 steps of 3.2 ms; the next counted
    the other 70. Spread over the whole 1.2 s, the 10 ran as a trickle (the simulation took 5% more steps
    than the server); they came in the last 0.18 s, with the rest of the burst right behind them."""
    lengths = HistogramData(bounds=[100, 200, 500], counts=[0, 40, 80], total=80 * 250, count=80)
    tail = Interval(start=0.0, end=1.22, arrived=10, steps=55, waiting_at_end=2, in_server_at_start=0,
                    in_server_at_end=10, queue_mean_s=0.017)
    rest = Interval(start=1.22, end=2.23, arrived=70, steps=348, waiting_at_end=47, in_server_at_start=10,
                    in_server_at_end=57, queue_mean_s=0.3)
    load = ObservedLoad(num_requests=80, span_s=2.23, prompt_len=lengths, output_len=lengths,
                        intervals=[tail, rest], step_ms=3.2)
    _, wl = workload(load)
    first = np.sort(wl.arrival)[:10]
    assert first.max() - first.min() < 0.2  # within the tail's 55 x 3.2 ms, not over the 1.22 s
    stream = tail.model_copy(update={"in_server_at_end": 1})  # most had left: a light stream spread over it
    _, wl = workload(load.model_copy(update={"intervals": [stream, rest]}))
    first = np.sort(wl.arrival)[:10]
    assert first.max() - first.min() > 1.0

def test_pairing_and_order_are_drawn_by_seed():
    lengths = HistogramData(bounds=[10, 100, 1000], counts=[5, 30, 60], total=60 * 200, count=60)
    load = ObservedLoad(num_requests=60, span_s=5, prompt_len=lengths, output_len=lengths)
    a, b, c = (workload(load, seed=s)[1] for s in (0, 0, 1))
    assert (a.prompt_len == b.prompt_len).all() and (a.output_len == b.output_len).all()
    assert not (a.prompt_len == c.prompt_len).all()
    assert sorted(a.prompt_len) == sorted(c.prompt_len)


def test_lengths_are_capped_by_max_model_len():
    lengths = HistogramData(bounds=[1000, 2000], counts=[0, 10], total=10 * 1900, count=10)
    _, wl = workload(ObservedLoad(num_requests=10, span_s=1, prompt_len=lengths, output_len=lengths),
                     max_model_len=2048)
    assert (wl.prompt_len < 2048).all() and (wl.prompt_len + wl.output_len <= 2048).all()


def test_no_finished_request_is_no_load_to_simulate():
    with pytest.raises(ReaderError, match="no request finished"):
        workload(ObservedLoad(num_requests=0, span_s=10))
