"""`pip install vllm-reader` into a vLLM environment changes none of the packages vLLM installed (issue 26).

Each release's environment (tools/vllm_env.sh) is copied, hard-linked so the copy costs neither the disk nor the
minutes of a real one, and vllm-reader's wheel is installed into the copy as a user would: with its dependencies.
pip's own installation report (`--dry-run --report`) is the proof that nothing already there changes version;
the environment listed before and after the real install says the same. The CLI then runs in that environment.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "fixtures" / "examples" / "llama-3.1-8b-h100-chat.yaml"
LOG = ROOT / "fixtures" / "logs" / "live" / "vllm-0.18.0-cpu-serve.log"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    return next(out.glob("vllm_reader-*.whl"))


def copy_of(venv: Path, where: Path) -> Path:
    """The environment at a new path, its files hard-linked: pip replaces a file by writing a new one and removes
    one by unlinking it, so the original stays as it was. A copy on another file system is a plain copy."""
    copy = where / venv.name
    linked = subprocess.run(["cp", "-al", str(venv), str(copy)], capture_output=True, text=True)
    if linked.returncode != 0:
        shutil.rmtree(copy, ignore_errors=True)
        subprocess.run(["cp", "-a", str(venv), str(copy)], check=True)
    return copy


def clean_env() -> dict[str, str]:
    # the copy's own packages only: not the checkout (PYTHONPATH) and not a user's site folder
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    return {**env, "PYTHONNOUSERSITE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def run(args: list, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=clean_env(), capture_output=True, text=True,
                          timeout=timeout)


def installed(python: Path, cwd: Path) -> dict[str, str]:
    listing = run([python, "-m", "pip", "list", "--format", "json"], cwd)
    assert listing.returncode == 0, listing.stderr
    return {canonical(p["name"]): p["version"] for p in json.loads(listing.stdout)}


def canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


# Which import packages each distribution wrote, for the ones that share one with a newly installed distribution:
# typer-slim, for one, writes the `typer` package that full typer (vLLM's) already wrote, without a version change.
SHARED_PACKAGES = r"""
import json, sys
from importlib import metadata
new = set(json.loads(sys.argv[1]))
owners = {}
for dist in metadata.distributions():
    name = dist.metadata["Name"].lower().replace("_", "-").replace(".", "-")
    for top in {f.parts[0] for f in dist.files or [] if f.parts}:
        if top not in ("..", "__pycache__") and not top.endswith((".dist-info", ".data")):
            owners.setdefault(top, set()).add(name)
print(json.dumps({top: sorted(names) for top, names in owners.items() if len(names) > 1 and names & new}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("release", ["vllm_032", "vllm_018"])
def test_installing_vllm_reader_beside_vllm_changes_no_package_and_the_cli_runs_there(release, request, wheel,
                                                                                        tmp_path):
    venv = copy_of(request.getfixturevalue(release), tmp_path)
    python = venv / "bin" / "python"
    before = installed(python, tmp_path)
    assert "vllm" in before and "vllm-reader" not in before

    report_path = tmp_path / "report.json"
    dry = run([python, "-m", "pip", "install", "--dry-run", "--report", report_path, wheel], tmp_path)
    assert dry.returncode == 0, dry.stderr
    would_install = {canonical(item["metadata"]["name"]): item["metadata"]["version"]
                     for item in json.loads(report_path.read_text())["install"]}
    changed = {name: f"{before[name]} -> {version}" for name, version in would_install.items() if name in before}
    assert changed == {}, f"pip would change packages vLLM installed: {changed}"
    assert "vllm-reader" in would_install

    real = run([python, "-m", "pip", "install", wheel], tmp_path)
    assert real.returncode == 0, real.stderr
    after = installed(python, tmp_path)
    assert {name: after.get(name) for name in before} == before
    assert set(after) - set(before) == set(would_install)
    shared = run([python, "-c", SHARED_PACKAGES, json.dumps(sorted(would_install))], tmp_path)
    assert shared.returncode == 0 and json.loads(shared.stdout) == {}, shared.stdout + shared.stderr

    cli = venv / "bin" / "vllm-reader"
    check = run([cli, "check", CONFIG], tmp_path, timeout=120)
    assert check.returncode == 0 and "passed" in check.stdout, check.stdout + check.stderr
    log = run([cli, "read-log", LOG], tmp_path, timeout=120)
    assert log.returncode == 0 and "vLLM log:" in log.stdout, log.stdout + log.stderr
    observe = run([cli, "observe", "--help"], tmp_path, timeout=120)
    assert observe.returncode == 0 and "Usage:" in observe.stdout, observe.stdout + observe.stderr
    probe = run([python, "-c", "import reader; print(reader.__file__)"], tmp_path)
    assert probe.stdout.startswith(str(venv))  # the installed copy ran, not the checkout
