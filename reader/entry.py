"""Console entry point.

typer imports `rich` whenever it is installed (~100 ms), only to pretty-print help, which this CLI
turns off. `vllm-reader check` runs on every commit, so the entry point hides rich from typer, and
runs a plainly written `check` without typer at all (reader/commands/check_fast.py).
Library users who import reader.cli themselves are unaffected.
"""
from __future__ import annotations

import os
import sys


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["check"]:
        from .commands.check_fast import fast_check

        code = fast_check(args[1:])
        if code is not None:
            # The gate is done: skip tearing down every module and object (tens of ms of a cold start).
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    if "rich" not in sys.modules:
        sys.modules["rich"] = None  # type: ignore[assignment]  # typer then takes its plain path
    from .cli import main as cli_main

    cli_main()
