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


def internal_error_message(err: BaseException) -> str:
    """The one paragraph for an exception that is our bug, not the user's input (exit 3)."""
    return (f"internal error in vllm-reader: {type(err).__name__}: {err}. "
            "Run again with --debug for a traceback, and please report it.")
