"""The wheel carries its data: the installed CLI works from any directory, outside the checkout."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(wheels), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    wheel = next(wheels.glob("vllm_reader-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("reader/_data/rules/flags/v0.18.0.json") for n in names)
    assert any(n.startswith("reader/_data/templates/") for n in names)
    # the model catalog is a folder of config.json files with their sources, all shipped
    folders = [p.relative_to(ROOT).as_posix() for p in (ROOT / "reader" / "catalog" / "models").glob("*/*/*")]
    assert folders and set(folders) <= set(names)
    assert any(n.endswith("entry_points.txt") for n in names)
    entry_points = next(zipfile.ZipFile(wheel).read(n).decode() for n in names if n.endswith("entry_points.txt"))
    assert "vllm-reader = reader.entry:main" in entry_points

    target = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                              str(wheel)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    example = ROOT / "fixtures" / "examples" / "llama-3.1-8b-h100-chat.yaml"
    env = {**os.environ, "PYTHONPATH": str(target)}
    result = subprocess.run([sys.executable, "-c", "from reader.cli import main; main()", "diagnose", str(example)],
                            cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    listing = subprocess.run([sys.executable, "-c", "from reader.cli import main; main()", "catalog", "models",
                              "--format", "json"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert listing.returncode == 0, listing.stderr
    shipped = {f"{p.parent.parent.name}/{p.parent.name}"
               for p in (ROOT / "reader" / "catalog" / "models").glob("*/*/source.yaml")}
    assert {m["id"] for m in __import__("json").loads(listing.stdout)["models"]} == shipped
    probe = subprocess.run([sys.executable, "-c", "import reader; print(reader.__file__)"], cwd=elsewhere, env=env,
                           capture_output=True, text=True)
    assert probe.stdout.strip().startswith(str(target))  # the installed copy ran, not the checkout
