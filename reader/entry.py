r"""Console entry point.

`vllm-reader check` runs on every commit, so a cold start must stay short (README, Speed: at most 0.5 s) with one
parser, typer's: reader/cli.py registers only the command being run, and each command imports its own modules
inside its function. What is left here is start-up and shutdown around the app:

- typer on the click package (seen with 0.20.0; from 0.26 typer carries its own click) escapes help text for
  rich whenever rich is installed, though this CLI turns rich markup off: `check --help` then shows
  `\[required]`. Hiding rich sends it down its plain path. Library users who import reader.cli themselves are
  unaffected.
- `check` ends without tearing down every module and object (tens of ms of a cold start); it starts no threads or
  processes, so nothing is left unfinished.
"""
from __future__ import annotations

import os
import sys


def main() -> None:
    if "rich" not in sys.modules:
        sys.modules["rich"] = None  # type: ignore[assignment]
    from .cli import main as cli_main

    if sys.argv[1:2] != ["check"]:
        cli_main()
        return
    try:
        cli_main()
        code = 0
    except SystemExit as done:
        code = _exit_code(done)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _exit_code(done: SystemExit) -> int:
    if done.code is None or isinstance(done.code, int):
        return done.code or 0
    print(done.code, file=sys.stderr)  # how the interpreter reports a message given to sys.exit()
    return 1
