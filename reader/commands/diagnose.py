"""`vllm-reader diagnose CONFIG`: what this deployment will do and what limits it."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import (ConfigArg, GpuOpt, GpusOpt, ModelOpt, PickOpt, SetOpt, UsageOpt, VersionOpt, WorkloadOpt,
                     load_and_resolve, load_options, write_output)


def register(app: typer.Typer) -> None:
    @app.command("diagnose")
    def diagnose(
        config: ConfigArg,
        vllm_version: VersionOpt = None,
        gpu: GpuOpt = None,
        gpus: GpusOpt = None,
        model: ModelOpt = None,
        workload: WorkloadOpt = None,
        set_values: SetOpt = None,
        pick: PickOpt = None,
        usage_context: UsageOpt = "serve",
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Write the report to a file.")] = None,
    ) -> None:
        """Read a vLLM config and report what it will do and what limits it."""
        from ..render.resolved import resolved_markdown

        options = load_options(vllm_version, gpu, gpus, model, workload, set_values, pick, usage_context)
        resolved = load_and_resolve(config, options)
        write_output(resolved_markdown(resolved, title=True), output)
