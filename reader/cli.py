"""The `vllm-reader` command line.

Each command lives in reader/commands/<name>.py and registers itself on the app. Command
modules import only typer and the standard library at the top; everything heavy is imported
inside the command, so `vllm-reader check` starts fast.
"""
from __future__ import annotations

import importlib
import sys

import typer
from typer.core import TyperGroup

from .errors import outcome

COMMAND_MODULES = (
    "diagnose", "check", "explain", "rules", "capacity", "step_time",
    "simulate", "replay", "sweep", "plan", "catalog", "skill", "observe", "read_log", "calibrate",
)


class _CommandGroup(TyperGroup):
    """Every command runs inside this group, so bad input (a ReaderError) becomes its one paragraph and exit 2,
    and anything else our bug's paragraph and exit 3, for every caller of the app: the console script, tests
    (CliRunner) and embedders alike. Typer's own usage errors and exits pass through untouched."""

    def invoke(self, ctx):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except _ENDINGS:
            raise
        except Exception as err:
            if debug_enabled():
                raise
            code, text = outcome(err)
            typer.echo(text, err=True)
            raise typer.Exit(code) from None


def _typers_own_endings() -> tuple[type[Exception], ...]:
    """What typer and the click under it raise to end a run on purpose: an exit code, an abort, a usage error.
    From typer 0.26 on, typer carries its own copy of click, whose errors all derive from typer.TyperException;
    before, typer ran on the click package, and typer.Exit and typer.Abort were click's own classes."""
    base = getattr(typer, "TyperException", None)
    if base is None:
        import click

        base = click.ClickException
    return (typer.Exit, typer.Abort, base)


_ENDINGS = _typers_own_endings()


_app = typer.Typer(
    cls=_CommandGroup,
    name="vllm-reader",
    help="Reads a vLLM serving config before you deploy it: what it will do, what limits it, what to change.\n\n"
    "Exit codes: 0 passed, 1 findings at or above --fail-on, 2 bad input, 3 internal error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_state = {"debug": False}


@_app.callback()
def _global_options(
    debug: bool = typer.Option(False, "--debug", help="Show a traceback for errors (for bug reports)."),
) -> None:
    _state["debug"] = debug


def debug_enabled() -> bool:
    return _state["debug"]


_registered: set[str] = set()


def __getattr__(name: str) -> typer.Typer:
    """`reader.cli.app`: the app with every command (for tests and embedding)."""
    if name == "app":
        register_commands(None)
        return _app
    raise AttributeError(name)


def register_commands(argv: list[str] | None = None) -> None:
    """Register the command being run, or every command when the user asks for help.

    Typer builds a click command for every registered function at start-up (tens of ms each),
    and `check` runs on every commit: a known command name registers alone.
    """
    wanted = _command_in(argv) if argv is not None else None
    names = [wanted] if wanted else list(COMMAND_MODULES)
    for name in names:
        if name not in _registered:
            importlib.import_module(f"reader.commands.{name}").register(_app)
            _registered.add(name)


def _command_in(argv: list[str]) -> str | None:
    if any(arg in ("--help", "-h") for arg in argv):
        return None
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    if first is None:
        return None
    module = first.replace("-", "_")
    return module if module in COMMAND_MODULES else None


def main(argv: list[str] | None = None) -> None:
    """Console entry point. Typer handles usage errors itself (exit 2, with the usage line); the command group
    turns what a command raises into a message and an exit code (_CommandGroup). What is left here is what
    happens outside any command: an interrupt while typer starts, or a failure registering the commands."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        register_commands(args)
        _app(args=args, prog_name="vllm-reader")
    except (KeyboardInterrupt, Exception) as err:
        if "--debug" in args:
            raise
        code, text = outcome(err)
        print(text, file=sys.stderr)
        sys.exit(code)
