"""`vllm-reader observe` end to end: sources (files, a live URL, a Prometheus server), formats, bad input."""
from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
import time

import jsonschema
import pytest

from reader.observe.scrape import load_files

from ._http import serving
from ._pages import RECORDED, ROOT, Engine, page, raw_counter, scrape_file

BURST = RECORDED / "burst-kv"
SARIF_SCHEMA = json.loads((ROOT / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text()) \
    if (ROOT / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").is_file() else None


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reader", "observe", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def one_paragraph_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    text = result.stderr.strip()
    assert text.startswith("error:") and "\n" not in text and "Traceback" not in text
    return text


def test_saved_scrapes_as_json_validate_against_the_shipped_schema():
    result = run(str(BURST / "scrapes.prom.gz"), "--max-num-seqs", "16", "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    schema = json.loads((ROOT / "reader" / "render" / "schemas" / "observe.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["verdict"]["limit"] == "kv_memory"


def test_sarif_names_the_limit_and_a_missed_slo_fails_on_warning():
    result = run(str(BURST / "scrapes.prom.gz"), "--format", "sarif", "--slo-ttft-p99", "100",
                 "--fail-on", "warning")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    if SARIF_SCHEMA is not None:
        jsonschema.validate(doc, SARIF_SCHEMA)
    rules = [r["ruleId"] for r in doc["runs"][0]["results"]]
    assert rules == ["OB200", "OB300"]
    assert run(str(BURST / "scrapes.prom.gz"), "--slo-ttft-p99", "100", "-o", "/dev/null").returncode == 0


def test_a_window_without_traffic_gives_no_verdict(tmp_path):
    idle = page(Engine(finished=5, steps=100))
    path = scrape_file(tmp_path / "idle.prom", [(0.0, idle), (60.0, idle)])
    result = run(str(path))
    assert result.returncode == 0
    assert "**No verdict: there was no traffic in the window.**" in result.stdout
    doc = json.loads(run(str(path), "--format", "json").stdout)
    assert doc["verdict"] is None and doc["traffic"] is False


def test_a_live_url_is_scraped_over_the_window_until_idle(tmp_path):
    recorded = load_files([str(BURST / "scrapes.prom.gz")])
    served = []

    def answer(path: str):
        served.append(path)
        return 200, "text/plain; version=0.0.4", recorded[min(len(served) - 1, len(recorded) - 1)].text

    kept = tmp_path / "kept.prom.gz"
    with serving(answer) as url:
        result = run(url, "--window", "60", "--interval", "0.2", "--until-idle", "--format", "json",
                     "--save", str(kept))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(served) == {"/metrics"}
    # it stopped at the second idle scrape after the first burst (counters still), long before the window's end
    k = len(served)
    assert 2 < k < len(recorded)
    for key, name in (("preemptions", "vllm:num_preemptions_total"),
                      ("steps_with_output", "vllm:iteration_tokens_total_count")):
        assert doc["evidence"][key] == raw_counter(recorded[k - 1].text, name) - raw_counter(recorded[0].text, name)
    assert gzip.open(kept, "rt").read().count("# vllm-reader-scrape") == k
    again = json.loads(run(str(kept), "--format", "json").stdout)
    assert again["evidence"]["preemptions"] == doc["evidence"]["preemptions"]


def test_an_unreachable_url_is_one_sentence_and_exit_2():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    text = one_paragraph_error(run(f"http://127.0.0.1:{port}/metrics", "--window", "1"))
    assert "cannot reach the server" in text and "refused" in text.lower()


def test_a_slow_url_times_out():
    asked: list[float] = []

    def slow(path: str):
        asked.append(time.monotonic())
        time.sleep(20)  # far longer than the timeout; the server's threads are daemons, so nothing waits for it
        return 200, "text/plain", "vllm:num_requests_running 0\n"

    with serving(slow) as url:
        result = run(url, "--timeout", "0.5", "--window", "1")
        ended = time.monotonic()
    text = one_paragraph_error(result)
    # asked once, and given up 0.5 s later (the process's exit on top), not when the answer came 20 s later
    assert "did not answer within 0.5 s" in text and len(asked) == 1 and ended - asked[0] < 2.0, ended - asked[0]


def test_a_page_that_is_not_vllm_metrics_is_refused():
    with serving(lambda path: (200, "text/html", "<html><body>It works!</body></html>")) as url:
        assert "not Prometheus metrics text" in one_paragraph_error(run(url, "--window", "1"))
    with serving(lambda path: (200, "text/plain", "# TYPE up gauge\nup 1\n")) as url:
        assert "none named vllm" in one_paragraph_error(run(url, "--window", "1"))
    with serving(lambda path: (404, "text/plain", "Not Found")) as url:
        assert "answered HTTP 404" in one_paragraph_error(run(url, "--window", "1"))


def recorded_prometheus() -> dict:
    return json.load(gzip.open(BURST / "prometheus.json.gz", "rt"))


def test_prometheus_gives_the_same_counts_and_verdict_as_the_direct_scrapes():
    recorded = recorded_prometheus()
    asked = []

    def answer(path: str):
        asked.append(path)
        return 200, "application/json", json.dumps(recorded["answer"])

    span = recorded["range"]
    with serving(answer) as url:
        result = run("--prometheus", url, "--end", f"{span['end']:.3f}",
                     "--range", f"{span['end'] - span['start']:.3f}",
                     "--step", "1s", "--selector", 'job="vllm"', "--format", "json")
    assert result.returncode == 0, result.stderr
    assert asked and asked[0].startswith("/api/v1/query_range?query=")
    assert "job%3D%22vllm%22" in asked[0]
    via = json.loads(result.stdout)
    direct = json.loads(run(str(BURST / "scrapes.prom.gz"), "--format", "json").stdout)
    for key in ("preemptions", "steps_with_output", "num_requests", "num_gpu_blocks", "block_size",
                "prompt_tokens_total", "output_tokens_total"):
        assert via["evidence"][key] == direct["evidence"][key], key
    assert via["verdict"]["limit"] == direct["verdict"]["limit"] == "kv_memory"


def test_a_prometheus_error_is_said_in_its_own_words():
    error = {"status": "error", "errorType": "bad_data", "error": "invalid parameter \"query\": 1:2: parse error"}
    with serving(lambda path: (400, "application/json", json.dumps(error))) as url:
        text = one_paragraph_error(run("--prometheus", url, "--range", "5m"))
    assert "Prometheus refused the query: bad_data: invalid parameter" in text
    empty = {"status": "success", "data": {"resultType": "matrix", "result": []}}
    with serving(lambda path: (200, "application/json", json.dumps(empty))) as url:
        assert "has no vLLM series" in one_paragraph_error(run("--prometheus", url, "--range", "5m"))


@pytest.mark.parametrize("args, key", [
    (["--window", "soon", "x.prom"], "--window"),
    (["--prometheus", "http://127.0.0.1:9", "--selector", "job=vllm"], "--selector"),
    (["--prometheus", "http://127.0.0.1:9", "--end", "yesterday"], "--end"),
    (["--format", "html", "x.prom"], "--format"),
    ([], "SOURCE"),
])
def test_bad_options_name_the_option(args, key):
    assert f"'{key}'" in one_paragraph_error(run(*args))
