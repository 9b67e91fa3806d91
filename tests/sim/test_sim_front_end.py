"""The server's front end: each request waits its turn in the front end before the scheduler sees it
(front_end_s), while its latencies still count from when the client sent it; each streamed token costs it
front_end_token_s, so a server kept full streams no faster than its front end, and a request taken in while
tokens stream gets only the share of the front end the stream leaves (issue 25); more API servers
(--api-server-count) share both out."""
from __future__ import annotations

import numpy as np
import pytest

from reader.sim.api import SchedulerSettings, make_workload, simulate
from reader.sim.engine import BUSY_MAX, FrontEnd

SETTINGS = SchedulerSettings(max_num_seqs=16, max_num_batched_tokens=512, num_gpu_blocks=4000, block_size=16,
                             vllm_version="0.32.0")


def step_time(batch):
    return 0.003 + 2e-5 * batch.num_tokens


def run(workload: dict, front_end_s: float, leaps: bool = True, token_s: float = 0.0, servers: int = 1):
    return simulate(SETTINGS, make_workload(workload), step_time, front_end_s=front_end_s, keep_requests=True,
                    leaps=leaps, overhead_s=0.0, front_end_token_s=token_s, api_servers=servers)


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


FULL = {"num_requests": 64, "arrival": {"process": "burst", "concurrency": 16}, "prompt_len": 64, "output_len": 200}


def test_a_full_server_streams_no_faster_than_its_front_end():
    """16 decodes take the engine 3.3 ms a step; at 0.5 ms a token the front end needs 8 ms for their tokens."""
    engine_bound, front_end_bound = run(FULL, 0.0), run(FULL, 0.0, token_s=0.0005)
    assert engine_bound.tpot_ms.median == pytest.approx(3.3, rel=0.02)
    assert front_end_bound.tpot_ms.median == pytest.approx(8.0, rel=0.02)
    assert front_end_bound.output_throughput == pytest.approx(2000.0, rel=0.05)  # one token per 0.5 ms


def test_below_its_pace_the_front_end_costs_a_stream_nothing():
    lone = {"num_requests": 1, "prompt_len": 100, "output_len": 50}
    assert run(lone, 0.0, token_s=0.0005).model_dump() == run(lone, 0.0).model_dump()


def test_api_servers_share_the_front_ends_work():
    one, four = run(FULL, 0.0, token_s=0.0005), run(FULL, 0.0, token_s=0.0005, servers=4)
    assert four.tpot_ms.median == pytest.approx(3.3, rel=0.02)  # 2 ms of tokens a step: the engine sets the pace
    assert one.tpot_ms.median > 7.0
    burst = {"num_requests": 10, "prompt_len": 50, "output_len": 5}
    assert max(run(burst, 0.01, servers=2).requests.first_scheduled_s) < 0.06  # each request 5 ms, not 10


def test_a_request_taken_in_while_tokens_stream_gets_the_share_of_the_front_end_the_stream_leaves():
    front_end = FrontEnd(request_s=0.004, token_s=0.0001)
    front_end.streamed(16, 0.0032)  # 16 tokens in 3.2 ms: half the front end's time
    assert front_end.receive(1.0) == pytest.approx(1.0 + 0.004 / 0.5)
    front_end.streamed(16, 1.0)  # the same tokens after an idle second: next to nothing
    assert front_end.receive(2.0) == pytest.approx(2.0 + 0.004, rel=1e-3)
    front_end.streamed(1000, 1.0001)  # more than it could stream: it paces the steps instead of taking all
    assert front_end.busy == BUSY_MAX


def test_in_a_full_closed_loop_new_requests_wait_longer_for_the_front_end_when_tokens_cost_it():
    def intake(token_s):
        result = run(FULL, 0.004, token_s=token_s)
        waited = np.array(result.requests.first_scheduled_s) - np.array(result.requests.send_time_s)
        return waited[16:].mean()  # the requests sent as others finish, into a stream of 15 decodes

    assert intake(0.0001) > 1.3 * intake(0.0)


def test_leaps_and_single_steps_agree_with_a_cost_per_streamed_token():
    a, b = run(FULL, 0.004, token_s=0.0003, leaps=True), run(FULL, 0.004, token_s=0.0003, leaps=False)
    assert a.model_dump() == b.model_dump()


@pytest.mark.parametrize("kwargs", [{"front_end_s": -1.0}, {"token_s": -1e-4}, {"servers": 0}])
def test_negative_front_end_times_and_no_api_server_are_bad_input(kwargs):
    from reader.errors import ReaderError

    with pytest.raises(ReaderError):
        run({"num_requests": 1, "prompt_len": 10, "output_len": 2}, **{"front_end_s": 0.0, **kwargs})


def responses(workload: dict, fixed_s: float, per_request_s: float):
    return simulate(SETTINGS, make_workload(workload), step_time, keep_requests=True, overhead_s=0.0,
                    response_latency_s=fixed_s, response_latency_per_request_s=per_request_s)


def test_a_first_token_waits_behind_the_streams_of_the_requests_in_flight():
    """The response path's delay per request in flight: a lone request pays it once, each of eight sent together
    eight times; it moves every token of a request alike, so TPOT does not change."""
    lone = {"num_requests": 1, "prompt_len": 100, "output_len": 10}
    assert responses(lone, 0.01, 0.002).ttft_ms.mean == pytest.approx(responses(lone, 0.0, 0.0).ttft_ms.mean + 12.0)
    burst = {"num_requests": 8, "prompt_len": 50, "output_len": 20}
    base, delayed = responses(burst, 0.0, 0.0), responses(burst, 0.01, 0.002)
    assert np.array(delayed.requests.first_token_s) - np.array(base.requests.first_token_s) == pytest.approx(
        [0.01 + 8 * 0.002] * 8)
    assert delayed.tpot_ms.mean == pytest.approx(base.tpot_ms.mean)


def test_a_negative_response_delay_per_request_is_bad_input():
    from reader.errors import ReaderError

    with pytest.raises(ReaderError, match="response latency"):
        responses({"num_requests": 1, "prompt_len": 10, "output_len": 2}, 0.0, -1e-3)
