"""Wall time of `vllm-reader calibrate` on ten bench results (target: under a minute on this 2-core machine).

    python benchmarks/bench_calibrate.py [--runs 2]

Fits the CPU deployment's profile on all ten recorded `vllm bench serve` results of one round of
fixtures/calibration/cpu-tiny-llama/bench/ (a fresh process each run, as a user starts it: reading, replaying
every result through the simulator at every step of the search, writing the profile). Prints each run's time,
the search's iterations and the machine's load average, since a shared machine slows every figure.
"""
from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "fixtures" / "calibration" / "cpu-tiny-llama"
TARGET_S = 60.0


def run_once(files: list[str], out: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "reader", "calibrate", str(FOLDER / "deployment.yaml"), "--model",
                           "fixtures/live/tiny-llama", "--device-kind", "cpu", "--bench", *files, "-o", str(out)],
                          cwd=REPO, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"calibrate failed ({proc.returncode}): {proc.stderr}")
    return elapsed


def main(argv: list[str] | None = None) -> list[float]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args(argv)
    files = sorted(str(p.relative_to(REPO)) for p in (FOLDER / "bench" / "round-1").glob("*.json"))
    assert len(files) == 10, files
    compileall.compile_dir(str(REPO / "reader"), quiet=1)  # as `pip install` does; see bench_check.py
    print(f"load average before: {os.getloadavg()[0]:.2f}, cpus: {os.cpu_count()}, files: {len(files)}")
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            out = Path(tmp) / f"p{i}.yaml"
            times.append(run_once(files, out))
            fit = yaml.safe_load(out.read_text())["fit"]
            flag = "" if times[-1] <= TARGET_S else "  OVER TARGET"
            print(f"run {i + 1}: {times[-1]:5.1f} s  ({fit['iterations']} iterations){flag}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return times


if __name__ == "__main__":
    main()
