#!/usr/bin/env python3
"""Record the real vLLM CPU server's logs that fixtures/logs/live/ holds (start-up, stats, refusals).

Usage: eval "$(bash tools/vllm_env.sh all)"; python tools/record_vllm_logs.py [0.32.0 0.18.0] [--only NAME]
Each scenario (tests/live/_log_scenarios.py) starts a server with dummy weights on 127.0.0.1, sends
bounded traffic where it starts, stops it, and writes the whole log to
fixtures/logs/live/vllm-<version>-cpu-<scenario>.log.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.live._log_scenarios import SCENARIOS, fixture_path, record  # noqa: E402
from tests.live._server import venv_for  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", default=["0.32.0", "0.18.0"])
    parser.add_argument("--only", help="record only this scenario")
    args = parser.parse_args()
    for version in args.versions:
        venv = venv_for(version)
        if venv is None:
            print(f"no vLLM {version} environment (run tools/vllm_env.sh and export what it prints)", file=sys.stderr)
            return 2
        for scenario in SCENARIOS:
            if args.only and scenario.name != args.only:
                continue
            path = fixture_path(version, scenario)
            record(venv, scenario, path)
            print(f"{path.relative_to(ROOT)}: {len(path.read_text(errors='replace').splitlines())} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
