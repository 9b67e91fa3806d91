"""Console entry point.

typer imports `rich` whenever it is installed (~100 ms), only to pretty-print help, which this CLI
turns off. `vllm-reader check` runs on every commit, so the entry point hides rich from typer.
Library users who import reader.cli themselves are unaffected.
"""
from __future__ import annotations

import sys


def main() -> None:
    if "rich" not in sys.modules:
        sys.modules["rich"] = None  # type: ignore[assignment]  # typer then takes its plain path
    from .cli import main as cli_main

    cli_main()
