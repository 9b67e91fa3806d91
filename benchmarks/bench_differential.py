"""Agreement of `vllm-reader check` with the real vLLM over fresh random configs.

    eval "$(bash tools/vllm_env.sh all)"
    python benchmarks/bench_differential.py [--version 0.32.0] [--count 1000] [--seed N]

The configs come from tools/differential/configs.py (a new seed each run unless given; the seed is printed so
a run can be repeated). vLLM's verdicts come from its own parser and EngineArgs.create_engine_config() in one
process (tools/differential/driver.py); ours from `check` in this one. Prints the agreement, the agreement
outside the CPU-only refusals listed in rules/differential/known-disagreements.yaml, and every disagreement.
Target: at least 99.5% outside the listed ones.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from differential.configs import generate  # noqa: E402
from differential.harness import compare, describe, options_for, venv_for, vllm_verdicts  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default="0.32.0")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    venv = venv_for(args.version)
    if venv is None:
        sys.exit(f"no vLLM {args.version} environment: eval \"$(bash tools/vllm_env.sh {args.version})\" first")
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    configs = generate(args.count, seed, options_for(args.version), args.version)
    t0 = time.perf_counter()
    verdicts = vllm_verdicts(venv, configs)
    t1 = time.perf_counter()
    result = compare(configs, verdicts, args.version)
    t2 = time.perf_counter()
    refused = sum(1 for v in verdicts.values() if v["verdict"] == "refused")
    print(f"vLLM {args.version}, {len(configs)} configs (seed {seed}; {refused} refused by vLLM): "
          f"agreement {result['agreement']:.2%} ({result['agree']}/{len(configs)}), "
          f"{result['explained']} listed CPU-only disagreements, {result['unexplained']} unlisted; "
          f"agreement outside the listed: {result['agreement_outside_known']:.2%}")
    print(f"time: vLLM {t1 - t0:.0f} s (one process), check {t2 - t1:.1f} s")
    for row in result["rows"]:
        print(describe(row))
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))


if __name__ == "__main__":
    main()
