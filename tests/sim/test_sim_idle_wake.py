"""An idle engine's wake-up (idle_wake_s, issue 25 item 2): a request that reaches an engine left without work
for IDLE_WAKE_AFTER_S (10 ms) or more starts that much later; one that arrives sooner, or while others run,
does not."""
from __future__ import annotations

import numpy as np
import pytest

from reader.sim.api import SchedulerSettings, simulate
from reader.sim.engine import IDLE_WAKE_AFTER_S
from reader.sim.workload import Workload

SETTINGS = SchedulerSettings(max_num_seqs=8, max_num_batched_tokens=512, num_gpu_blocks=4000, block_size=16,
                             vllm_version="0.32.0")


def step_time(batch):
    return 0.002


def run(arrivals: list[float], wake_s: float):
    n = len(arrivals)
    wl = Workload(arrival=np.array(arrivals), prompt_len=np.full(n, 32), output_len=np.full(n, 4),
                  prefix_group=np.full(n, -1), prefix_len=np.zeros(n, np.int64), priority=np.zeros(n, np.int64), max_concurrency=None,
                  description="test")
    return simulate(SETTINGS, wl, step_time, overhead_s=0.0, idle_wake_s=wake_s, keep_requests=True)


def test_a_request_after_a_long_idle_waits_the_wake_up_and_one_right_behind_does_not():
    # request 0 finishes at 8 ms (4 steps); request 1 comes 1 ms later, request 2 after 100 ms of idle
    arrivals = [0.0, 0.009, 0.2]
    plain, woken = run(arrivals, 0.0), run(arrivals, 0.0035)
    extra = np.array(woken.requests.first_token_s) - np.array(plain.requests.first_token_s)
    assert extra.tolist() == pytest.approx([0.0, 0.0, 0.0035])
    assert 0.009 - 0.008 < IDLE_WAKE_AFTER_S < 0.2 - 0.017


def test_a_negative_wake_up_is_bad_input():
    from reader.errors import ReaderError

    with pytest.raises(ReaderError):
        run([0.0], -0.001)
