"""`vllm-reader plan` end to end: the report, its JSON schema, the winner's files read back by `check` and
`diagnose`, bad input as one paragraph and exit 2."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
SMALL = ("{num_requests: 120, arrival: {process: poisson, rate: 6.0}, prompt_len: {dist: lognormal, median: 400, "
         "sigma: 0.5, min: 16, max: 2000}, output_len: {dist: lognormal, median: 100, sigma: 0.5, min: 8, max: 400}}")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reader", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    out = tmp_path_factory.mktemp("plan")
    result = run("plan", "--model", MODEL, "--workload", SMALL, "--slo-itl-p99", "40", "--slo-ttft-p99", "1500",
                 "--gpus", "H100-SXM,L40S", "--price", "H100-SXM=2.5,L40S=1.0", "--vllm-version", "0.18.0",
                 "--format", "json", "-o", str(out / "plan.json"), "--write", str(out / "files"))
    assert result.returncode == 0, result.stderr
    return json.loads((out / "plan.json").read_text()), out / "files"


def test_the_json_report_follows_its_shipped_schema(planned):
    doc, _ = planned
    schema = json.loads((ROOT / "reader" / "render" / "schemas" / "plan.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["schema_version"] == 1 and doc["winner"] is not None
    assert doc["prices"] == {"H100-SXM": 2.5, "L40S": 1.0}
    assert set(doc["files"]) == {"vllm-config.yaml", "serve.sh"}


def test_the_written_files_pass_check_for_their_release(planned):
    _, files = planned
    result = run("check", str(files / "vllm-config.yaml"), str(files / "serve.sh"), "--fail-on", "warning")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "vLLM 0.18.0" in result.stdout


def test_diagnose_on_the_written_config_reproduces_the_plan_and_meets_its_slos(planned):
    doc, files = planned
    for name in ("vllm-config.yaml", "serve.sh"):
        result = run("diagnose", str(files / name), "--no-whatifs", "--format", "json")
        assert result.returncode == 0, result.stderr
        diagnosis = json.loads(result.stdout)
        assert all(check["met"] for check in diagnosis["verdict"]["slo"]) and len(diagnosis["verdict"]["slo"]) == 2
        at_target = doc["winner"]["at_target"]
        assert diagnosis["baseline"]["output_throughput"] == pytest.approx(at_target["output_throughput"], rel=1e-9)
        assert diagnosis["baseline"]["itl_p99_ms"] == pytest.approx(at_target["itl_p99_ms"], rel=1e-9)


def test_the_markdown_report_has_the_command_the_config_and_a_pareto_chart(tmp_path):
    result = run("plan", "--model", MODEL, "--workload", SMALL, "--slo-itl-p99", "40", "--gpus", "H100-SXM",
                 "--target-rate", "20", "--vllm-version", "0.18.0", "--plot", str(tmp_path))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("# vllm-reader plan: meta-llama/Llama-3.1-8B-Instruct")
    assert "vllm serve meta-llama/Llama-3.1-8B-Instruct" in text and "# vllm-reader:" in text
    assert "quadrantChart" in text and "## Replicas" in text
    assert "no prices given" in text
    assert (tmp_path / "plan-pareto.svg").read_text().startswith("<svg")


def test_nothing_meeting_the_slos_exits_1_and_says_what_it_would_take():
    result = run("plan", "--model", MODEL, "--workload", SMALL, "--slo-itl-p99", "1", "--gpus", "H100-SXM",
                 "--vllm-version", "0.18.0")
    assert result.returncode == 1
    assert "## Nothing meets the SLOs" in result.stdout and "floor" in result.stdout


@pytest.mark.parametrize("args, words", [
    (["--model", MODEL, "--gpus", "H900"], "H900"),
    (["--model", "no-such/model-7b"], "no-such/model-7b"),
    (["--model", MODEL, "--gpus", "H100-SXM", "--price", "L40S=1"], "not among the GPUs"),
    ([], "--model"),
    (["--model", MODEL, "--workload", "{preset: summarization}"], "without SLOs"),
    (["--model", MODEL, "--format", "sarif"], "unknown format"),
    (["--model", MODEL, "--vary", "no_such_flag"], "no such setting"),
    (["--model", MODEL, "--max-gpus", "0"], "--max-gpus"),
])
def test_bad_input_is_one_paragraph_and_exit_2(args, words):
    result = run("plan", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert words in result.stderr and "Traceback" not in result.stderr
