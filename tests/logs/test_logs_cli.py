"""`vllm-reader read-log LOG` and `diagnose LOG` from the command line: files, standard input (`kubectl logs
... | vllm-reader read-log -`), every format, and input that is not a vLLM log."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from reader.cli import app

ROOT = Path(__file__).resolve().parents[2]
LIVE = ROOT / "fixtures" / "logs" / "live"
PUBLIC = ROOT / "fixtures" / "logs" / "public"
TINY = str(ROOT / "fixtures" / "live" / "tiny-llama" / "config.json")
runner = CliRunner()


def invoke(*args: str, stdin: str | None = None):
    return runner.invoke(app, list(args), input=stdin)


def test_read_log_sets_each_logged_term_beside_the_prediction():
    result = invoke("read-log", str(PUBLIC / "vllm-pr10511_llama3-8b_h100_tp1.log"), "--vllm-version", "0.6.5",
                    "--gpu", "H100-SXM")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Launch rebuilt from the log:" in out and "vllm serve meta-llama/Meta-Llama-3-8B" in out
    # 0.6.5 reads with 0.6.3's flag table but profiles memory as 0.6.5 did (CUDA context in non-torch)
    assert "vLLM: 0.6.5 (given with --vllm-version)" in out
    assert "non-torch memory" in out and "1.79 GiB" in out and "1.86 GiB" in out
    assert "available KV cache memory" in out and "53.29 GiB" in out


def test_read_log_from_standard_input():
    text = (LIVE / "vllm-0.32.0-cpu-kv-bound.log").read_text()
    result = invoke("read-log", "-", "--model", TINY, stdin=text)
    assert result.exit_code == 0, result.output
    assert "vLLM log: <stdin>" in result.output and "vLLM 0.32.0" in result.output
    assert "KV cache usage: max 100.0%" in result.output and "waiting: max 18" in result.output


def test_read_log_json_holds_the_reading_and_the_comparison():
    result = invoke("read-log", str(PUBLIC / "vllm-pr10511_llama3-8b_h100_tp1.log"), "--vllm-version", "0.6.5",
                    "--gpu", "H100-SXM", "-f", "json")
    data = json.loads(result.output)
    rows = {row["term"]: row for row in data["memory"]["rows"]}
    assert rows["available_kv"]["logged"] == 53.29 and "difference_pct" in rows["available_kv"]


def test_a_log_of_the_cpu_build_reads_its_platform_and_assumes_no_gpu():
    result = invoke("read-log", str(LIVE / "vllm-0.32.0-cpu-serve.log"), "--model", TINY, "-f", "json")
    data = json.loads(result.output)
    assert data["reading"]["platform"] == "cpu" and data["reading"]["kv"]["kv_tokens"]["value"] == 1048576
    assert data["launch"]["gpu"] is None and data["launch"]["gpu_how"].startswith("none: the log is from vLLM's CPU")
    assert data["memory"] is None and any("CPU build" in note for note in data["notes"])
    assert not any("assuming H100" in note for note in data["launch"]["notes"])
    assert data["stats"]["samples"] >= 1


def test_read_log_of_a_cut_log_says_what_it_could_still_read():
    result = invoke("read-log", str(PUBLIC / "vllm-21348_qwen3-235b-fp8_4xh100_tp4.log"), "-f", "markdown")
    assert result.exit_code == 0
    assert "8.11 GiB" in result.output and "178,880" in result.output
    assert "cannot be rebuilt" in result.output


def test_a_file_that_is_not_a_vllm_log_is_refused_in_one_paragraph(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("This is a note about a deployment.\nIt mentions vLLM and GPUs but it is no log.\n")
    result = invoke("read-log", str(path))
    assert result.exit_code == 2
    assert "this is not a vLLM log" in result.output and "Traceback" not in result.output


def test_diagnose_a_refused_log_exits_1_with_the_refusal_as_verdict():
    result = invoke("diagnose", str(LIVE / "vllm-0.32.0-cpu-refused-max-len.log"), "--model", TINY, "--no-whatifs",
                    "--workload", "{preset: chat, num_requests: 50}")
    assert result.exit_code == 1, result.output
    assert "refused to start (the log, line" in result.output and "check agrees: rule VR402" in result.output


def test_diagnose_a_log_cut_before_its_config_explains_itself():
    result = subprocess.run([sys.executable, "-m", "reader", "diagnose", str(PUBLIC / "lmcache-1739_qwen3-14b_v1.log")],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "cut before them" in result.stderr and "read-log" in result.stderr


def test_the_platform_is_read_from_the_line_that_names_it():
    from reader.logs.read import read_log

    reading = read_log((PUBLIC / "kvcached-29_llama31-8b_v092_config.log").read_text(), "log")
    assert reading.platform == "cuda" and "detected platform cuda" in reading.platform_how and not reading.on_cpu
