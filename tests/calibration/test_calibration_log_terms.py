"""`calibrate CONFIG --log SERVER.log`: the memory terms of a deployment learned from its own start-up log, written
into the calibration profile with the settings they were measured at, and used by `diagnose --calibration`
(scaled with the capacity model's estimate, and said so, where the deployment's settings differ)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reader.calibration.profile import load_profile
from reader.commands.calibrate import calibrate_command
from reader.errors import ReaderError

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "fixtures" / "logs" / "public"
# vLLM 0.6.5 serving Llama-3-8B on one H100: its profiler printed the activation peak (1.26 GiB) and the
# non-torch memory (1.79 GiB) at the default 8192-token budget (vllm-project/vllm PR 10511, INDEX.yaml)
LOG = PUBLIC / "vllm-pr10511_llama3-8b_h100_tp1.log"
GIB = 2**30


def config(folder: Path, extra: str = "", gpu: str = "H100-SXM") -> Path:
    path = folder / f"deploy{abs(hash(extra + gpu))}.yaml"
    path.write_text(f"# vllm-reader: {{gpu: {gpu}}}\ncommand: vllm serve meta-llama/Meta-Llama-3-8B {extra}\n")
    return path


def calibrate(cfg: Path, out: Path, *logs: Path) -> str:
    return calibrate_command([str(cfg)], [], [], None, str(out), None, "gpu", None, "text", "0.6.5",
                             None, None, None, None, "serve", [str(p) for p in logs])


@pytest.fixture(scope="module")
def profile_path(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("logfit")
    out = folder / "h100.calibration.yaml"
    calibrate(config(folder), out, LOG)
    return out


def test_the_profile_holds_the_terms_vllm_printed_with_the_settings_they_were_measured_at(profile_path):
    profile = load_profile(profile_path)
    memory = profile.memory
    assert memory.activation_peak_bytes.value == pytest.approx(1.26 * GIB, rel=1e-3)
    assert memory.non_torch_bytes.value == pytest.approx(1.79 * GIB, rel=1e-3)
    at = memory.activation_peak_bytes.at
    assert (at.max_num_batched_tokens, at.max_num_seqs, at.tensor_parallel_size) == (8192, 256, 1)
    assert at.gpu_memory_utilization == pytest.approx(0.9)
    assert memory.activation_peak_bytes.estimate > 0  # the scale that carries it to other settings
    assert profile.fitted_on.device == "H100-SXM" and profile.fitted_on.dtype == "bfloat16"
    assert [s.kind for s in profile.sources] == ["log"] and profile.fit.evidence == "log"
    # no bench results: the step-time coefficients are the shipped ones, marked as not fitted
    assert not any(c.fitted for c in profile.step_time.values())
    assert memory.fit.error_of("available_kv_gib").median_abs_pct < 1.0


def _capacity(cfg: Path, profile: Path):
    from reader.capacity.api import compute_capacity
    from reader.config.from_cli import load_and_resolve, load_options
    from reader.pipeline import capacity_request

    resolved = load_and_resolve(str(cfg), load_options(vllm_version="0.6.5", calibration=str(profile)))
    return resolved, compute_capacity(capacity_request(resolved)).workers[0]


def test_diagnose_uses_the_terms_at_the_settings_they_were_measured_at(profile_path, tmp_path):
    _, worker = _capacity(config(tmp_path), profile_path)
    assert worker.activation_peak.value == pytest.approx(1.26 * GIB, rel=1e-3)
    assert worker.activation_peak.basis == "fitted" and "calibration profile" in worker.activation_peak.how
    assert worker.non_torch.value == pytest.approx(1.79 * GIB, rel=1e-3)


def test_another_token_budget_scales_the_activation_peak_and_warns(profile_path, tmp_path):
    resolved, worker = _capacity(config(tmp_path, "--max-num-batched-tokens 16384"), profile_path)
    term = load_profile(profile_path).memory.activation_peak_bytes
    assert worker.activation_peak.basis == "fitted"
    assert "scaled with the estimate" in worker.activation_peak.how
    # the measurement times estimate(16384) / estimate(8192): more than measured, in the estimate's proportion
    assert worker.activation_peak.value > term.value * 1.2
    warnings = [n.message for n in resolved.notes if n.key == "calibration"]
    assert any("max_num_batched_tokens 8192 there, 16384 here" in w for w in warnings)
    # the non-torch memory does not depend on the token budget: used as measured
    assert worker.non_torch.value == pytest.approx(1.79 * GIB, rel=1e-3)


def test_the_report_says_which_memory_terms_came_from_the_profile(profile_path, tmp_path):
    cfg = config(tmp_path, "--max-num-batched-tokens 16384")
    out = subprocess.run([sys.executable, "-m", "reader", "diagnose", str(cfg), "--vllm-version", "0.6.5",
                          "--calibration", str(profile_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode in (0, 1), out.stderr
    assert "activation peak, non-torch memory from the calibration profile" in out.stdout
    assert "measured at 8192" in out.stdout
    # step times: the profile has no bench results, so the shipped coefficients are used, and said so
    assert "step times: the shipped coefficients" in out.stdout


def test_a_log_of_another_gpu_is_refused(tmp_path):
    with pytest.raises(ReaderError, match="another GPU"):
        calibrate(config(tmp_path, gpu="L40S"), tmp_path / "p.yaml", LOG)
    assert not (tmp_path / "p.yaml").exists()


def test_a_log_of_another_release_is_refused(tmp_path):
    newer = ROOT / "fixtures" / "logs" / "live" / "vllm-0.32.0-cpu-serve.log"
    with pytest.raises(ReaderError, match="vLLM 0.32.0 and the config runs 0.6.5"):
        calibrate(config(tmp_path), tmp_path / "p.yaml", newer)


def test_a_cpu_servers_log_has_nothing_to_fit_and_says_why(tmp_path):
    cpu_log = ROOT / "fixtures" / "logs" / "live" / "vllm-0.32.0-cpu-serve.log"
    deployment = ROOT / "fixtures" / "calibration" / "cpu-tiny-llama" / "deployment.yaml"
    with pytest.raises(ReaderError, match="CPU backend is given its KV-cache space"):
        calibrate_command([str(deployment)], [], [], None, str(tmp_path / "p.yaml"), None, "cpu", 64.0, "text",
                          "0.32.0", "cpu", str(ROOT / "fixtures" / "live" / "tiny-llama"), None, None, "serve",
                          [str(cpu_log)])


def test_a_file_that_is_not_a_log_exits_2_with_one_sentence(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("nothing here\n")
    out = subprocess.run([sys.executable, "-m", "reader", "calibrate", str(config(tmp_path)), "--log", str(notes),
                          "--vllm-version", "0.6.5", "-o", str(tmp_path / "p.yaml")], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "not a vLLM log" in out.stderr + out.stdout
    assert not (tmp_path / "p.yaml").exists()


def test_hold_out_without_bench_results_is_refused(tmp_path):
    with pytest.raises(ReaderError, match="--hold-out needs bench results"):
        calibrate_command([str(config(tmp_path))], [], ["x.json"], None, str(tmp_path / "p.yaml"), None, "gpu", None,
                          "text", "0.6.5", None, None, None, None, "serve", [str(LOG)])
