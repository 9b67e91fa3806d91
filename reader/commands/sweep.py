"""`vllm-reader sweep CONFIG --param NAME=V1,V2,...`: throughput against ITL P99 over a grid of knobs."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import (CalibrationOpt, ConfigArg, GpuOpt, GpusOpt, ModelOpt, PickOpt, RayOpt, SetOpt, SloItlOpt,
                     SloTtftOpt, UsageOpt, VersionOpt, WorkloadOpt, load_and_resolve, load_options, located_in,
                     stop_if_vllm_refuses, write_output)

NUMERIC_TYPES = ("int", "float", "human_int", "human_int_or_auto")


def register(app: typer.Typer) -> None:
    @app.command("sweep")
    def sweep(
        config: ConfigArg,
        param: Annotated[list[str], typer.Option("--param", help="NAME=V1,V2,... (repeat for a grid), e.g. "
                                                 "max_num_batched_tokens=512,1024,2048,4096,8192,16384.")],
        workload: WorkloadOpt = None,
        slo_ttft_p99: SloTtftOpt = None,
        slo_itl_p99: SloItlOpt = None,
        fmt: Annotated[str, typer.Option("--format", "-f", metavar="text|markdown|json")] = "text",
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Write to a file.")] = None,
        plot: Annotated[Optional[str], typer.Option("--plot", help="Write the scatter into this folder "
                                                    "(.svg, or DIR:png with the plot extra).")] = None,
        workers: Annotated[Optional[int], typer.Option("--workers", min=1, help="Parallel processes.")] = None,
        ray: RayOpt = None,
        vllm_version: VersionOpt = None,
        gpu: GpuOpt = None,
        gpus: GpusOpt = None,
        model: ModelOpt = None,
        set_values: SetOpt = None,
        pick: PickOpt = None,
        usage_context: UsageOpt = "serve",
        calibration: CalibrationOpt = None,
        progress: Annotated[Optional[bool], typer.Option(
            "--progress/--no-progress", help="A progress line on stderr (default: on a terminal outside CI).",
            show_default=False)] = None,
    ) -> None:
        """Sweep numeric vLLM knobs; table, charts, Pareto front and the best value within the SLOs."""
        from ..config.flagtable import flag_table
        from ..diagnose.checks import rule_errors
        from ..diagnose.scenario import build_scenario, slos_from
        from ..diagnose.sweep import parse_params, run_sweep
        from ..render.progress import ProgressLine
        from ..render.sweep_view import render_sweep, sweep_chart_points

        options = load_options(vllm_version, gpu, gpus, model, workload, set_values, pick, usage_context,
                               slo_ttft_p99, slo_itl_p99, calibration=calibration)
        resolved = load_and_resolve(config, options)
        stop_if_vllm_refuses(resolved, config)
        table = flag_table(resolved.version_tuple)

        def numeric(dest: str) -> bool:
            spec = table.spec_for_dest(dest)
            return spec is not None and spec["type"] in NUMERIC_TYPES and spec.get("nargs") is None

        params = parse_params(param, numeric)
        with located_in(resolved):
            base = build_scenario(resolved, slos_from(resolved))
        line = ProgressLine("sweep", show=progress)
        try:
            result = run_sweep(base, params, rule_errors, workers, ray,
                               done=lambda n, total: line.say(f"{n} of {total} points simulated, "
                                                              f"{line.elapsed_s:.0f} s"))
        finally:
            line.close()
        write_output(render_sweep(result, fmt), output)
        if plot:
            from ..render.plots import write_chart
            chart, points = sweep_chart_points(result)
            write_chart(chart, plot, "sweep", points=points)
