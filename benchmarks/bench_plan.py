"""Wall time of `vllm-reader plan` over four GPU types (target: about a minute on this 2-core machine), and the
"done when" check: every plan's winning config, fed back to `diagnose`, meets the SLOs it was planned for.

    python benchmarks/bench_plan.py [--runs 1] [--cases chat-8b headline ...] [--keep DIR]

Each run is a fresh process, as a user starts it, with the examples' own workloads (every request) and the
default GPU list (H100-SXM, H200-SXM, A100-80GB-SXM, L40S, plus the example's own GPU). Prints wall time, the
CPU time the plan's processes used (less sensitive than wall time to the other jobs on a shared machine), the
simulations run, the winner, and whether `check` passes and `diagnose` meets the SLOs on the written files.
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 60.0
EX = "fixtures/examples/"
# name -> plan arguments. Examples without SLOs get some; the draft-model example's config is refused by its
# release, so --vary releases it (to vLLM's default: no speculative decoding).
CASES = {
    "chat-8b": ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--workload", "chat", "--slo-ttft-p99", "1000",
                "--slo-itl-p99", "50", "--vllm-version", "0.18.0", "--price", "H100-SXM=2.49,H200-SXM=3.49,"
                "A100-80GB-SXM=1.49,L40S=0.99", "--target-rate", "20"],
    # issue 21's two runs as a new user tried them
    "qwen-32b-prices": ["--model", "Qwen/Qwen2.5-32B-Instruct", "--workload", "chat", "--slo-itl-p99", "80",
                        "--slo-ttft-p99", "2000", "--target-rate", "6", "--price",
                        "H100-SXM=2.5,H200-SXM=3.6,A100-80GB-SXM=1.8,L40S=0.9"],
    "qwen-32b-h100": ["--model", "Qwen/Qwen2.5-32B-Instruct", "--workload", "chat", "--gpus", "H100-SXM",
                      "--slo-itl-p99", "60", "--slo-ttft-p99", "3000", "--target-rate", "3"],
    "h100-chat": [EX + "llama-3.1-8b-h100-chat.yaml"],
    "l40s-16-seqs": [EX + "llama-3.1-8b-l40s-16-seqs.sh"],
    "70b-long-context": [EX + "llama-3.1-70b-2xa100-long-context.yaml", "--slo-itl-p99", "60", "--slo-ttft-p99", "3000"],
    "draft-model": [EX + "llama-3.1-8b-draft-model-v0.10.sh", "--vary", "speculative_config", "--slo-itl-p99", "40"],
    "mistral-rag": [EX + "mistral-7b-h100-unchunked-rag.yaml"],
    "qwen-32b-rag": [EX + "qwen2.5-32b-a100-rag.yaml"],
    "qwen3-summarization": [EX + "qwen3-8b-h100-small-budget.yaml", "--slo-itl-p99", "100", "--slo-ttft-p99", "120000"],
    "headline": [EX + "llama-3.3-70b-fp8-h100-128-clients.yaml"],
}


def reader(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reader", *args], cwd=REPO, capture_output=True, text=True)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(name: str, folder: Path) -> dict:
    out = folder / name
    out.mkdir(parents=True, exist_ok=True)
    cpu, started = cpu_seconds(), time.perf_counter()
    proc = reader("plan", *CASES[name], "--format", "json", "-o", str(out / "plan.json"), "--write", str(out),
                  "--no-progress")
    row = {"wall_s": time.perf_counter() - started, "cpu_s": cpu_seconds() - cpu, "rc": proc.returncode}
    if proc.returncode not in (0, 1):
        raise SystemExit(f"plan {name} failed ({proc.returncode}): {proc.stderr}")
    plan = json.loads((out / "plan.json").read_text())
    row["simulations"] = plan["counts"]["simulated"]
    w = plan["winner"]
    if w is None:
        row["winner"] = "none meets the SLOs"
        return row
    c = plan["candidates"][w["candidate"]]
    row["winner"] = (f"{w['replicas']} x {c['gpu']} TP{c['tp']}" + (f" PP{c['pp']}" if c["pp"] > 1 else "")
                     + (f" {c['changes']}" if c["changes"] else ""))
    row["check"] = reader("check", str(out / "vllm-config.yaml"), str(out / "serve.sh")).returncode == 0
    diagnosis = json.loads(reader("diagnose", str(out / "vllm-config.yaml"), "--no-whatifs", "-f", "json").stdout)
    row["diagnose_meets"] = bool(diagnosis["verdict"]["slo"]) and all(s["met"] for s in diagnosis["verdict"]["slo"])
    return row


def main(argv: list[str] | None = None) -> dict[str, list[dict]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cases", nargs="*", choices=sorted(CASES))
    parser.add_argument("--keep", help="Keep each plan's report and files in this folder.")
    args = parser.parse_args(argv)
    compileall.compile_dir(str(REPO / "reader"), quiet=1)  # as `pip install` does; see bench_check.py
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-plan-"))
    print(f"load average before: {os.getloadavg()[0]:.2f}, cpus: {os.cpu_count()}")
    results: dict[str, list[dict]] = {}
    for name in args.cases or list(CASES):
        rows = [run_once(name, folder) for _ in range(args.runs)]
        results[name] = rows
        walls = [r["wall_s"] for r in rows]
        last = rows[-1]
        flag = "" if min(walls) <= TARGET_S else "  OVER TARGET"
        verdict = ("" if "check" not in last else
                   f"  check {'ok' if last['check'] else 'FAILS'}, diagnose {'meets' if last['diagnose_meets'] else 'MISSES'}"
                   " the SLOs")
        print(f"{name:20s} wall min {min(walls):6.1f} s median {statistics.median(walls):6.1f} s  cpu "
              f"{last['cpu_s']:6.1f} s  {last['simulations']:4d} simulations  {last['winner']}{verdict}{flag}",
              flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return results


if __name__ == "__main__":
    main()
