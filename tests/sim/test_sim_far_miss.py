"""Stopping a run whose answer is known (stop_beyond_ms): once more TTFT or ITL samples are above a limit than a
P99 over every sample the run could have can hide, the run ends and says why; a run that never gets there is
the same as without the watch."""
from __future__ import annotations

import numpy as np
import pytest

from reader.sim.api import SchedulerSettings, make_workload, simulate
from reader.sim.far_miss import samples_needed

SETTINGS = SchedulerSettings(max_num_seqs=8, max_num_batched_tokens=512, num_gpu_blocks=4000, block_size=16,
                             vllm_version="0.32.0")
OVERLOADED = {"num_requests": 300, "seed": 4, "arrival": {"process": "poisson", "rate": 40.0},
              "prompt_len": {"dist": "lognormal", "median": 400.0, "sigma": 0.5, "min": 32, "max": 2000},
              "output_len": {"dist": "lognormal", "median": 60.0, "sigma": 0.5, "min": 4, "max": 300}}


def step_time(batch):
    return 0.004 + 3e-5 * batch.num_tokens


def run(workload, **options):
    return simulate(SETTINGS, make_workload(workload), step_time, overhead_s=0.0, **options)


@pytest.mark.parametrize("most", [1, 2, 99, 100, 101, 1000, 4321])
def test_that_many_samples_above_a_limit_put_the_p99_above_it_whatever_the_rest(most):
    rng = np.random.default_rng(most)
    needed = samples_needed(most)
    for n in {1, most // 2 + 1, most}:  # the run may end with fewer samples than it could have had
        if needed > n:
            continue
        low = rng.uniform(0.0, 1.0, n - needed)  # everything else as far below the limit as it can be
        samples = np.concatenate([low, np.full(needed, 1.0 + 1e-9)])
        assert np.percentile(samples, 99) > 1.0


@pytest.mark.parametrize("most", [100, 1000, 4321])
def test_one_sample_fewer_can_leave_the_p99_at_or_below_the_limit(most):
    needed = samples_needed(most)
    samples = np.concatenate([np.zeros(most - needed + 1), np.full(needed - 1, 1.0 + 1e-9)])
    assert np.percentile(samples, 99) <= 1.0


def test_an_overloaded_run_stops_once_its_ttft_p99_is_certainly_over_the_limit():
    full = run(OVERLOADED)
    limit = full.ttft_ms.p99 / 4
    stopped = run(OVERLOADED, stop_beyond_ms={"ttft": limit})
    assert full.stopped is None
    assert stopped.stopped is not None and "TTFT P99 is certainly above" in stopped.stopped
    assert stopped.num_steps < full.num_steps / 2  # the point of it


def test_an_itl_limit_stops_a_run_too():
    full = run(OVERLOADED)
    stopped = run(OVERLOADED, stop_beyond_ms={"itl": full.itl_ms.p99 / 3})
    assert stopped.stopped is not None and "ITL P99 is certainly above" in stopped.stopped


def test_a_run_whose_p99s_stay_under_the_limits_is_the_run_without_them():
    full = run(OVERLOADED)
    watched = run(OVERLOADED, stop_beyond_ms={"ttft": full.ttft_ms.p99 * 1.01, "itl": full.itl_ms.p99 * 1.01})
    assert watched.stopped is None
    assert watched.model_dump() == full.model_dump()


def test_a_limit_just_under_the_p99_may_stop_the_run_but_never_one_just_over_it():
    full = run(OVERLOADED)
    for fraction in (0.97, 0.99, 0.999):
        result = run(OVERLOADED, stop_beyond_ms={"ttft": full.ttft_ms.p99 * fraction})
        assert result.stopped is None or full.ttft_ms.p99 > full.ttft_ms.p99 * fraction
    assert run(OVERLOADED, stop_beyond_ms={"ttft": full.ttft_ms.p99 * 1.0001}).stopped is None
