"""The pre-commit hook and the GitHub Action: the hook's entry runs exactly as pre-commit runs it."""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from _rules_helpers import REPO, write

HOOKS = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
HOOK = next(h for h in HOOKS if h["id"] == "vllm-reader-check")


def entry_command() -> list[str]:
    """The hook's entry as pre-commit builds it; the console script, or the module when it is not on PATH."""
    words = shlex.split(HOOK["entry"])
    assert words[:2] == ["vllm-reader", "check"]
    script = Path(sys.executable).with_name("vllm-reader")
    if script.exists():
        return [str(script), *words[1:]]
    if shutil.which("vllm-reader"):
        return words
    return [sys.executable, "-m", "reader", *words[1:]]


def run_hook(files: list[str], args: list[str] | None = None) -> subprocess.CompletedProcess:
    # pre-commit runs: entry + args + the matching changed files
    return subprocess.run([*entry_command(), *(args or HOOK.get("args", [])), *files], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_hook_definition():
    assert HOOK["language"] == "python" and HOOK["pass_filenames"] is True
    assert HOOK["entry"] == "vllm-reader check"


@pytest.mark.parametrize("path, matches", [
    ("vllm-serve.yaml", True), ("deploy/vllm.yml", True), ("k8s/values-vllm.yaml", True),
    ("scripts/start_vllm.sh", True), ("configs/vllm_config.json", True), ("deploy/vllm/llama.yaml", True),
    ("VLLM/Serve.YAML", True), ("docker-compose.yml", False), ("deploy/values.yaml", False),
    ("vllm-notes.md", False), ("src/vllm_helper.py", False),
])
def test_files_pattern(path, matches):
    assert bool(re.search(HOOK["files"], path)) is matches


def test_hook_entry_exit_code_is_the_highest_over_the_files(tmp_path):
    clean = write(tmp_path, "vllm-clean.sh", "vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 64\n")
    broken = write(tmp_path, "vllm-broken.sh", "vllm serve meta-llama/Llama-3.1-8B --swap-space 4\n")
    assert run_hook([clean], ["--vllm-version", "0.18.0"]).returncode == 0
    proc = run_hook([clean, broken], ["--vllm-version", "0.18.0"])
    assert proc.returncode == 1, proc.stderr
    assert "VR102" in proc.stdout and "vllm-broken.sh:1" in proc.stdout
    proc = run_hook([clean, broken, str(tmp_path / "vllm-gone.yaml")], ["--vllm-version", "0.18.0"])
    assert proc.returncode == 2
    assert "no such file" in proc.stderr and "Traceback" not in proc.stderr


def test_action_inputs_and_steps():
    assert ACTION["runs"]["using"] == "composite"
    inputs = ACTION["inputs"]
    assert inputs["config"]["required"] is True
    for name in ("vllm-version", "fail-on", "format", "upload-sarif", "sarif-file"):
        assert name in inputs
    assert inputs["fail-on"]["default"] == "error"
    steps = ACTION["runs"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/setup-python@") for u in uses)
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    install = next(s for s in steps if s.get("name") == "Install vllm-reader")
    assert "GITHUB_ACTION_PATH" in install["run"]
    check = next(s for s in steps if s.get("id") == "check")
    assert "--format sarif" in check["run"] and "vllm-reader check" in check["run"]
    # inputs reach the shell through env, never interpolated into the script (no injection)
    assert "${{" not in check["run"]
    gate = steps[-1]
    assert "exit 1" in gate["run"]


def test_action_shell_runs_the_gate(tmp_path):
    """The check step's script, run with bash as the runner would, writes SARIF and the exit code."""
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    check = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "check")
    config = write(tmp_path, "vllm.sh", "vllm serve meta-llama/Llama-3.1-8B --swap-space 4\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "vllm-reader").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m reader \"$@\"\n")
    (bindir / "vllm-reader").chmod(0o755)
    output = tmp_path / "gh_output"
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "GITHUB_OUTPUT": str(output), "VR_CONFIG": config,
           "VR_VERSION": "0.18.0", "VR_FAIL_ON": "error", "VR_FORMAT": "text", "VR_GPU": "", "VR_GPUS": "",
           "VR_ARGS": "", "VR_SARIF": str(tmp_path / "out.sarif"), "PYTHONPATH": str(REPO)}
    proc = subprocess.run(["bash", "-c", check["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "VR102" in proc.stdout
    assert output.read_text().strip() == "exit-code=1"
    sarif = (tmp_path / "out.sarif").read_text()
    assert '"version": "2.1.0"' in sarif and "VR102" in sarif


def _readme_action_inputs() -> list[tuple[str, str, str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("| input | default | what it is |")
    rows = text[start:].split("\n\n", 1)[0].splitlines()[2:]
    return [tuple(cell.strip() for cell in row.strip("|").split(" | ")) for row in rows]


def test_the_readme_lists_every_action_input_as_action_yml_defines_it():
    expected = []
    for name, spec in ACTION["inputs"].items():
        default = spec.get("default")
        shown = "(required)" if spec.get("required") and default is None else (f"`{default}`" if default else "")
        expected.append((f"`{name}`", shown, " ".join(spec["description"].split())))
    assert _readme_action_inputs() == expected
