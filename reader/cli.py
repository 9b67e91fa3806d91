"""The `vllm-reader` command line.

Each command lives in reader/commands/<name>.py and registers itself on the app. Command
modules import only typer and the standard library at the top; everything heavy is imported
inside the command, so `vllm-reader check` starts fast.
"""
from __future__ import annotations

import importlib
import sys

import typer

from .errors import EXIT_BAD_INPUT

COMMAND_MODULES = (
    "diagnose", "check", "explain", "rules", "capacity", "step_time",
    "simulate", "replay", "sweep", "catalog", "skill",
)

EXIT_INTERNAL = 3

app = typer.Typer(
    name="vllm-reader",
    help="Reads a vLLM serving config before you deploy it: what it will do, what limits it, what to change.\n\n"
    "Exit codes: 0 passed, 1 findings at or above --fail-on, 2 bad input, 3 internal error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_state = {"debug": False}


@app.callback()
def _global_options(
    debug: bool = typer.Option(False, "--debug", help="Show a traceback for errors (for bug reports)."),
) -> None:
    _state["debug"] = debug


def debug_enabled() -> bool:
    return _state["debug"]


for _name in COMMAND_MODULES:
    _module = importlib.import_module(f"reader.commands.{_name}")
    _module.register(app)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: every failure becomes a one-paragraph message and a stable exit code.

    Typer handles usage errors itself (exit 2, with the usage line); a ReaderError from a
    command is bad input (exit 2); anything else is our bug (exit 3, traceback with --debug).
    """
    from .errors import ReaderError

    args = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in args
    try:
        app(args=args, prog_name="vllm-reader")
    except ReaderError as err:
        if debug:
            raise
        print(err.render(), file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as err:
        if debug:
            raise
        print(f"internal error in vllm-reader: {type(err).__name__}: {err}. "
              "Run again with --debug for a traceback, and please report it.", file=sys.stderr)
        sys.exit(EXIT_INTERNAL)
