"""The command line's promises: exit codes 0/1/2, one-paragraph errors, never a traceback."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "fixtures" / "examples" / "llama-3.1-8b-h100-chat.yaml"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reader", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_diagnose_a_bundled_example_succeeds():
    result = run("diagnose", str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    assert "meta-llama/Llama-3.1-8B-Instruct" in result.stdout


@pytest.mark.parametrize("text, words", [
    ("model: m\nmax_num_seqs: [1\n", "malformed YAML"),
    ("model: m\nmax_num_sequences: 4\n", "Did you mean '--max-num-seqs'"),
    ("model: m\nmax_num_seqs: lots\n", "integer"),
    ("model: meta-llama/Llama-3.1-8B\nmax-model-len: 4096\n", None),
])
def test_bad_input_exits_2_with_one_paragraph_and_no_traceback(tmp_path, text, words):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    result = run("diagnose", str(path), "--gpu", "H100-SXM")
    if words is None:
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert words in result.stderr
    assert result.stderr.count("\n") == 1  # one paragraph
    assert str(path) in result.stderr


def test_unknown_gpu_and_missing_file_exit_2(tmp_path):
    unknown = run("diagnose", str(EXAMPLE), "--gpu", "H1000")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    missing = run("diagnose", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_usage_errors_exit_2():
    assert run("diagnose").returncode == 2
    assert run("no-such-command").returncode == 2


def test_debug_shows_the_traceback(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("model: m\nmax_num_seqs: [1\n")
    result = run("--debug", "diagnose", str(path))
    assert result.returncode != 0 and "Traceback" in result.stderr
