"""observe as issue 27's user ran it: the vLLM 0.32.0 CPU server launched as fixtures/live/metrics/bench/serve.sh
says (`export VLLM_CPU_KVCACHE_SPACE=1`, served as `tiny`), loaded by `vllm bench serve`, watched live by
`observe URL --until-idle` with its scrapes saved. The pair of the saved first and last scrape must give the
live verdict, its ranges must hold the bench's own figures, and the script's prediction must hold the server's
KV tokens exactly. (What tools/record_observe_fixtures.py bench records, run fresh; about two minutes.)"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reader.observe.evidence import Settings
from reader.observe.report import build_report
from reader.observe.sources import Collected, from_files

from ._observe_cases import BENCH_BURSTS, BENCH_SERVER, SETTINGS
from ._server import ROOT, bench_serve, live_server

SCRIPT = ROOT / "fixtures" / "live" / "metrics" / "bench" / "serve.sh"
MODEL = str(ROOT / "fixtures" / "live" / "tiny-llama" / "config.json")
# A quarter of a second between scrapes: on an idle host the saturated burst is over in about 3 s, and at one
# scrape a second only two of them found requests queued (CI, 2026-12-03: 14 running with 54 waiting, then 16 with
# 16, then none), too few for a wait that lasts from one scrape to the next, so the verdict read "the GPU itself".
INTERVAL = "0.25"
LIMITS = ["--max-num-seqs", str(SETTINGS["max_num_seqs"]), "--max-num-batched-tokens",
          str(SETTINGS["max_num_batched_tokens"])]


@pytest.fixture(scope="module")
def server(vllm_032, tmp_path_factory):
    # the engine and the API server on CPUs of their own (_server.front_end_apart): sharing them, the busy engine
    # kept the API server from answering /metrics for the whole burst in CI (three busy scrapes in its first
    # 0.5 s, then none until it was over), and the live verdict could not see max_num_seqs full
    with live_server(vllm_032, BENCH_SERVER, tmp_path_factory.mktemp("bench-server") / "server.log",
                     front_apart=True) as running:
        yield running


def watched(vllm_032, server, burst: str, folder, bursts: dict = BENCH_BURSTS) -> tuple[dict, dict, str]:
    """observe's live JSON report, the bench's result and the saved scrapes' path, for one burst."""
    saved = folder / f"{burst}.prom.gz"
    watcher = subprocess.Popen([sys.executable, "-m", "reader", "observe", server.url, "--window", "300",
                                "--interval", INTERVAL, "--until-idle", "--format", "json", "--progress", "--save",
                                str(saved), *LIMITS], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        first = watcher.stderr.readline()
        assert first.startswith("observe: scraped "), first + watcher.stderr.read()
        result = bench_serve(vllm_032, server, [(folder / f"{burst}.json", bursts[burst])])[0]
        out, err = watcher.communicate(timeout=300)
    finally:
        if watcher.poll() is None:
            watcher.kill()
    assert watcher.returncode == 0, err
    return json.loads(out), result, str(saved)


def pair_of(path: str) -> Collected:
    every = from_files([path])
    return Collected([every.snapshots[0], every.snapshots[-1]], "pair", "scrapes")


@pytest.mark.parametrize("burst, limit", [("saturated", "admission"), ("idle", "load")])
def test_the_pair_gives_the_live_verdict_and_ranges_that_hold_the_benchs_figures(vllm_032, server, tmp_path,
                                                                                   burst, limit):
    live, measured, saved = watched(vllm_032, server, burst, tmp_path)
    assert live["verdict"]["limit"] == limit
    report = build_report(pair_of(saved), Settings(**SETTINGS), {})
    ev = report.evidence
    assert report.verdict.limit == limit
    print(f"\n{burst}: bench {measured['duration']:.2f} s, {measured['output_throughput']:.0f} tok/s; pair busy "
          f"{ev.duration_low_s or ev.duration_s:.2f}-{ev.duration_s:.2f} s")
    low = ev.duration_low_s if ev.duration_low_s is not None else ev.duration_s
    assert low <= measured["duration"] <= ev.duration_s
    assert ev.output_throughput <= measured["output_throughput"] <= ev.output_throughput * ev.duration_s / low
    assert ev.num_requests == measured["completed"] and ev.output_tokens_total == measured["total_output_tokens"]
    holds_the_clients_ttft(ev, measured)


def holds_the_clients_ttft(ev, measured: dict) -> None:
    """The bench's TTFT is a client's: at least the bound the report gives for it (the server's own bucket may
    lie below it: vLLM does not time connecting, parsing or streaming)."""
    for field, key in (("median_ttft_ms", "client.ttft_median"), ("p99_ttft_ms", "client.ttft_p99")):
        bound = ev.figure(key)
        assert bound is None or bound.low <= measured[field], (field, bound)


def test_the_cpu_script_predicts_the_servers_kv_tokens_exactly(vllm_032, server, tmp_path):
    _, _, saved = watched(vllm_032, server, "idle", tmp_path)
    result = subprocess.run([sys.executable, "-m", "reader", "diagnose", str(SCRIPT), "--model", MODEL, "--metrics",
                             saved, "--format", "json", "--no-whatifs"], cwd=ROOT, capture_output=True, text=True,
                            timeout=400)
    assert result.returncode == 0, result.stderr
    rows = {r["key"]: r for r in json.loads(result.stdout)["comparison"]["rows"]}
    for key in ("kv.tokens", "kv.blocks", "kv.block_size"):
        assert rows[key]["predicted"] == rows[key]["observed"], rows[key]
    assert rows["kv.tokens"]["observed"] == 1_048_576
