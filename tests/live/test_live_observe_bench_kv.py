"""observe on the server of issue 27 with its KV cache cut to 24 blocks, under the same saturated `vllm bench serve`
burst: the live verdict is the KV cache's, the saved pair gives it too, and the pair's ranges hold the bench's
figures (what tools/record_observe_fixtures.py bench-kv records, run fresh; about three minutes). Its own module,
so that its server starts after the bench module's has stopped: one vLLM server at a time."""
from __future__ import annotations

import pytest

from reader.observe.evidence import Settings
from reader.observe.report import build_report

from ._observe_cases import BENCH_KV_BURSTS, BENCH_KV_SERVER, SETTINGS
from ._server import live_server
from .test_live_observe_bench import holds_the_clients_ttft, pair_of, watched


@pytest.fixture(scope="module")
def kv_server(vllm_032, tmp_path_factory):
    with live_server(vllm_032, BENCH_KV_SERVER, tmp_path_factory.mktemp("bench-kv-server") / "server.log") as running:
        yield running


def test_the_kv_bound_pair_gives_the_live_verdict_and_holds_the_benchs_figures(vllm_032, kv_server, tmp_path):
    live, measured, saved = watched(vllm_032, kv_server, "kv", tmp_path, BENCH_KV_BURSTS)
    assert live["verdict"]["limit"] == "kv_memory"
    report = build_report(pair_of(saved), Settings(**SETTINGS), {})
    ev = report.evidence
    assert report.verdict.limit == "kv_memory"
    low = ev.duration_low_s if ev.duration_low_s is not None else ev.duration_s
    assert low <= measured["duration"] <= ev.duration_s
    assert ev.num_requests == measured["completed"] and ev.preemptions > 0
    holds_the_clients_ttft(ev, measured)
