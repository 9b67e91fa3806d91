"""Record the real vLLM's verdicts on random configs, for the default suite to replay offline.

    eval "$(bash tools/vllm_env.sh all)"
    PYTHONPATH=tools python -m differential.record 0.32.0 --count 400 --seed 618

writes fixtures/differential/vllm-<version>.jsonl: a header line (release, seed, count, how it was made), then
one line per config: the config (tools/differential/configs.py) and vLLM's verdict (tools/differential/driver.py).
tests/rules/test_rules_differential.py replays them against `check`; tests/live/test_live_differential.py checks
that the real vLLM still says the same.
"""
from __future__ import annotations

import argparse
import json
import sys

from .configs import generate
from .harness import ROOT, options_for, venv_for, vllm_verdicts


def fixture_path(version: str):
    return ROOT / "fixtures" / "differential" / f"vllm-{version}.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("version")
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--seed", type=int, default=618)  # the recorded seed: proves every rule the suite requires
    args = ap.parse_args()
    venv = venv_for(args.version)
    if venv is None:
        sys.exit(f"no vLLM {args.version} environment: eval \"$(bash tools/vllm_env.sh {args.version})\" first")
    configs = generate(args.count, args.seed, options_for(args.version), args.version)
    verdicts = vllm_verdicts(venv, configs)
    header = {"vllm": args.version, "seed": args.seed, "count": args.count, "model": "fixtures/live/tiny-llama",
              "recorded_with": "tools/differential/record.py (the vLLM CPU build from tools/vllm_env.sh; its parser, "
                               "the `vllm serve` argument checks and EngineArgs.create_engine_config())"}
    path = fixture_path(args.version)
    with path.open("w") as out:
        out.write(json.dumps(header) + "\n")
        for config in configs:
            out.write(json.dumps({"config": config, "vllm": verdicts[config["id"]]}, sort_keys=True) + "\n")
    refused = sum(1 for v in verdicts.values() if v["verdict"] == "refused")
    print(f"wrote {path}: {len(configs)} configs, {refused} refused by vLLM {args.version}")


if __name__ == "__main__":
    main()
