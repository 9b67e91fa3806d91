"""Cold-start wall time of `vllm-reader check` on a corpus config (the gate runs on every commit).

    .venv/bin/python benchmarks/bench_check.py [--runs 15] [--config fixtures/corpus/...] [--stages]

Each run is a fresh process (`python -m reader check CONFIG`), as CI and pre-commit start it; the
script prints min / median / max wall seconds, and the CPU seconds the process used (user + system),
which a host shared with other work inflates far less than wall time. Target: <= 0.5 s on the
project's 2-core machine. --stages also times, in one process, the import and run stages (where the
time goes), so a regression can be traced to a module: imports dominate (pydantic and PyYAML
themselves, then typer, then building our pydantic models).
"""
from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = "fixtures/corpus/gke_gemma-3-27b-it_2xA100-40gb_deployment.yaml"

STAGES = r'''
import time
T = [("start", time.perf_counter())]
def mark(name): T.append((name, time.perf_counter()))
import pydantic, yaml; mark("import pydantic + PyYAML (the floor)")
import typer; mark("import typer (the command line)")
import reader.cli; reader.cli.register_commands(["check"]); mark("register the check command")
import typer.main
typer.main.get_command(reader.cli._app).commands["check"].make_context("check", [CONFIG])
mark("parse check's arguments (typer)")
from reader.config.load import load_deployment; mark("import reader.config.load (its pydantic models)")
from reader.config.resolve import resolve; mark("import reader.config.resolve")
from reader.rules_engine.run import check_files, CheckOptions; mark("import reader.rules_engine")
from reader.rules_engine.loader import load_rules
rules = load_rules(); mark("load rules (lock: %s)" % rules.from_lock)
report = check_files([CONFIG], CheckOptions(), rules); mark("load + resolve + check one config")
from reader.render.findings import render_text
render_text(report); mark("render text")
for (a, t0), (b, t1) in zip(T, T[1:]):
    print(f"  {b:45s} {1000 * (t1 - t0):7.1f} ms")
print(f"  {'total in process':45s} {1000 * (T[-1][1] - T[0][1]):7.1f} ms")
'''


def cold_runs(config: str, runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of each run."""
    walls, cpus = [], []
    cmd = [sys.executable, "-m", "reader", "check", config]
    # Byte-compile the package first, as `pip install` does: with PYTHONDONTWRITEBYTECODE set (as on the
    # project's machine) every run would otherwise time the compiler on each changed module.
    compileall.compile_dir(str(REPO / "reader"), quiet=1)
    subprocess.run(cmd, cwd=REPO, capture_output=True)  # warm the OS file cache once
    for _ in range(runs):
        before = os.times()
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True)
        walls.append(time.perf_counter() - t)
        after = os.times()
        cpus.append(after.children_user - before.children_user + after.children_system - before.children_system)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"check failed with exit {proc.returncode}: {proc.stderr.decode()}")
    return walls, cpus


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--config", default=DEFAULT_CONFIG)
    parser.add_argument("--stages", action="store_true")
    args = parser.parse_args(argv)
    times, cpus = cold_runs(args.config, args.runs)
    result = {"min_s": min(times), "median_s": statistics.median(times), "max_s": max(times),
              "cpu_min_s": min(cpus), "cpu_median_s": statistics.median(cpus)}
    print(f"vllm-reader check {args.config}: {args.runs} cold starts: min {result['min_s']:.3f} s, "
          f"median {result['median_s']:.3f} s, max {result['max_s']:.3f} s (target <= 0.500 s); "
          f"CPU min {result['cpu_min_s']:.3f} s, median {result['cpu_median_s']:.3f} s")
    if args.stages:
        code = STAGES.replace("CONFIG", repr(args.config))
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
        print("stages (one process):")
        print(out.stdout or out.stderr)
    return result


if __name__ == "__main__":
    main()
