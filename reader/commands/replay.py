"""`vllm-reader replay`: run an oracle scenario through the simulated scheduler, write its trace."""
from __future__ import annotations

from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("replay")
    def replay(
        scenario: str = typer.Argument(..., help="Scenario YAML in the oracle's format (fixtures/oracle/README.md)."),
        trace: Optional[str] = typer.Option(None, "--trace", help="Write the JSONL step trace here (default: stdout)."),
        summary: Optional[str] = typer.Option(None, "--summary", help="Also write the per-request summary JSON here."),
        vllm_version: Optional[str] = typer.Option(
            None, "--vllm-version", help="Scheduler behaviour of this vLLM version (default: the newest known)."),
        exact: bool = typer.Option(False, "--exact", help="Walk every running request one by one (no fast path)."),
    ) -> None:
        """Replay a scheduler scenario step by step; the trace matches the oracle's, field for field."""
        import json
        import sys

        from reader.errors import ReaderError
        from reader.sim.oracle_format import load_scenario
        from reader.sim.oracle_format import replay as run_replay

        sc = load_scenario(scenario)
        lines, result = run_replay(sc, vllm_version, fast_path=not exact)
        for note in result["notes"]:
            print(f"note: {note}", file=sys.stderr)
        text = "".join(line + "\n" for line in lines)
        try:
            if trace:
                with open(trace, "w") as f:
                    f.write(text)
            else:
                sys.stdout.write(text)
            if summary:
                with open(summary, "w") as f:
                    json.dump(result, f, indent=1)
                    f.write("\n")
        except OSError as err:
            raise ReaderError(f"cannot write the output: {err.strerror}.", file=err.filename) from None
        if result["hit_step_cap"]:
            print(f"note: stopped at the step cap with {len(result['unfinished'])} request(s) unfinished",
                  file=sys.stderr)
