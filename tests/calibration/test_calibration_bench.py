"""Reading `vllm bench serve --save-result` files, and the workload a result is replayed with."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from reader.fitting.bench import read_bench, sim_metric, workload
from reader.errors import ReaderError

from ._synthetic import write


def test_a_detailed_open_loop_result_replays_its_own_send_times(tmp_path):
    path = write(tmp_path / "r.json", prompt=200, output=20, n=30, rate=5.0)
    result = read_bench(path)
    assert result.detailed and result.completed == 30 and result.request_rate == 5.0
    wl = workload(result)
    sent = np.array(json.loads(path.read_text())["start_times"])
    assert np.allclose(wl.arrival, np.sort(sent) - sent.min())
    assert wl.max_concurrency is None and set(wl.prompt_len) == {200}


def test_a_capped_result_replays_the_cap_not_the_send_times(tmp_path):
    result = read_bench(write(tmp_path / "c.json", prompt=100, output=10, n=12, concurrency=3))
    wl = workload(result)
    assert wl.max_concurrency == 3 and not wl.arrival.any()  # inf rate: every request ready at once


def test_a_summary_only_result_uses_the_mean_lengths_or_the_recorded_dataset_arguments(tmp_path):
    path = write(tmp_path / "s.json", prompt=300, output=40, n=20, rate=4.0, detailed=False)
    wl = workload(read_bench(path))
    assert set(wl.prompt_len) == {300} and set(wl.output_len) == {40} and wl.arrival[0] == 0.0
    data = json.loads(path.read_text())
    data.update(random_input_len="300", random_output_len="40", random_range_ratio="0.5")
    path.write_text(json.dumps(data))
    wl = workload(read_bench(path))
    assert wl.prompt_len.min() >= 150 and wl.prompt_len.max() <= 450 and len(set(wl.prompt_len)) > 5


def test_metrics_compare_like_for_like(tmp_path):
    result = read_bench(write(tmp_path / "m.json", prompt=100, output=10, n=8, rate=2.0))
    assert {"output_throughput", "median_tpot_ms", "p99_ttft_ms", "mean_itl_ms"} <= set(result.metrics)

    class Stats:
        mean, median, p90, p99 = 1.0, 2.0, 3.0, 4.0

    class Sim:
        output_throughput = 10.0
        ttft_ms = tpot_ms = itl_ms = e2el_ms = Stats()

    assert sim_metric(Sim(), "p99_ttft_ms") == 4.0 and sim_metric(Sim(), "output_throughput") == 10.0


@pytest.mark.parametrize("content, words", [
    ("not json", "not valid JSON"),
    ("[1, 2]", "it has no 'completed'"),
    (json.dumps({"completed": 3}), "it has no 'duration'"),
])
def test_a_file_that_is_not_a_bench_result_is_refused(tmp_path, content, words):
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(ReaderError) as err:
        read_bench(path)
    assert words in err.value.render() and str(path) in err.value.render()


def _damaged(tmp_path, **change):
    path = write(tmp_path / "d.json", prompt=100, output=10, n=4, rate=2.0)
    data = json.loads(path.read_text())
    data.update(change)
    path.write_text(json.dumps(data))
    with pytest.raises(ReaderError) as err:
        read_bench(path)
    return err.value


@pytest.mark.parametrize("change, words", [
    ({"completed": 0}, "completed no request"),
    ({"ramp_up_strategy": "linear"}, "ramp-up"),
    ({"request_rate": -1}, "must be positive"),
    ({"max_concurrency": "many"}, "must be a number"),
])
def test_a_result_that_cannot_be_replayed_is_refused(tmp_path, change, words):
    assert words in _damaged(tmp_path, **change).render()


def test_failed_requests_are_left_out_of_the_replay(tmp_path):
    path = write(tmp_path / "f.json", prompt=100, output=10, n=6, rate=2.0)
    data = json.loads(path.read_text())
    data["errors"][2] = "timeout"
    path.write_text(json.dumps(data))
    assert workload(read_bench(path)).num_requests == 5
    assert math.isinf(read_bench(write(tmp_path / "i.json", prompt=10, output=5, n=2)).request_rate)


@pytest.mark.parametrize("change, key, words", [
    ({"latencies": ["0.5", "0.6", "0.7", "0.8"]}, "latencies", "must hold numbers (seconds), not '0.5'"),
    ({"ttfts": [0.1, 0.2]}, "ttfts", "has 2 entries and 'output_lens' 4"),
    ({"itls": [0.01, 0.01, 0.01, 0.01]}, "itls", "one list of inter-token latencies"),
    ({"itls": [[0.01], [True], [0.01], [0.01]]}, "itls", "not True"),
    ({"latencies": None}, "latencies", "must be a list"),
    ({"output_lens": "12"}, "output_lens", "must be a list with one entry per request"),
])
def test_damaged_per_request_latencies_are_refused_naming_their_key(tmp_path, change, key, words):
    # before, such a file was fitted on its throughput alone, without a word about its latencies
    err = _damaged(tmp_path, **change)
    assert err.key == key and words in err.render()


@pytest.mark.parametrize("bad", ["soon", True])
def test_a_bad_send_time_is_named_as_a_send_time(tmp_path, bad):
    err = _damaged(tmp_path, start_times=[0.0, bad, 1.0, 2.0])
    assert err.key == "start_times" and "request 1's entry in 'start_times'" in err.render()


def test_a_per_request_list_given_as_something_else_is_named(tmp_path):
    err = _damaged(tmp_path, input_lens="256")
    assert err.key == "input_lens" and "must be a list" in err.render()


def test_failed_requests_may_leave_their_latencies_unset(tmp_path):
    path = write(tmp_path / "u.json", prompt=100, output=10, n=6, rate=2.0)
    data = json.loads(path.read_text())
    data["errors"][1], data["ttfts"][1], data["latencies"][1] = "timeout", None, None
    path.write_text(json.dumps(data))
    assert read_bench(path).completed == 6
