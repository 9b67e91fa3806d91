"""The analysis commands end to end: outputs, formats and exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "fixtures/examples/llama-3.1-8b-l40s-16-seqs.sh"
SMALL = "{prompt_len: 300, output_len: 50, num_requests: 120, arrival: {process: poisson, rate: 6.0}}"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reader", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_diagnose_json_and_fail_on():
    result = run("diagnose", EXAMPLE, "--workload", SMALL, "--format", "json", "--slo-ttft-p99", "1")
    doc = json.loads(result.stdout)
    assert doc["verdict"]["limit"] in ("admission", "load", "gpu", "kv_memory", "budget_small", "budget_large")
    assert result.returncode == 0  # an SLO miss is a warning; the default --fail-on is error
    warned = run("diagnose", EXAMPLE, "--workload", SMALL, "--slo-ttft-p99", "1", "--fail-on", "warning",
                 "--no-whatifs", "-o", "/dev/null")
    assert warned.returncode == 1


def test_diagnose_exits_1_when_vllm_would_not_start():
    result = run("diagnose", "fixtures/examples/llama-3.1-8b-draft-model-v0.10.sh", "--no-whatifs")
    assert result.returncode == 1 and "would refuse" in result.stdout
    assert run("diagnose", "fixtures/examples/llama-3.1-8b-draft-model-v0.10.sh", "--no-whatifs",
               "--fail-on", "never").returncode == 0


def test_diagnose_plot_writes_svg(tmp_path):
    result = run("diagnose", EXAMPLE, "--workload", SMALL, "--plot", str(tmp_path), "-o", str(tmp_path / "r.md"))
    assert result.returncode == 0, result.stderr
    svg = (tmp_path / "timeline.svg").read_text()
    assert svg.startswith("<svg") and "KV usage" in svg
    assert (tmp_path / "r.md").read_text().startswith("# vllm-reader diagnosis")


def test_simulate_prints_modes_side_by_side():
    result = run("simulate", EXAMPLE, "--workload", SMALL, "--modes", "continuous,chunked", "--format", "json")
    assert result.returncode == 0, result.stderr
    modes = [r["mode"] for r in json.loads(result.stdout)]
    assert modes == ["continuous", "chunked"]


def test_sweep_table_and_bad_param():
    result = run("sweep", EXAMPLE, "--workload", SMALL, "--param", "max_num_seqs=8,16,32")
    assert result.returncode == 0, result.stderr
    assert "max_num_seqs=32" in result.stdout and "best" in result.stdout
    bad = run("sweep", EXAMPLE, "--param", "enable_prefix_caching=1,0")
    assert bad.returncode == 2 and "numeric" in bad.stderr


def test_capacity_reports_vllm_log_lines():
    result = run("capacity", EXAMPLE)
    assert result.returncode == 0
    assert "GPU KV cache size:" in result.stdout and "Maximum concurrency for 8,192 tokens per request" in result.stdout
    fails = run("capacity", "fixtures/examples/llama-3.1-70b-2xa100-long-context.yaml")
    assert fails.returncode == 1 and "To serve at least one request" in fails.stdout


def test_capacity_names_the_model_as_written_with_the_shape_it_reads(tmp_path):
    # The catalog reads the Instruct model with the base model's config.json (an alias): the report names the
    # id the config wrote, and the line below it the file its shape came from.
    config = tmp_path / "serve.sh"
    config.write_text("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192\n")
    text = run("capacity", str(config), "--gpu", "H100-SXM", "--vllm-version", "0.18.0")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("model meta-llama/Llama-3.1-8B-Instruct on H100-SXM")
    assert "model shape from: shipped catalog (reader/catalog/models/meta-llama/Llama-3.1-8B/config.json)" in lines
    doc = json.loads(run("capacity", str(config), "--gpu", "H100-SXM", "--format", "json").stdout)
    assert doc["model"] == "meta-llama/Llama-3.1-8B-Instruct" and "Llama-3.1-8B/config.json" in doc["model_source"]


def test_help_is_plain_text_whether_or_not_rich_is_installed():
    # typer on the click package escapes help for rich markup when rich is importable (reader/entry.py)
    result = run("check", "--help")
    assert result.returncode == 0 and "[required]" in result.stdout and "\\[" not in result.stdout
