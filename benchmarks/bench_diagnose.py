"""Wall time of `vllm-reader diagnose` on every bundled example (target: <= 5 s each on this 2-core machine).

    python benchmarks/bench_diagnose.py [--runs 3] [--examples fixtures/examples/a.yaml ...]

Each run is a fresh process, as a user starts it (load, check, capacity, simulation, what-ifs in parallel
processes, rendering). Prints min / median per example and the machine's load average, since a shared
machine slows every figure.
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
TARGET_S = 5.0


def run_once(example: str) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "reader", "diagnose", example, "-o", os.devnull],
                          cwd=REPO, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"diagnose {example} failed ({proc.returncode}): {proc.stderr}")
    return elapsed


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--examples", nargs="*")
    args = parser.parse_args(argv)
    examples = args.examples or sorted(str(p.relative_to(REPO)) for p in (REPO / "fixtures" / "examples").iterdir()
                                       if p.is_file())
    compileall.compile_dir(str(REPO / "reader"), quiet=1)  # as `pip install` does; see bench_check.py
    print(f"load average before: {os.getloadavg()[0]:.2f}, cpus: {os.cpu_count()}")
    best = {}
    for example in examples:
        times = [run_once(example) for _ in range(args.runs)]
        best[example] = min(times)
        flag = "" if min(times) <= TARGET_S else "  OVER TARGET"
        print(f"{example:60s} min {min(times):5.2f} s  median {statistics.median(times):5.2f} s{flag}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return best


if __name__ == "__main__":
    main()
