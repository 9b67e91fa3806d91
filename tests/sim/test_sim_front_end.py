"""The server's front end (front_end_s): each request waits its turn in the front end before the scheduler sees
it, while its latencies still count from when the client sent it."""
from __future__ import annotations

import numpy as np
import pytest

from reader.sim.api import SchedulerSettings, make_workload, simulate

SETTINGS = SchedulerSettings(max_num_seqs=16, max_num_batched_tokens=512, num_gpu_blocks=4000, block_size=16,
                             vllm_version="0.32.0")


def step_time(batch):
    return 0.003 + 2e-5 * batch.num_tokens


def run(workload: dict, front_end_s: float, leaps: bool = True):
    return simulate(SETTINGS, make_workload(workload), step_time, front_end_s=front_end_s, keep_requests=True,
                    leaps=leaps, overhead_s=0.0)


def test_a_lone_request_waits_the_front_end_once():
    lone = {"num_requests": 1, "prompt_len": 100, "output_len": 10}
    base, delayed = run(lone, 0.0), run(lone, 0.02)
    assert delayed.ttft_ms.mean == pytest.approx(base.ttft_ms.mean + 20.0)
    assert delayed.tpot_ms.mean == pytest.approx(base.tpot_ms.mean)
    assert delayed.requests.send_time_s == base.requests.send_time_s == [0.0]


def test_a_burst_queues_in_the_front_end_one_request_at_a_time():
    burst = {"num_requests": 10, "prompt_len": 50, "output_len": 5}
    result = run(burst, 0.01)
    scheduled = np.array(result.requests.first_scheduled_s)
    assert scheduled.min() >= 0.01 and scheduled.max() >= 0.1 - 1e-9  # the tenth waits for nine before it
    assert result.requests.send_time_s == [0.0] * 10


@pytest.mark.parametrize("workload", [
    {"num_requests": 120, "seed": 3, "arrival": {"process": "poisson", "rate": 20.0},
     "prompt_len": {"dist": "uniform", "low": 20, "high": 600}, "output_len": {"dist": "uniform", "low": 2, "high": 80}},
    {"num_requests": 60, "arrival": {"process": "burst", "concurrency": 6}, "prompt_len": 300, "output_len": 40},
])
def test_leaps_and_single_steps_agree_with_a_front_end(workload):
    a, b = run(workload, 0.004, leaps=True), run(workload, 0.004, leaps=False)
    assert a.model_dump() == b.model_dump()


def test_a_negative_front_end_time_is_bad_input():
    from reader.errors import ReaderError

    with pytest.raises(ReaderError):
        run({"num_requests": 1, "prompt_len": 10, "output_len": 2}, -1.0)
