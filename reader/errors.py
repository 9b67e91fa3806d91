"""The one error type a user sees.

Every bad input (unreadable file, malformed YAML, unknown flag, wrong type, impossible value,
unknown model or GPU) becomes a ReaderError. The CLI prints its one-paragraph message and exits
with code 2; a traceback is shown only with --debug.
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2


class ReaderError(Exception):
    """Bad input, described so the user can fix it without reading our code."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        key: str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.key = key
        self.line = line
        self.hint = hint

    def where(self) -> str:
        parts = []
        if self.file:
            parts.append(self.file + (f":{self.line}" if self.line else ""))
        elif self.line:
            parts.append(f"line {self.line}")
        if self.key:
            parts.append(f"key '{self.key}'")
        return ", ".join(parts)

    def render(self) -> str:
        """One paragraph: where, what, and how to fix it."""
        where = self.where()
        text = f"error: {where}: {self.message}" if where else f"error: {self.message}"
        if self.hint:
            text += f" {self.hint}"
        return " ".join(text.split())


EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


# pydantic's type errors by the kind of value they wanted: "float_parsing" -> "expects a number, got 'abc'"
_EXPECTED = {"float": "a number", "int": "a whole number", "bool": "true or false", "string": "text",
             "dict": "a mapping", "list": "a list"}


def validation_words(item: dict) -> str:
    """One pydantic error item's message as a sentence of ours: a validator's own sentence without the "Value
    error, " pydantic puts before it, and a wrong type as what was expected and what came."""
    kind, _, how = str(item.get("type", "")).partition("_")
    if kind in _EXPECTED and how in ("parsing", "type"):
        return f"expects {_EXPECTED[kind]}, got {item.get('input')!r}"
    msg = str(item.get("msg", "invalid value"))
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            return msg[len(prefix):]
    return msg


def internal_error_message(err: BaseException) -> str:
    """The one paragraph for an exception that is our bug, not the user's input (exit 3).

    Only the exception's first line is shown: a library's multi-line dump (pydantic's validation report) is
    for the bug report, which --debug prints in full."""
    first = next((line.strip() for line in str(err).splitlines() if line.strip()), "")
    detail = f": {first[:200]}" if first else ""
    return (f"internal error in vllm-reader ({type(err).__name__}{detail}). "
            "Run again with --debug for a traceback, and please report it.")


def outcome(err: BaseException) -> tuple[int, str]:
    """The exit code and the one paragraph for an exception a command raised: the single place every command
    (inside the typer app, reader/cli.py, and around it) turns one into a message."""
    if isinstance(err, ReaderError):
        return EXIT_BAD_INPUT, err.render()
    if isinstance(err, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "interrupted"
    return EXIT_INTERNAL, internal_error_message(err)


def did_you_mean(names: list[str], notes: dict[str, str] | None = None) -> str:
    """" Did you mean 'a', 'b' or 'c'?" (with a leading space, to end a sentence), or "" with nothing to suggest.

    `notes` adds a word after a name: {"VR201": "batched-tokens-below-max-model-len"} -> 'VR201' (batched-...)."""
    names = list(dict.fromkeys(names))
    if not names:
        return ""
    notes = notes or {}
    quoted = [f"'{n}'" + (f" ({notes[n]})" if n in notes else "") for n in names]
    joined = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" Did you mean {joined}?"
