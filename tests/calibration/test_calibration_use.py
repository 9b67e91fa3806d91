"""Using a profile: which deployments may, what every report says about it, and a device outside the catalog."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from reader.calibration.profile import DEFAULT_PROFILE, load_profile, write_profile

ROOT = Path(__file__).resolve().parents[2]
H200_8B = ROOT / "fixtures" / "examples" / "llama-3.1-8b-h100-chat.yaml"
TINY = "fixtures/live/tiny-llama"
CPU_DEPLOYMENT = "fixtures/calibration/cpu-tiny-llama/deployment.yaml"
CPU_PROFILE = "fixtures/calibration/cpu-tiny-llama/profile.yaml"
SMALL = "{prompt_len: 300, output_len: 40, num_requests: 60, arrival: {process: poisson, rate: 4.0}}"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reader", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def h200_profile(tmp_path: Path, **fitted_on) -> Path:
    """The shipped profile as if fitted on another deployment."""
    profile = load_profile(DEFAULT_PROFILE)
    profile = profile.model_copy(update={"fitted_on": profile.fitted_on.model_copy(update=fitted_on)})
    path = tmp_path / "p.yaml"
    write_profile(profile, path)
    return path


def test_reports_name_the_shipped_calibration_by_default():
    """A GPU type with published runs gets its own profile and its measured error; another gets the H200 steps'
    profile, said to be extrapolated."""
    result = run("simulate", str(H200_8B), "--workload", SMALL, "--modes", "chunked")
    assert "calibration profile 'h100-sxm' (the shipped default" in result.stdout
    assert "published real-vLLM runs on H100-SXM" in result.stdout and "extrapolated" not in result.stdout
    result = run("simulate", str(H200_8B), "--gpu", "A100-80GB-SXM", "--workload", SMALL, "--modes", "chunked")
    assert "calibration profile 'h200-sxm' (the shipped default" in result.stdout
    assert "A100-80GB-SXM is extrapolated from its datasheet peaks" in result.stdout


@pytest.mark.parametrize("change, words", [
    ({"device": "L40S"}, "fitted with device L40S, and this deployment has H200-SXM"),
    ({"tensor_parallel_size": 2}, "tensor-parallel size 2"),
    ({"dtype": "float16"}, "weights dtype float16"),
    ({"quantization": "fp8"}, "quantization fp8"),
])
def test_a_profile_of_other_hardware_is_refused(tmp_path, change, words):
    path = h200_profile(tmp_path, **change)
    result = run("simulate", str(H200_8B), "--gpu", "H200-SXM", "--workload", SMALL, "--calibration", str(path))
    assert result.returncode == 2 and words in result.stderr and "Traceback" not in result.stderr


def test_a_profile_of_another_model_is_used_with_a_warning(tmp_path):
    path = h200_profile(tmp_path, model="some/other-model", model_shape={"layers": 2})
    result = run("diagnose", str(H200_8B), "--gpu", "H200-SXM", "--workload", SMALL, "--calibration", str(path),
                 "--no-whatifs", "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["calibration"]["chosen"] == "given with --calibration" and doc["calibration"]["path"] == str(path)
    assert any("fitted on model some/other-model" in n for n in doc["notes"])


def test_the_comment_block_names_a_profile_relative_to_the_file(tmp_path):
    h200_profile(tmp_path)  # writes p.yaml beside the config
    config = tmp_path / "deploy.yaml"
    config.write_text("# vllm-reader:\n#   gpu: H200-SXM\n#   calibration: p.yaml\n"
                      + H200_8B.read_text().split("\n", 1)[1])
    result = run("sweep", str(config), "--param", "max_num_seqs=8,16", "--workload", SMALL, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["calibration"]["chosen"] == "named in the vllm-reader comment block"
    missing = tmp_path / "gone.yaml"
    config.write_text(config.read_text().replace("p.yaml", missing.name))
    result = run("sweep", str(config), "--param", "max_num_seqs=8,16", "--workload", SMALL)
    assert result.returncode == 2 and "does not exist" in result.stderr


def test_a_device_outside_the_catalog_runs_on_its_profile():
    assert run("simulate", CPU_DEPLOYMENT, "--model", TINY, "--workload", SMALL).returncode == 2  # unknown GPU
    result = run("simulate", CPU_DEPLOYMENT, "--model", TINY, "--workload", SMALL, "--modes", "chunked",
                 "--calibration", CPU_PROFILE)
    assert result.returncode == 0, result.stderr
    assert "stand in for the device's datasheet" in result.stdout
    step = run("step-time", "--model", TINY, "--gpu", "cpu-xeon-2c", "--batch", "prefill:256@0,decode:8@300",
               "--calibration", CPU_PROFILE, "--format", "json")
    doc = json.loads(step.stdout)
    assert step.returncode == 0 and doc["gpu"] == "cpu-xeon-2c" and doc["calibration"]["device_stands_in"]
    assert run("step-time", "--model", TINY, "--gpu", "H100-SXM", "--batch", "decode:8@300",
               "--calibration", CPU_PROFILE).returncode == 2


def test_the_cpu_profile_describes_its_device():
    profile = yaml.safe_load((ROOT / CPU_PROFILE).read_text())
    assert profile["device"]["kind"] == "cpu" and profile["fitted_on"]["device"] == "cpu-xeon-2c"
    assert profile["step_time"]["overlap_p"]["value"] == 1.0


def test_memory_terms_a_profile_measured_replace_the_estimates(tmp_path):
    from reader.calibration.profile import MemoryTerm, MemoryTerms

    profile = load_profile(DEFAULT_PROFILE)
    measured = MemoryTerms(activation_peak_bytes=MemoryTerm(value=3 * 2**30, source="test: from a start-up log"))
    path = tmp_path / "m.yaml"
    write_profile(profile.model_copy(update={"memory": measured}), path)
    plain = run("capacity", str(H200_8B), "--gpu", "H200-SXM", "--format", "json")
    given = run("capacity", str(H200_8B), "--gpu", "H200-SXM", "--format", "json", "--calibration", str(path))
    assert plain.returncode == 0 and given.returncode == 2  # capacity takes no --calibration: the comment does
    config = tmp_path / "c.yaml"
    config.write_text("# vllm-reader:\n#   gpu: H200-SXM\n#   calibration: m.yaml\n" + H200_8B.read_text().split("\n", 1)[1])
    given = run("capacity", str(config), "--format", "json")
    assert given.returncode == 0, given.stderr
    before = json.loads(plain.stdout)["workers"][0]["activation_peak"]
    after = json.loads(given.stdout)["workers"][0]["activation_peak"]
    assert after["value"] == 3 * 2**30 != before["value"]
