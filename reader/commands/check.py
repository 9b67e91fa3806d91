"""`vllm-reader check CONFIG...`: the pre-deploy gate. Runs the versioned rules on each config.

Exit codes: 0 passed, 1 findings at or above --fail-on (default error), 2 bad input. Several
configs may be given (pre-commit passes the changed files); the exit code is the highest.
"""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import GpuOpt, GpusOpt, ModelOpt, PickOpt, SetOpt, UsageOpt, VersionOpt

FORMAT_HELP = "text (one line per finding), markdown, json (schema: reader/render/schemas/findings.schema.json) or sarif."


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check(
        configs: Annotated[list[str], typer.Argument(help="One or more configs (any form `diagnose` reads).",
                                                     show_default=False)],
        vllm_version: VersionOpt = None,
        fmt: Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)] = "text",
        fail_on: Annotated[str, typer.Option("--fail-on", help="Exit 1 when a finding is at or above this "
                                             "severity: error, warning, or never.")] = "error",
        gpu: GpuOpt = None,
        gpus: GpusOpt = None,
        model: ModelOpt = None,
        set_values: SetOpt = None,
        pick: PickOpt = None,
        usage_context: UsageOpt = "serve",
        ignore: Annotated[Optional[list[str]], typer.Option("--ignore", help="Rule id (or name) to leave out; "
                                                            "repeatable or comma-separated.")] = None,
        rule: Annotated[Optional[list[str]], typer.Option("--rule", help="Check only this rule id; repeatable.")]
        = None,
        verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Text format: vLLM's message, sources and "
                                              "facts per finding, and the rules skipped for lack of facts.")] = False,
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Write the report to a file.")] = None,
    ) -> None:
        """Check configs against vLLM's start-up rules for the chosen version (a CI gate)."""
        from .check_run import run_check

        raise typer.Exit(run_check(configs, vllm_version, fmt, fail_on, gpu, gpus, model, set_values, pick,
                                   usage_context, ignore, rule, verbose, output))
