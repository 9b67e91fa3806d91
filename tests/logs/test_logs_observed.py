"""`diagnose CONFIG --log LOG`: what the log measured and saw, beside what the diagnosis predicts for that config,
in the diagnosis's one observed-beside-predicted comparison (reader/evidence/compare.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reader.cli import app

ROOT = Path(__file__).resolve().parents[2]
LIVE = ROOT / "fixtures" / "logs" / "live"
PUBLIC = ROOT / "fixtures" / "logs" / "public"
TINY = str(ROOT / "fixtures" / "live" / "tiny-llama" / "config.json")
runner = CliRunner()

# The deployment of vLLM PR #10511's first table: Llama 3 8B on one H100, vLLM 0.6.5 (the thread's command).
LLAMA3 = """# vllm-reader:
#   vllm_version: 0.6.5
#   gpu: H100-SXM
model: meta-llama/Meta-Llama-3-8B
"""
# The KV-bound CPU server recorded in fixtures/logs/live (tests/live/_log_scenarios.py), as a config.
KV_BOUND = """model: {model}
max_model_len: 2048
max_num_seqs: 16
max_num_batched_tokens: 512
num_gpu_blocks_override: 24
enable_prefix_caching: false
"""


def diagnosis(config: Path, log: Path, *extra: str) -> dict:
    result = runner.invoke(app, ["diagnose", str(config), "--log", str(log), "--format", "json", "--no-whatifs",
                                 *extra])
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.output)
    assert data["observed"]["source"] == "log"
    return data


def rows(config: Path, log: Path, *extra: str) -> dict:
    return {row["key"]: row for row in diagnosis(config, log, *extra)["comparison"]["rows"]}


def test_each_logged_memory_term_sits_beside_its_prediction(tmp_path):
    config = tmp_path / "llama3.yaml"
    config.write_text(LLAMA3)
    got = rows(config, PUBLIC / "vllm-pr10511_llama3-8b_h100_tp1.log")
    assert got["memory.weights_gib"]["observed"] == pytest.approx(14.96) and got["memory.weights_gib"]["agrees"]
    # 0.6.5's profiler counted the CUDA context as non-torch memory: 1.79 GiB logged, the 0.6.5 estimate beside it
    assert got["memory.non_torch_gib"]["observed"] == pytest.approx(1.79) and got["memory.non_torch_gib"]["agrees"]
    assert got["memory.available_kv_gib"]["observed"] == pytest.approx(53.29) and got["memory.available_kv_gib"]["agrees"]
    assert got["memory.activation_peak_gib"]["agrees"] is False and got["memory.activation_peak_gib"]["if_off"]
    # no line of a log counts finished requests, and a log cut during start-up saw no preemption either way
    assert got["load.requests"]["observed"] is None and got["sched.preemptions"]["observed"] is None


def test_the_stats_lines_are_the_observed_load(tmp_path):
    config = tmp_path / "kv-bound.yaml"
    config.write_text(KV_BOUND.format(model="tiny-llama"))
    data = diagnosis(config, LIVE / "vllm-0.32.0-cpu-kv-bound.log", "--vllm-version", "0.32.0", "--model", TINY)
    got = {row["key"]: row for row in data["comparison"]["rows"]}
    assert got["kv.blocks"]["observed"] == 24 and got["kv.blocks"]["predicted"] == 24
    assert got["kv.usage_peak"]["observed"] == 100.0
    assert got["sched.running_mean"]["observed"] > 0 and got["sched.waiting_peak"]["observed"] >= 10
    # the scoring rules, on what the stats lines saw (24 blocks, 18 waiting, the cache full): the KV cache limits
    assert data["observed_verdict"]["limit"] == "kv_memory"


def test_a_log_that_is_not_one_is_refused(tmp_path):
    config = tmp_path / "llama3.yaml"
    config.write_text(LLAMA3)
    result = subprocess.run([sys.executable, "-m", "reader", "diagnose", str(config), "--log", str(config),
                             "--no-whatifs"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "this is not a vLLM log" in result.stderr and "--log" in result.stderr
