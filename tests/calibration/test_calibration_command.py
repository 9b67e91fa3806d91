"""`vllm-reader calibrate`: the command end to end, its profile, and the bad input it refuses (exit 2, one
sentence, and no profile written)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reader.fitting import fit_bench
from reader.calibration.profile import load_profile
from reader.errors import ReaderError

from ._synthetic import DEPLOYMENT, TINY, write

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reader", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bench")
    return {"c1": write(folder / "c1.json", prompt=256, output=32, n=6, concurrency=1),
            "c8": write(folder / "c8.json", prompt=256, output=32, n=24, concurrency=8),
            "r4": write(folder / "r4.json", prompt=512, output=32, n=16, rate=4.0),
            "other": write(folder / "other.json", prompt=64, output=8, n=4, rate=2.0, model_id="another/model")}


def calibrate(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return run("calibrate", str(DEPLOYMENT), "--model", TINY, "--device-kind", "cpu", "-o", str(tmp_path / "p.yaml"),
               *args)


@pytest.mark.slow
def test_calibrate_writes_a_profile_that_says_what_it_fitted_and_how_well(results, tmp_path):
    done = calibrate("--bench", str(results["c1"]), str(results["c8"]), "--hold-out", str(results["r4"]),
                     tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "held-out files (predicted, not fitted)" in done.stdout and "wrote" in done.stdout
    profile = load_profile(tmp_path / "p.yaml")
    assert profile.fitted_on.device == "cpu-xeon-2c" and not profile.fitted_on.device_in_catalog
    assert profile.device is not None and profile.device.kind == "cpu" and profile.fit.converged
    assert [s.path for s in profile.sources] == [str(results[k]) for k in ("c1", "c8", "r4")]
    assert {e.metric for e in profile.fit.errors if e.held_out} >= {"output_throughput", "median_tpot_ms"}
    assert profile.step_time["host_overhead_s"].fitted and not profile.step_time["knee_p"].fitted
    assert "calibrate" in profile.created_by and profile.fitted_on.vllm_version == "0.32.0"


@pytest.mark.parametrize("args, words", [
    (["--bench", "{c1}"], "too few bench results"),
    (["--bench", "{c1}", "{other}"], "ran against model 'another/model'"),
    (["--bench", "{c1}", "{deployment}"], "not valid JSON"),
    (["--bench", "{c1}", "{c8}", "--format", "xml"], "unknown format"),
])
def test_bad_input_is_one_sentence_and_writes_nothing(results, tmp_path, args, words):
    files = {k: str(v) for k, v in results.items()} | {"deployment": str(DEPLOYMENT)}
    done = calibrate(*[a.format(**files) for a in args], tmp_path=tmp_path)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "p.yaml").exists()


def test_calibrate_needs_the_device_and_the_results(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(DEPLOYMENT.read_text().replace("#   gpu: cpu-xeon-2c\n", ""))
    done = run("calibrate", str(config), "--model", TINY, "--bench", "a.json", "b.json")
    assert done.returncode == 2 and "needs the device the measurements ran on" in done.stderr
    assert "nothing to fit: add `--bench RESULT.json`" in run("calibrate", str(DEPLOYMENT)).stderr
    assert "give no config" in run("calibrate", str(DEPLOYMENT), "--steps", "x.json").stderr


def test_a_fit_that_does_not_converge_writes_nothing(results, tmp_path, monkeypatch):
    from reader.commands.calibrate import calibrate_command

    monkeypatch.setattr(fit_bench, "MAX_ITERATIONS", 2)
    target = tmp_path / "p.yaml"
    with pytest.raises(ReaderError) as err:
        calibrate_command([str(DEPLOYMENT)], [str(results["c1"]), str(results["c8"])], [], None, str(target), None,
                          "cpu", None, "text", None, None, TINY, None, None, "serve")
    assert "did not converge in 2 iterations" in err.value.message and not target.exists()


@pytest.mark.slow
def test_the_shipped_h200_profile_is_what_calibrate_makes_from_the_measured_steps(tmp_path):
    """One calibration path: the shipped profile is this command's output on fixtures/gpu/, byte for byte."""
    done = run("calibrate", "--steps", "fixtures/gpu/h200-llama3-8b-steps.json", "--gpu", "H200-SXM", "-o",
               str(tmp_path / "h200.yaml"), "--name", "h200-sxm", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["written"] == str(tmp_path / "h200.yaml")
    shipped = ROOT / "reader" / "calibration" / "profiles" / "h200-sxm.yaml"
    assert (tmp_path / "h200.yaml").read_text() == shipped.read_text()
