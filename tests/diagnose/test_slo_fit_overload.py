"""Overload is judged on the arrivals a run was given, not the rate asked for: a short Poisson draw strays from
its nominal rate, and a run that merely kept up with a fast draw is not overloaded."""
from __future__ import annotations

import numpy as np

from reader.diagnose.metrics import Metrics
from reader.diagnose.slo_fit import OVERLOADED, overload
from reader.evidence.verdict import Verdict, note_overload
from reader.sim.workload import Workload


def metrics(completed_rps: float, offered_rps=None) -> Metrics:
    return Metrics(output_throughput=1.0, total_token_throughput=1.0, request_throughput=completed_rps,
                   ttft_mean_ms=None, ttft_p99_ms=None, itl_median_ms=None, itl_p99_ms=None, tpot_mean_ms=None,
                   e2el_p99_ms=None, preemptions=0, completed=100, offered_rps=offered_rps)


class Queue:
    waiting_peak = 50   # half the requests waited at once


def workload(arrival, max_concurrency=None) -> Workload:
    n = len(arrival)
    zeros = np.zeros(n, dtype=np.int64)
    return Workload(np.asarray(arrival, dtype=float), zeros + 10, zeros + 10, zeros - 1, zeros, zeros,
                    max_concurrency)


def test_the_rate_a_run_was_drawn_at_is_its_arrivals_over_their_span():
    assert workload([0.0, 1.0, 2.0, 4.0]).offered_rate == 0.75
    assert workload([0.0, 0.0, 0.0]).offered_rate is None                 # a burst offers no rate
    assert workload([0.0, 1.0, 2.0], max_concurrency=4).offered_rate is None   # nor does a closed loop


def test_a_draw_faster_than_asked_that_was_kept_up_with_is_not_overload():
    # asked 10 req/s, drawn at 8.5, completed 8.4: the nominal rate would read 1.19x and call it overloaded
    assert 10.0 / 8.4 >= OVERLOADED
    assert overload(10.0, metrics(8.4, offered_rps=8.5), Queue()) is None


def test_a_draw_that_outran_completions_is_overload_by_its_own_rate():
    assert overload(10.0, metrics(8.0, offered_rps=11.0), Queue()) == 11.0 / 8.0


def test_without_a_drawn_rate_the_asked_load_is_compared():
    assert overload(10.0, metrics(8.0), Queue()) == 10.0 / 8.0


def test_the_verdict_names_overload_only_for_an_open_loop_rate():
    for offered in (None, 2.0):
        verdict = Verdict(limit="load", default="none", headline="h", signals=[])
        note_overload(verdict, 1.0, offered)
        assert (verdict.overload == 2.0) == (offered == 2.0)
