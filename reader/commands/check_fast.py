"""`vllm-reader check` without typer: the pre-commit and CI gate starts on every commit, and typer
with click is a third of its start-up. The entry point tries this parser first; any argument list
it does not take as plainly valid (help, an unknown or misspelt option, a bad value, options after
a config, `--`, `--debug`) goes to the typer command instead, which owns every message and usage
error. tests/cli/test_cli_check_fast.py keeps the options of the two in step and their outputs equal.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional

from ..errors import outcome


class _NotPlain(Exception):
    """The arguments need the full command line (help, or an error to report)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print usage and exit: leave that to typer
        raise _NotPlain(message)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="vllm-reader check", add_help=False, allow_abbrev=False)
    p.add_argument("configs", nargs="+")
    p.add_argument("--vllm-version")
    p.add_argument("--format", "-f", dest="fmt", default="text")
    p.add_argument("--fail-on", default="error")
    p.add_argument("--gpu")
    p.add_argument("--gpus", type=_positive)
    p.add_argument("--model")
    p.add_argument("--set", dest="set_values", action="append")
    p.add_argument("--pick", type=_positive)
    p.add_argument("--usage-context", default="serve")
    p.add_argument("--ignore", action="append")
    p.add_argument("--rule", action="append")
    p.add_argument("--verbose", "-v", action="store_true")
    p.add_argument("--output", "-o")
    return p


def parse(args: list[str]) -> Optional[dict]:
    """The check options, or None when the typer command should handle these arguments."""
    if any(a in ("--help", "-h", "--debug", "--") for a in args):
        return None
    try:
        ns = parser().parse_args(args)
    except _NotPlain:
        return None
    if any(a.startswith("-") for a in ns.configs):
        return None
    return vars(ns)


def fast_check(args: list[str]) -> Optional[int]:
    """Run `check` with these arguments (those after the word `check`) and return its exit code, or
    None, having done nothing, when they are not plain."""
    options = parse(args)
    if options is None:
        return None
    from .check_run import run_check

    try:
        return run_check(**options)
    except (KeyboardInterrupt, Exception) as err:  # the same paragraph and code the typer app gives
        code, text = outcome(err)
        print(text, file=sys.stderr)
        return code
