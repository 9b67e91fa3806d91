"""A quick look at agreement: python -m tools... is not a package; run as
    PYTHONPATH=tools python -m differential VERSION COUNT SEED
(the vLLM environment exported by tools/vllm_env.sh)."""
from __future__ import annotations

import json
import sys

from .configs import generate
from .harness import compare, describe, options_for, venv_for, vllm_verdicts


def main() -> None:
    version, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    venv = venv_for(version)
    if venv is None:
        sys.exit(f"no vLLM {version} environment: eval \"$(bash tools/vllm_env.sh {version})\" first")
    configs = generate(count, seed, options_for(version), version)
    result = compare(configs, vllm_verdicts(venv, configs), version)
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    for row in result["rows"]:
        print(describe(row))


main()
