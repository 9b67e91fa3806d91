"""observe on scrapes recorded from the real vLLM 0.32.0 CPU server (fixtures/live/metrics, made by
tools/record_observe_fixtures.py): it reports the server's own counts exactly and names what limited it."""
from __future__ import annotations

import gzip
import json
import re

import pytest

from reader.observe.evidence import Settings
from reader.observe.prometheus import snapshots
from reader.observe.report import build_report
from reader.observe.sources import Collected, from_files

from ._pages import RECORDED, first_page, last_page, raw_counter

SETTINGS = Settings(max_num_seqs=16, max_num_batched_tokens=512)


def report(case: str):
    return build_report(from_files([str(RECORDED / case / "scrapes.prom.gz")]), SETTINGS, {})


def own_counts(case: str) -> dict[str, float]:
    """What the server's own counters say over the recording, read from the raw text."""
    path = RECORDED / case / "scrapes.prom.gz"
    first, last = first_page(path), last_page(path)
    blocks = re.search(r'vllm:cache_config_info\{[^}]*num_gpu_blocks="(\d+)"', last).group(1)
    return {name: raw_counter(last, series) - raw_counter(first, series)
            for name, series in (("preemptions", "vllm:num_preemptions_total"),
                                 ("steps", "vllm:iteration_tokens_total_count"),
                                 ("finished", "vllm:request_success_total"))} | {"blocks": int(blocks)}


@pytest.mark.parametrize("case", ["burst-kv", "light"])
def test_observe_reports_the_servers_own_counts_exactly(case):
    ev = report(case).evidence
    own = own_counts(case)
    assert ev.preemptions == own["preemptions"]
    assert ev.steps_with_output == own["steps"]
    assert ev.num_requests == own["finished"]
    assert ev.num_gpu_blocks == own["blocks"]
    meta = json.loads((RECORDED / case / "meta.json").read_text())
    assert ev.num_requests == sum(len(batch) for batch in meta["traffic"]["requests"])


def test_the_constrained_server_is_limited_by_its_kv_cache():
    r = report("burst-kv")
    assert r.evidence.num_gpu_blocks == 24 and r.evidence.block_size == 128 and r.evidence.kv_cache_tokens == 3072
    assert r.evidence.preemptions > 0
    assert r.verdict.limit == "kv_memory"


def test_the_light_server_is_limited_by_nothing():
    r = report("light")
    assert r.evidence.preemptions == 0 and r.evidence.waiting_peak == 0
    assert r.verdict.limit == "load"


@pytest.mark.parametrize("case", ["burst-kv", "light"])
def test_prometheus_scraping_the_same_server_gives_the_same_report(case):
    recorded = json.load(gzip.open(RECORDED / case / "prometheus.json.gz", "rt"))
    via = build_report(Collected(snapshots(recorded["answer"], "prometheus"), "prometheus", "Prometheus points"),
                       SETTINGS, {})
    direct = report(case)
    for key in ("preemptions", "steps_with_output", "num_requests", "num_gpu_blocks", "prompt_tokens_total",
                "output_tokens_total"):
        assert getattr(via.evidence, key) == getattr(direct.evidence, key), key
    assert via.verdict.limit == direct.verdict.limit
