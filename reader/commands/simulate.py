"""`vllm-reader simulate CONFIG`: the serving modes side by side on the same requests."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import (ConfigArg, GpuOpt, GpusOpt, ModelOpt, PickOpt, SetOpt, UsageOpt, VersionOpt, WorkloadOpt,
                     load_and_resolve, load_options, located_in, stop_if_vllm_refuses, write_output)


def register(app: typer.Typer) -> None:
    @app.command("simulate")
    def simulate(
        config: ConfigArg,
        workload: WorkloadOpt = None,
        modes: Annotated[str, typer.Option("--modes", help="all, or a comma list of naive,static,continuous,chunked "
                                           "(chunked = the config as written).")] = "all",
        fmt: Annotated[str, typer.Option("--format", "-f", metavar="text|markdown|json")] = "text",
        seed: Annotated[Optional[int], typer.Option("--seed", help="Seed for the workload draw (default: the "
                                                    "workload's own).")] = None,
        vllm_version: VersionOpt = None,
        gpu: GpuOpt = None,
        gpus: GpusOpt = None,
        model: ModelOpt = None,
        slo_ttft_p99: Annotated[Optional[float], typer.Option("--slo-ttft-p99", min=0.001, help="TTFT target, ms (goodput).")] = None,
        slo_itl_p99: Annotated[Optional[float], typer.Option("--slo-itl-p99", min=0.001, help="ITL target, ms (goodput).")] = None,
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Write to a file.")] = None,
        set_values: SetOpt = None,
        pick: PickOpt = None,
        usage_context: UsageOpt = "serve",
    ) -> None:
        """Simulate NAIVE, STATIC, CONTINUOUS and CONTINUOUS+CHUNKED serving on the same requests."""
        from ..diagnose.scenario import build_scenario, slos_from
        from ..errors import ReaderError
        from ..render.simtable import progress_bar, render
        from ..sim.api import run_modes
        from .diagnose import _modes

        chosen = _modes(modes) or ("naive", "static", "continuous", "chunked")
        options = load_options(vllm_version, gpu, gpus, model, workload, set_values, pick, usage_context,
                               slo_ttft_p99, slo_itl_p99)
        resolved = load_and_resolve(config, options)
        stop_if_vllm_refuses(resolved, config)
        with located_in(resolved):
            scenario = build_scenario(resolved, slos_from(resolved))
        if seed is not None:
            from ..sim.api import make_workload
            scenario.workload, scenario.seed = make_workload(scenario.spec, seed), seed
        if not scenario.starts:
            raise ReaderError(f"vLLM {resolved.version} would not start with this config, so there is nothing to "
                              f"simulate: {scenario.capacity.startup_error.message}", file=config)
        results = run_modes(scenario.settings, scenario.workload, scenario.step_time, modes=list(chosen),
                            seed=scenario.seed, progress=progress_bar(), slos_ms=scenario.slos_ms or None)
        write_output(render(results, fmt), output)
