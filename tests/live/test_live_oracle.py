"""The golden traces are still what vLLM's own scheduler decides: the one oracle runner, re-run on the real
scheduler of each release, writes the committed trace byte for byte. (The offline suite replays those traces
through our simulator; this keeps the traces themselves honest.)"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ORACLE = Path(__file__).resolve().parents[2] / "fixtures" / "oracle"
# Scenarios where the releases differ (admission gate, lone-request threshold) and where KV preemption matters.
SCENARIOS = ("07_kv_preemption", "09_long_prefill_threshold", "15_admission_full_isl_on")


def _run(venv: Path, scenario: str, out: Path) -> bytes:
    trace = out / f"{scenario}.jsonl"
    subprocess.run([str(venv / "bin" / "python"), str(ORACLE / "run_oracle.py"),
                    str(ORACLE / "scenarios" / f"{scenario}.yaml"), "-o", str(trace),
                    "--summary", str(out / f"{scenario}.summary.json")],
                   check=True, capture_output=True, timeout=300)
    return trace.read_bytes()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_vllm_0_32_schedules_the_scenario_as_its_golden_trace_says(vllm_032, scenario, tmp_path):
    assert _run(vllm_032, scenario, tmp_path) == (ORACLE / "golden" / f"{scenario}.jsonl").read_bytes()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_vllm_0_18_schedules_the_scenario_as_its_golden_trace_says(vllm_018, scenario, tmp_path):
    assert _run(vllm_018, scenario, tmp_path) == (ORACLE / "golden-0.18" / f"{scenario}.jsonl").read_bytes()
