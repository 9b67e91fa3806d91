"""Without --vllm-version, diagnose takes the release from the evidence given beside the config: the calibration
profile's, then the log's (README, "Without a version"); a config's own image tag or comment block still comes
first, and --vllm-version before all."""
from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "fixtures" / "live" / "metrics" / "bench" / "serve.sh"
PROFILE = ROOT / "fixtures" / "calibration" / "cpu-tiny-llama" / "profile.yaml"
MODEL = "fixtures/live/tiny-llama/config.json"


def diagnose(*args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "reader", "diagnose", str(SCRIPT), "--model", MODEL,
                             "--no-whatifs", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_release_comes_from_the_log(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(gzip.open(SCRIPT.parent / "server.log.gz", "rt").read())
    assert "vLLM 0.32.0, V1 engine (from the log)" in diagnose("--log", str(log))


def test_the_release_comes_from_the_calibration_profile():
    assert "vLLM 0.32.0, V1 engine (from the calibration profile)" in diagnose("--calibration", str(PROFILE))


def test_the_version_given_comes_first():
    assert "vLLM 0.18.0, V1 engine (version given)" in diagnose("--calibration", str(PROFILE), "--vllm-version",
                                                                "0.18.0")
