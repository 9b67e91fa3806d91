"""`vllm-reader diagnose CONFIG`: which of vLLM's three defaults limits this deployment, and what to change."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import (CalibrationOpt, ConfigArg, GpuOpt, GpusOpt, ModelOpt, PickOpt, SetOpt, SloItlOpt, SloTtftOpt, UsageOpt,
                     VersionOpt, WorkloadOpt, load_and_resolve, load_options, located_in, write_output)

ALL_MODES = ("naive", "static", "continuous", "chunked")


def register(app: typer.Typer) -> None:
    @app.command("diagnose")
    def diagnose(
        config: ConfigArg,
        workload: WorkloadOpt = None,
        vllm_version: VersionOpt = None,
        gpu: GpuOpt = None,
        gpus: GpusOpt = None,
        model: ModelOpt = None,
        slo_ttft_p99: SloTtftOpt = None,
        slo_itl_p99: SloItlOpt = None,
        fmt: Annotated[str, typer.Option("--format", "-f", metavar="markdown|json|sarif")] = "markdown",
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Write the report to a file.")] = None,
        fail_on: Annotated[str, typer.Option("--fail-on", metavar="error|warning|never",
                                             help="Exit 1 when a finding is at least this severe (SLO misses are "
                                                  "warnings; a start-up failure is an error).")] = "error",
        modes: Annotated[Optional[str], typer.Option("--modes", help="Also simulate these modes side by side: "
                                                     "all, or a comma list of naive,static,continuous,chunked.")] = None,
        whatifs: Annotated[bool, typer.Option("--whatifs/--no-whatifs", help="Re-simulate candidate changes.")] = True,
        load_curve: Annotated[bool, typer.Option("--load-curve/--no-load-curve", help="Simulate the workload's shape "
                                                 "at rising load: the capacity within the SLOs and the order in "
                                                 "which the defaults bind.")] = True,
        plot: Annotated[Optional[str], typer.Option("--plot", help="Also write charts into this folder (.svg; "
                                                    ".png with the plot extra: --plot DIR:png).")] = None,
        workers: Annotated[Optional[int], typer.Option("--workers", min=1,
                                                       help="Processes for the what-ifs and the load curve.")] = None,
        log: Annotated[Optional[str], typer.Option("--log", help="A vLLM log of this deployment (or - for standard "
                                                   "input): its measured memory and stats lines beside the "
                                                   "prediction.")] = None,
        set_values: SetOpt = None,
        pick: PickOpt = None,
        usage_context: UsageOpt = "serve",
        calibration: CalibrationOpt = None,
        metrics: Annotated[Optional[list[str]], typer.Option(
            "--metrics", help="A running server's metrics to set the prediction beside: its /metrics URL, saved "
                              "scrapes, or an `observe --format json` report.")] = None,
    ) -> None:
        """Diagnose a vLLM config: the limiting default, the evidence, and re-simulated changes."""
        from ..diagnose.run import diagnose as run_diagnosis
        from ..errors import ReaderError
        from ..render.report import render_diagnosis

        if fail_on not in ("error", "warning", "never"):
            raise ReaderError(f"--fail-on must be error, warning or never, not '{fail_on}'.", key="--fail-on")
        chosen = _modes(modes)
        release = None if vllm_version else _release_of(calibration, log)
        options = load_options(vllm_version, gpu, gpus, model, workload, set_values, pick, usage_context,
                               slo_ttft_p99, slo_itl_p99, calibration=calibration, release=release)
        resolved = load_and_resolve(config, options)
        observed = None
        if metrics:
            from ..diagnose.observed import observe_for
            from ..render.progress import ProgressLine
            line = ProgressLine("observe")
            try:
                observed = observe_for(resolved, metrics, line.say)
            finally:
                line.close()
        with located_in(resolved):
            result = run_diagnosis(resolved, modes=chosen, whatifs=whatifs, workers=workers, observed=observed,
                                   curve=load_curve)
        if log:
            from ..diagnose.log_observed import attach_log
            from ..logs.read import read_log
            from ..logs.report import NOT_A_LOG, read_text_arg

            text, source = read_text_arg(log)
            reading = read_log(text, source)
            if not reading.is_vllm_log:
                raise ReaderError(NOT_A_LOG, file=source, key="--log")
            attach_log(result, resolved, reading)
        write_output(render_diagnosis(result, fmt), output)
        if plot:
            from ..render.plots import write_diagnosis_plots
            write_diagnosis_plots(result, plot)
        raise typer.Exit(_exit_code(result, fail_on))


def _modes(text: Optional[str]) -> tuple[str, ...]:
    from ..errors import ReaderError

    if not text:
        return ()
    if text.strip() == "all":
        return ALL_MODES
    chosen = tuple(m.strip() for m in text.split(",") if m.strip())
    bad = [m for m in chosen if m not in ALL_MODES]
    if bad:
        raise ReaderError(f"unknown mode '{bad[0]}' (known: {', '.join(ALL_MODES)}, all).", key="--modes")
    return chosen


def _exit_code(result, fail_on: str) -> int:
    if fail_on == "never":
        return 0
    severities = {f.severity for f in result.findings}
    if not result.starts:
        severities.add("error")
    if any(not c.met for c in result.verdict.slo):
        severities.add("warning")
    wanted = {"error"} if fail_on == "error" else {"error", "warning"}
    return 1 if severities & wanted else 0


def _release_of(calibration: Optional[str], log: Optional[str]) -> Optional[tuple[str, str]]:
    """The release the evidence beside the config names, when --vllm-version does not: the calibration profile's,
    then the log's (a config's own comment block or image tag still comes first: config/load.py). A vLLM /metrics
    page names no release (0.32.0's has no version label), so scrapes cannot say it."""
    if calibration:
        from ..calibration.profile import load_profile

        version = load_profile(calibration).fitted_on.vllm_version
        if version:
            return version, "profile"
    if log and log != "-":
        from ..logs.read import read_log

        try:
            text = open(log, errors="replace").read()
        except OSError:
            return None   # the --log reading below says why, with the file's name
        release = read_log(text, log).release
        if release:
            return release, "log"
    return None
