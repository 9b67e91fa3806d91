"""Traffic: each replica's share of the load, and what --target-rate does to each kind of workload."""
from __future__ import annotations

import numpy as np
import pytest

from reader.errors import ReaderError
from reader.sim.traffic import Traffic
from reader.sim.workload import generate, load_workload


def spec(**arrival):
    return load_workload({"num_requests": 100, "prompt_len": 100, "output_len": 20, "arrival": arrival})


def test_a_poisson_stream_is_split_by_rate_and_keeps_its_request_count():
    t = Traffic(spec(process="poisson", rate=9.0))
    assert (t.kind, t.total, t.unit) == ("rate", 9.0, "req/s")
    assert t.per_replica(3) == pytest.approx(3.0)
    assert t.per_replica(3, headroom=0.2) == pytest.approx(3.6)
    share = t.share(3, 3.6)
    assert share.arrival.rate == pytest.approx(3.6) and share.arrival.process == "poisson"
    assert share.num_requests == 100


def test_a_client_side_concurrency_cap_is_split_with_the_rate():
    t = Traffic(spec(process="gamma", rate=8.0, burstiness=0.5, concurrency=64))
    share = t.share(4, 2.0)
    assert share.arrival.concurrency == 16 and share.arrival.burstiness == 0.5


def test_clients_and_batches_split_into_whole_numbers_rounded_up():
    clients = Traffic(spec(process="closed", concurrency=128))
    assert (clients.kind, clients.unit) == ("clients", "clients")
    assert clients.per_replica(3, headroom=0.2) == 52.0  # 128 x 1.2 / 3 = 51.2
    assert clients.share(3, 52.0).arrival.concurrency == 52
    batch = Traffic(spec(process="burst"))
    assert batch.kind == "batch" and batch.per_replica(3) == 34.0
    assert batch.share(3, 34.0).num_requests == 34


def test_a_target_rate_replaces_a_closed_loop_with_poisson_arrivals_and_says_so():
    t = Traffic(spec(process="closed", concurrency=32), target_rate=6.0)
    assert (t.kind, t.total) == ("rate", 6.0)
    assert t.spec.arrival.process == "poisson" and t.spec.arrival.concurrency is None
    assert any("--target-rate 6" in n for n in t.notes)


def test_a_batch_capped_by_concurrency_cannot_be_split():
    with pytest.raises(ReaderError) as err:
        Traffic(spec(process="burst", concurrency=8))
    assert err.value.key == "--workload"


def trace(tmp_path, times):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(f'{{"arrival_time": {t}, "prompt_len": {100 + i}, "output_len": 10}}\n'
                            for i, t in enumerate(times)))
    return load_workload(str(path))


def test_a_trace_is_split_round_robin_and_its_times_scaled_to_the_share(tmp_path):
    t = Traffic(trace(tmp_path, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]))
    assert (t.kind, t.total) == ("trace", 1.0)
    share = t.share(2, 0.5)  # every other request, at its own rate
    assert share.prompt_len.tolist() == [100, 102, 104]
    assert share.arrival.tolist() == [0.0, 2.0, 4.0]
    faster = t.share(2, 1.0)  # the same requests, twice as fast
    assert np.allclose(faster.arrival, [0.0, 1.0, 2.0])


def test_a_trace_is_rescaled_to_a_target_rate(tmp_path):
    t = Traffic(trace(tmp_path, [0.0, 1.0, 2.0, 3.0]), target_rate=4.0)
    assert t.total == 4.0 and np.allclose(t.trace.arrival, [0.0, 0.25, 0.5, 0.75])
    assert any("scaled" in n for n in t.notes)


def test_a_trace_without_times_needs_a_target_rate(tmp_path):
    with pytest.raises(ReaderError):
        Traffic(trace(tmp_path, [0.0, 0.0, 0.0]))
    t = Traffic(trace(tmp_path, [0.0, 0.0, 0.0]), target_rate=2.0)
    assert np.allclose(t.trace.arrival, [0.0, 0.5, 1.0])


def test_generated_shares_are_deterministic():
    t = Traffic(spec(process="poisson", rate=5.0))
    a, b = generate(t.share(2, 2.5)), generate(t.share(2, 2.5))
    assert np.array_equal(a.arrival, b.arrival) and np.array_equal(a.prompt_len, b.prompt_len)
