"""`vllm-reader skill`: (re)generate outputs/skill-vllm-scheduler-reader.md."""
from __future__ import annotations

from typing import Annotated, Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("skill")
    def skill(
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Where to write (default: "
                                                      "outputs/skill-vllm-scheduler-reader.md under the current "
                                                      "directory; - for stdout).")] = None,
        check: Annotated[bool, typer.Option("--check", help="Exit 1 if the file on disk is not what would be "
                                            "generated now.")] = False,
    ) -> None:
        """Generate the skill document from rules/ and templates/ (with a worked diagnosis)."""
        from pathlib import Path

        from ..render.skill import SKILL_NAME, generate

        text = generate()
        target = Path(output) if output and output != "-" else Path.cwd() / "outputs" / SKILL_NAME
        if check:
            current = target.read_text() if target.is_file() else ""
            if current != text:
                typer.echo(f"{target} is stale: run `vllm-reader skill`", err=True)
                raise typer.Exit(1)
            return
        if output == "-":
            typer.echo(text, nl=False)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        typer.echo(f"wrote {target}")
