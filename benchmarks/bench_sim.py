"""Speed of the scheduler simulator (issue 5, item 8).

10,000 requests, prompts 900..1100 tokens, outputs 180..220 tokens, closed loop with 256 in flight
(`vllm bench serve --max-concurrency 256 --request-rate inf`), vLLM 0.32.0 rules, max_num_seqs 256,
max_num_batched_tokens 8192, 30,000 KV blocks of 16 tokens. The step-time function is a cheap
affine one, so the figure measures the simulator, not a step-time model. Target: <= 3 s on one core.

    python benchmarks/bench_sim.py [--requests N] [--repeat R] [--prefix-caching on|off|both] [--exact]

Prints wall time (and CPU time of this process: other work on the machine inflates the wall time
but hardly the CPU time) and request-steps per second (a request-step = one request scheduled in
one step). The simulation is single-threaded.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from reader.sim.api import SchedulerSettings, make_workload, resolve_settings  # noqa: E402
from reader.sim.engine import run_v1  # noqa: E402


def step_time(batch) -> float:
    return 0.008 + 2e-5 * batch.num_tokens


def workload(n: int) -> dict:
    return {"num_requests": n, "seed": 0, "arrival": {"process": "closed", "concurrency": 256},
            "prompt_len": {"dist": "uniform", "low": 900, "high": 1100},
            "output_len": {"dist": "uniform", "low": 180, "high": 220}}


def run_once(n: int, caching: bool, fast: bool) -> tuple[float, int, int]:
    settings = SchedulerSettings(vllm_version="0.32.0", max_num_seqs=256, max_num_batched_tokens=8192,
                                 num_gpu_blocks=30000, enable_prefix_caching=caching)
    wl = make_workload(workload(n))
    cfg = resolve_settings(settings, wl)
    t0 = time.perf_counter()
    c0 = time.process_time()
    run = run_v1(cfg, wl, step_time, fast_path=fast)
    cpu = time.process_time() - c0
    wall = time.perf_counter() - t0
    request_steps = int(sum(run.step_seqs))
    return wall, cpu, request_steps, len(run.step_seqs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--prefix-caching", choices=["on", "off", "both"], default="both")
    ap.add_argument("--exact", action="store_true", help="disable the numpy fast path")
    args = ap.parse_args()
    modes = {"on": [True], "off": [False], "both": [False, True]}[args.prefix_caching]
    for caching in modes:
        best = best_cpu = None
        for _ in range(args.repeat):
            wall, cpu, rs, steps = run_once(args.requests, caching, not args.exact)
            best = wall if best is None else min(best, wall)
            best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
        print(f"prefix caching {'on ' if caching else 'off'}: {args.requests} requests, {steps} steps, "
              f"{rs:,} request-steps, best of {args.repeat}: {best:.2f} s wall ({best_cpu:.2f} s CPU), "
              f"{rs / best:,.0f} request-steps/s{' (exact path)' if args.exact else ''}")


if __name__ == "__main__":
    main()
