"""`vllm-reader plan`: the cheapest GPUs, replica count and vLLM settings that meet the SLOs at the target load."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import (CalibrationOpt, ModelOpt, PickOpt, RayOpt, SetOpt, SloItlOpt, SloTtftOpt, UsageOpt, VersionOpt,
                     WorkloadOpt, write_output)

DEFAULT_GPUS = ("H100-SXM", "H200-SXM", "A100-80GB-SXM", "L40S")


def register(app: typer.Typer) -> None:
    @app.command("plan")
    def plan(
        config: Annotated[Optional[str], typer.Argument(
            help="A config to plan from: its model, version and the scheduler flags it sets are kept (see --vary); "
                 "GPU type, count and parallelism are searched. Omit it and give --model instead.",
            show_default=False)] = None,
        model: ModelOpt = None,
        workload: WorkloadOpt = None,
        slo_ttft_p99: SloTtftOpt = None,
        slo_itl_p99: SloItlOpt = None,
        gpus: Annotated[Optional[list[str]], typer.Option(
            "--gpus", help="GPU types to search, comma-separated or repeated (default: "
                           + ",".join(DEFAULT_GPUS) + ", plus the config's own).")] = None,
        max_gpus: Annotated[int, typer.Option("--max-gpus", min=1, help="The most GPUs the whole deployment may "
                                              "use (all replicas).")] = 8,
        gpus_per_node: Annotated[int, typer.Option("--gpus-per-node", min=1, help="GPUs in one node: tensor x "
                                                   "pipeline parallel stays within it.")] = 8,
        price: Annotated[Optional[list[str]], typer.Option(
            "--price", help="GPU=USD_PER_HOUR per GPU (repeatable or comma-separated), for every GPU type "
                            "searched; without prices plans are ranked by GPU count.")] = None,
        target_rate: Annotated[Optional[float], typer.Option(
            "--target-rate", min=0.0001, help="Requests per second the deployment must carry (default: the "
                                              "workload's own rate, clients or batch).")] = None,
        headroom: Annotated[float, typer.Option("--headroom", min=0.0, max=10.0, help="Size each replica for this "
                                                "much more than its share (0.2 = 20%).")] = 0.2,
        vary: Annotated[Optional[list[str]], typer.Option(
            "--vary", help="Search a knob the config sets (comma-separated or repeated), e.g. max_num_seqs.")] = None,
        budget: Annotated[float, typer.Option("--budget", min=1.0, help="Seconds the search may take; when they "
                                              "run out it stops and says what it left out.")] = 600.0,
        seed: Annotated[Optional[int], typer.Option("--seed", help="Seed of the workload's requests (default: "
                                                    "the workload's own).")] = None,
        requests: Annotated[Optional[int], typer.Option("--requests", min=10, help="Requests per simulation "
                                                        "(default: the workload's own count; fewer is faster and "
                                                        "noisier).")] = None,
        workers: Annotated[Optional[int], typer.Option("--workers", min=1, help="Parallel processes.")] = None,
        ray: RayOpt = None,
        fmt: Annotated[str, typer.Option("--format", "-f", metavar="markdown|json")] = "markdown",
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Write the report to a file.")] = None,
        write: Annotated[Optional[str], typer.Option("--write", help="Write the winner's files (vllm-config.yaml, "
                                                     "serve.sh) into this folder.")] = None,
        plot: Annotated[Optional[str], typer.Option("--plot", help="Write the Pareto scatter into this folder "
                                                    "(.svg, or DIR:png with the plot extra).")] = None,
        progress: Annotated[bool, typer.Option("--progress/--no-progress", help="A progress line on stderr "
                                               "(on a terminal only).")] = True,
        vllm_version: VersionOpt = None,
        calibration: CalibrationOpt = None,
        set_values: SetOpt = None,
        pick: PickOpt = None,
        usage_context: UsageOpt = "serve",
    ) -> None:
        """Plan a deployment: GPU type and count, parallelism and scheduler knobs, cheapest within the SLOs."""
        from ..render.plan_view import render_plan, with_files

        if fmt not in ("markdown", "json"):
            from ..errors import ReaderError
            raise ReaderError(f"unknown format '{fmt}': expected markdown or json.", key="--format")
        result = _run(config, model, workload, slo_ttft_p99, slo_itl_p99, gpus, max_gpus, gpus_per_node, price,
                      target_rate, headroom, vary, budget, seed, requests, workers, progress, vllm_version,
                      set_values, pick, usage_context, calibration, ray)
        result = with_files(result)
        write_output(render_plan(result, fmt), output)
        if write:
            _write_files(result.files, write)
        if plot:
            _plot(result, plot)
        raise typer.Exit(0 if result.winner is not None else 1)


def _run(config, model, workload, slo_ttft, slo_itl, gpus, max_gpus, per_node, price, target_rate, headroom, vary,
         budget, seed, requests, workers, progress, vllm_version, set_values, pick, usage_context, calibration=None,
         ray=None):
    from ..config.flagtable import flag_table
    from ..diagnose.checks import rule_errors
    from ..diagnose.scenario import build_scenario, slos_from
    from ..errors import ReaderError
    from ..pipeline import workload_spec
    from ..plan.prices import parse_prices
    from ..plan.search import Planner, PlanRequest
    from ..sim.traffic import Traffic
    from ..render.progress import ProgressLine
    from .common import load_options

    if config is None and model is None:
        raise ReaderError("give a config to plan from, or a model with --model (a catalog id or a local "
                          "config.json).", key="--model")
    options = load_options(vllm_version, None, None, model, workload, set_values, pick, usage_context, slo_ttft,
                           slo_itl, calibration)
    resolved = _resolve(config, model, options)
    searched = _gpu_list(gpus, resolved if config is not None or calibration else None)
    prices = parse_prices(price, searched)
    slos = slos_from(resolved)
    spec = workload_spec(resolved, workload)
    if seed is not None:
        spec = spec.model_copy(update={"seed": seed})
    if requests is not None:
        spec = spec.model_copy(update={"num_requests": requests})
    traffic = Traffic(spec, target_rate)
    if not slos and traffic.kind in ("clients", "batch"):
        raise ReaderError("a closed-loop or batch workload without SLOs is served by any configuration that starts; "
                          "give --slo-ttft-p99 and/or --slo-itl-p99, or a --target-rate.", key="--slo-ttft-p99")
    root = build_scenario(resolved, spec=traffic.spec, slos_ms=slos)
    varied = _names(vary)
    known = flag_table(resolved.version_tuple).by_dest
    unknown = [name for name in varied if name not in known]
    if unknown:
        raise ReaderError(f"--vary {unknown[0]}: vLLM {resolved.version} has no such setting (give a flag name such "
                          "as max_num_seqs or max-num-batched-tokens).", key="--vary")
    request = PlanRequest(gpus=searched, max_gpus=max_gpus, gpus_per_node=per_node, prices=prices, headroom=headroom,
                          vary=frozenset(varied), budget_s=budget, workers=workers, ray=ray)
    line = ProgressLine("plan") if progress else None
    try:
        return Planner(root, traffic, request, rule_errors, line).run()
    finally:
        if line is not None:
            line.close()


def _resolve(config, model, options):
    import shlex

    from ..config.from_cli import resolve_with_calibration
    from ..config.load import load_command_line
    from .common import load_and_resolve

    if config is not None:
        return load_and_resolve(config, options)
    # --model resolves as everywhere (folder, Hugging Face cache, catalog, Hub); an unknown one is bad input
    if options.calibration:  # the plan starts on the profile's GPU (the search then keeps to it)
        from ..calibration.profile import read_profile
        from ..calibration.select import profile_path

        fitted = read_profile(profile_path(load_command_line("vllm serve x", options))).fitted_on
        options = options.model_copy(update={"gpu": fitted.device})
    return resolve_with_calibration(load_command_line(f"vllm serve {shlex.quote(model)}", options), options)


def _gpu_list(given, resolved) -> list[str]:
    from ..catalog.load import get_gpu
    from ..errors import ReaderError

    names = _names(given) if given else list(DEFAULT_GPUS)
    profile = resolved.calibration if resolved is not None else None
    if profile is not None:
        if not profile.fitted_on.device_in_catalog:
            raise ReaderError(f"the calibration profile '{profile.name}' was fitted on {profile.fitted_on.device}, a "
                              "device the catalog does not know: plan searches catalog GPUs, and no other GPU's step "
                              "times follow from that profile.", key="--calibration")
        if not given:  # the profile's step times hold for its own GPU only
            names = [profile.fitted_on.device]
    elif not given and resolved is not None and resolved.deployment.context.gpu:
        names.append(resolved.gpu.id)
    out: list[str] = []
    for name in names:
        try:
            gpu = get_gpu(name).id
        except ReaderError as err:
            raise ReaderError(err.message, key="--gpus", hint=err.hint) from None
        if gpu not in out:
            out.append(gpu)
    return out


def _names(values) -> list[str]:
    return [part.strip().replace("-", "_") if "=" not in part else part.strip()
            for value in values or [] for part in value.split(",") if part.strip()]


def _write_files(files: dict[str, str], folder: str) -> None:
    from pathlib import Path

    from ..errors import ReaderError

    if not files:
        return
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (path / name).write_text(text)
    except OSError as err:
        raise ReaderError(f"cannot write the plan's files ({err.strerror}).", file=folder, key="--write") from None


def _plot(result, spec: str) -> None:
    from ..render.charts import Chart
    from ..render.plots import write_chart

    done = [p for p in result.points if p.metrics is not None and p.output_per_gpu is not None]
    points = [(p.metrics.itl_p99_ms or 0.0, p.output_per_gpu,
               result.candidates[p.candidate].label + (" *" if p.pareto else ""))
              for p in done]
    chart = Chart(title="Output tok/s per GPU against ITL P99 (* = Pareto front)", x_label="ITL P99 (ms)",
                  y_label="output tok/s per GPU", x=[pt[0] for pt in points])
    write_chart(chart, spec, "plan-pareto", points=points)
