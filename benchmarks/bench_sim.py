"""Speed of the scheduler simulator (issue 5, item 8; multi-step leaps).

Two cases:

- closed: 10,000 requests, prompts 900..1100 tokens, outputs 180..220 tokens, closed loop with 256
  in flight (`vllm bench serve --max-concurrency 256 --request-rate inf`), vLLM 0.32.0 rules,
  max_num_seqs 256, max_num_batched_tokens 8192, 30,000 KV blocks of 16 tokens. The step-time
  function is a cheap affine one, so the figure measures the simulator, not a step-time model.
  Timed: the engine run (`run_v1`), without the metrics summary.
- chat: fixtures/examples/llama-3.1-8b-h100-chat.yaml as `vllm-reader diagnose` builds it (preset
  chat: 1,000 requests, Poisson 5 req/s, lognormal prompts median 600 / outputs median 250, 30% of
  each prompt shared; Llama-3.1-8B on one H100 with the real step-time model, vLLM 0.18.0 rules).
  Timed: `Scenario.run(mode)`, i.e. simulate() with its summary, for each mode given.

    python benchmarks/bench_sim.py [--case closed|chat|all] [--modes chunked,naive] [--requests N]
                                   [--repeat R] [--prefix-caching on|off|both] [--no-leaps] [--exact]

Prints the best wall time of R runs (and CPU time of this process: other work on the machine
inflates the wall time but hardly the CPU time), engine steps and request-steps per second (a
request-step = one request scheduled in one step), and the load average before and after.
--no-leaps runs every decode step on its own; --exact also walks the running batch one request at
a time (no numpy fast path). The simulation is single-threaded.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from reader.sim.api import SchedulerSettings, make_workload, resolve_settings  # noqa: E402
from reader.sim.engine import run_mode, run_v1  # noqa: E402


def step_time(batch) -> float:
    return 0.008 + 2e-5 * batch.num_tokens


def workload(n: int) -> dict:
    return {"num_requests": n, "seed": 0, "arrival": {"process": "closed", "concurrency": 256},
            "prompt_len": {"dist": "uniform", "low": 900, "high": 1100},
            "output_len": {"dist": "uniform", "low": 180, "high": 220}}


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def best_of(repeat: int, fn):
    best_wall = best_cpu = None
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        c0 = time.process_time()
        out = fn()
        cpu = time.process_time() - c0
        wall = time.perf_counter() - t0
        best_wall = wall if best_wall is None else min(best_wall, wall)
        best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
    return best_wall, best_cpu, out


def line(label: str, wall: float, cpu: float, steps: int, request_steps: int, repeat: int, path: str) -> str:
    return (f"{label}: {steps:,} steps, {request_steps:,} request-steps, best of {repeat}: {wall:.3f} s wall "
            f"({cpu:.3f} s CPU), {steps / wall:,.0f} steps/s, {request_steps / wall:,.0f} request-steps/s{path}")


def closed(args, path: str) -> None:
    modes = {"on": [True], "off": [False], "both": [False, True]}[args.prefix_caching]
    fast = not args.exact
    leaps = not (args.no_leaps or args.exact)
    for caching in modes:
        settings = SchedulerSettings(vllm_version="0.32.0", max_num_seqs=256, max_num_batched_tokens=8192,
                                     num_gpu_blocks=30000, enable_prefix_caching=caching)
        wl = make_workload(workload(args.requests))
        cfg = resolve_settings(settings, wl)
        before = load()
        wall, cpu, run = best_of(args.repeat, lambda: run_v1(cfg, wl, step_time, fast_path=fast, leaps=leaps))
        rs = int(run.step_seqs.array().sum())
        print(line(f"closed, {args.requests} requests, prefix caching {'on ' if caching else 'off'}", wall, cpu,
                   len(run.step_seqs), rs, args.repeat, path) + f"; load {before} -> {load()}")


def chat(args, path: str) -> None:
    from reader.config.load import load_deployment
    from reader.config.resolve import resolve
    from reader.diagnose.scenario import build_scenario
    from reader.sim.api import simulate

    sc = build_scenario(resolve(load_deployment(os.path.join(ROOT, "fixtures", "examples",
                                                             "llama-3.1-8b-h100-chat.yaml"))))
    fast = not args.exact
    leaps = not (args.no_leaps or args.exact)
    cfg = resolve_settings(sc.settings, sc.workload)
    for mode in args.modes.split(","):
        before = load()
        wall, cpu, _ = best_of(args.repeat, lambda: simulate(sc.settings, sc.workload, sc.step_time, mode=mode,
                                                             seed=sc.seed, slos_ms=sc.slos_ms or None,
                                                             fast_path=fast, leaps=leaps))
        run = run_mode(cfg, sc.workload, sc.step_time, mode, seed=sc.seed, fast_path=fast, leaps=leaps)
        rs = int(run.step_seqs.array().sum())
        print(line(f"chat, {mode}", wall, cpu, len(run.step_seqs), rs, args.repeat, path) + f"; load {before} -> {load()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=["closed", "chat", "all"], default="all")
    ap.add_argument("--modes", default="chunked,naive", help="chat case: modes to run (comma-separated)")
    ap.add_argument("--requests", type=int, default=10_000, help="closed case: number of requests")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--prefix-caching", choices=["on", "off", "both"], default="both", help="closed case")
    ap.add_argument("--no-leaps", action="store_true", help="run every decode step on its own")
    ap.add_argument("--exact", action="store_true", help="no leaps and no numpy fast path")
    args = ap.parse_args()
    path = " (exact path)" if args.exact else " (no leaps)" if args.no_leaps else ""
    if args.case in ("closed", "all"):
        closed(args, path)
    if args.case in ("chat", "all"):
        chat(args, path)


if __name__ == "__main__":
    main()
