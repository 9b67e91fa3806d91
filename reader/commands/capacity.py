"""`vllm-reader capacity CONFIG`: memory breakdown, KV blocks and tokens, concurrency, fragmentation."""
from __future__ import annotations

from typing import Annotated

import typer

from .common import (ConfigArg, GpuOpt, GpusOpt, ModelOpt, PickOpt, SetOpt, UsageOpt, VersionOpt, WorkloadOpt,
                     load_and_resolve, load_options, located_in, stop_if_vllm_refuses)


def register(app: typer.Typer) -> None:
    @app.command("capacity")
    def capacity(
        config: ConfigArg,
        vllm_version: VersionOpt = None,
        gpu: GpuOpt = None,
        gpus: GpusOpt = None,
        model: ModelOpt = None,
        workload: WorkloadOpt = None,
        set_values: SetOpt = None,
        pick: PickOpt = None,
        usage_context: UsageOpt = "serve",
        fmt: Annotated[str, typer.Option("--format", "-f", metavar="text|markdown|json")] = "text",
    ) -> None:
        """Memory per GPU as vLLM accounts it, KV blocks and tokens, max concurrency, fragmentation."""
        from ..capacity.api import compute_capacity
        from ..pipeline import capacity_request, optional_workload
        from ..render.capacity_view import render_capacity

        options = load_options(vllm_version, gpu, gpus, model, workload, set_values, pick, usage_context)
        resolved = load_and_resolve(config, options)
        stop_if_vllm_refuses(resolved, config)
        with located_in(resolved):
            cap = compute_capacity(capacity_request(resolved, optional_workload(resolved, workload)))
        if resolved.model_named:  # the id as written (an alias's shape is named on the model_how line)
            cap = cap.model_copy(update={"model": resolved.model_named})
        typer.echo(render_capacity(cap, fmt, resolved.model_how))
        if cap.startup_error is not None:
            raise typer.Exit(1)
