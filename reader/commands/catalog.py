"""`vllm-reader catalog` (placeholder until its issue lands)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("catalog", hidden=True)
    def _placeholder() -> None:
        """Not built yet."""
        raise typer.Exit(3)
