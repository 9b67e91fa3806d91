"""`plan --calibration PROFILE`: the trials' step times come from the profile, for the GPU and parallel layout it was
fitted on; every other shape is skipped with the profile's reason, and a profile no searched shape fits is refused."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reader.calibration.profile import DEFAULT_PROFILE, Coefficient, load_profile, write_profile

ROOT = Path(__file__).resolve().parents[2]
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
SMALL = ("{num_requests: 60, arrival: {process: poisson, rate: 6.0}, prompt_len: {dist: lognormal, median: 400, "
         "sigma: 0.5, min: 16, max: 2000}, output_len: {dist: lognormal, median: 100, sigma: 0.5, min: 8, max: 400}}")


def plan(profile: Path, out: Path, gpus: str = "H100-SXM,H200-SXM") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reader", "plan", "--model", MODEL, "--workload", SMALL,
                           "--slo-itl-p99", "40", "--gpus", gpus, "--vllm-version", "0.18.0", "--calibration",
                           str(profile), "--format", "json", "-o", str(out), "--no-progress"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def slow_profile(tmp_path_factory) -> Path:
    """The shipped H200 profile with its matmul efficiencies halved: a GPU twice as slow as the datasheet says."""
    shipped = load_profile(DEFAULT_PROFILE)
    step_time = dict(shipped.step_time)
    for name in ("gemm_compute_eff", "gemm_memory_eff"):
        step_time[name] = Coefficient(value=step_time[name].value / 2, source="halved for the test", fitted=True)
    path = tmp_path_factory.mktemp("profiles") / "slow.yaml"
    write_profile(shipped.model_copy(update={"name": "slow-h200", "step_time": step_time}), path)
    return path


def _planned(profile: Path, tmp_path: Path) -> dict:
    out = tmp_path / f"{profile.stem}.json"
    done = plan(profile, out)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def test_the_plan_keeps_to_the_gpu_and_layout_the_profile_was_fitted_on(slow_profile, tmp_path):
    result = _planned(slow_profile, tmp_path)
    assert {(s["gpu"], s["tp"], s["pp"]) for s in result["shapes"]} == {("H200-SXM", 1, 1)}
    skipped = [n for n in result["notes"] if n.startswith("not searched: H100-SXM TP1:")]
    assert skipped and "fitted with device H200-SXM" in skipped[0]
    assert any(n.startswith("not searched: H200-SXM TP2:") and "tensor-parallel size" in n for n in result["notes"])
    assert result["calibration"]["name"] == "slow-h200"


def test_the_trials_step_times_are_the_profiles(slow_profile, tmp_path):
    fast = _planned(ROOT / DEFAULT_PROFILE, tmp_path)["winner"]
    slow = _planned(slow_profile, tmp_path)["winner"]
    # half the matmul efficiency: decode steps about twice as long, so never fewer replicas for the same load
    assert slow["metrics"]["itl_p99_ms"] > 1.6 * fast["metrics"]["itl_p99_ms"]
    assert slow["replicas"] >= fast["replicas"]


def test_a_profile_no_searched_gpu_matches_is_refused_in_one_sentence(slow_profile, tmp_path):
    done = plan(slow_profile, tmp_path / "p.json", gpus="H100-SXM,L40S")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "none of the shapes searched" in done.stderr and "--gpus H200-SXM" in done.stderr
