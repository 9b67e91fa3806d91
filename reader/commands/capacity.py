"""`vllm-reader capacity CONFIG`: memory breakdown, KV blocks and tokens, concurrency, fragmentation."""
from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from .common import (ConfigArg, GpuOpt, GpusOpt, ModelOpt, PickOpt, SetOpt, SloItlOpt, SloTtftOpt, UsageOpt, VersionOpt,
                     WorkloadOpt, load_and_resolve, load_options, located_in, stop_if_vllm_refuses)


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
        load_curve: Annotated[bool, typer.Option("--load-curve", help="Also simulate the workload's shape at rising "
                                                 "load: the highest load within the SLOs (or the knee), where "
                                                 "throughput levels off, and the order in which the defaults bind.")
                              ] = False,
        slo_ttft_p99: SloTtftOpt = None,
        slo_itl_p99: SloItlOpt = None,
        workers: Annotated[Optional[int], typer.Option("--workers", min=1,
                                                       help="Processes for the load curve.")] = None,
    ) -> None:
        """Memory per GPU as vLLM accounts it, KV blocks and tokens, max concurrency, fragmentation."""
        from ..capacity.api import compute_capacity
        from ..pipeline import capacity_request, optional_workload
        from ..render.capacity_view import render_capacity

        options = load_options(vllm_version, gpu, gpus, model, workload, set_values, pick, usage_context,
                               slo_ttft_p99, slo_itl_p99)
        resolved = load_and_resolve(config, options)
        stop_if_vllm_refuses(resolved, config)
        with located_in(resolved):
            cap = compute_capacity(capacity_request(resolved, optional_workload(resolved, workload)))
        if resolved.model_named:  # the id as written (an alias's shape is named on the model_how line)
            cap = cap.model_copy(update={"model": resolved.model_named})
        curve = slos = None
        if load_curve and cap.startup_error is None:
            from ..diagnose.scenario import slos_from
            slos = slos_from(resolved)
            with located_in(resolved):
                curve = _curve(resolved, slos, workers)
        typer.echo(render_capacity(cap, fmt, resolved.model_how, curve, slos))
        if cap.startup_error is not None:
            raise typer.Exit(1)


def _curve(resolved: Any, slos: dict[str, float], workers: Optional[int]) -> Any:
    """The load curve of the deployment's workload (the chat preset when it gives none)."""
    from ..diagnose.checks import rule_errors
    from ..diagnose.loadcurve import load_curve
    from ..diagnose.run import compute_ridge
    from ..diagnose.scenario import build_scenario

    scenario = build_scenario(resolved, slos)
    if not scenario.starts:
        return None
    return load_curve(scenario, rule_errors, compute_ridge(resolved), workers,
                      replicas=resolved.deployment.context.replicas or 1,
                      given=resolved.deployment.context.workload is not None)
