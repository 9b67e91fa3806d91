"""`vllm-reader calibrate`: fit the step-time model to your own measurements; write a calibration profile.

    vllm-reader calibrate CONFIG --bench RESULT.json [RESULT.json ...] [--hold-out RESULT.json ...] -o PROFILE.yaml
    vllm-reader calibrate CONFIG --log SERVER.log [--bench RESULT.json ...] -o PROFILE.yaml
    vllm-reader calibrate --steps STEPS.json --gpu H200-SXM -o PROFILE.yaml

RESULT.json: `vllm bench serve --save-result [--save-detailed]` files from the deployment CONFIG describes.
SERVER.log: the vLLM server's start-up log (memory profiling, available KV memory): the memory terms.
STEPS.json: forward-step times measured by fixtures/gpu/calib.py (how the shipped H200 profile is made).
A device the catalog does not know (`--gpu NAME`, `--device-kind cpu` for a CPU) is calibrated from the bench
results alone: the profile then stands in for its datasheet.
"""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from .common import GpuOpt, ModelOpt, PickOpt, SetOpt, UsageOpt, VersionOpt


def register(app: typer.Typer) -> None:
    @app.command("calibrate")
    def calibrate(
        inputs: Annotated[Optional[list[str]], typer.Argument(
            help="CONFIG, then (optionally) more bench result files.", show_default=False)] = None,
        bench: Annotated[Optional[list[str]], typer.Option(
            "--bench", help="A `vllm bench serve --save-result` file to fit on (repeat, or list files after "
                            "CONFIG).")] = None,
        hold_out: Annotated[Optional[list[str]], typer.Option(
            "--hold-out", help="A bench result to predict but not fit on: its error is reported and stored "
                               "(repeat, or comma-separate).")] = None,
        log: Annotated[Optional[list[str]], typer.Option(
            "--log", help="A start-up log of this deployment's vLLM server: its memory terms (activation peak, "
                          "non-torch, CUDA graphs) go into the profile, at the settings they were measured at "
                          "(repeat for more logs).")] = None,
        steps: Annotated[Optional[str], typer.Option(
            "--steps", help="Measured step times (fixtures/gpu/calib.py output) instead of bench results.")] = None,
        published: Annotated[Optional[str], typer.Option(
            "--published", help="Published real-vLLM serving runs (aiconfigurator silicon_sample.csv layout): fit "
                                "the profile of the GPU type --gpu names across their models, TP sizes and weight "
                                "formats.")] = None,
        output: Annotated[Optional[str], typer.Option("-o", "--output", help="Where to write the profile "
                                                      "(default: NAME.calibration.yaml).")] = None,
        name: Annotated[Optional[str], typer.Option("--name", help="The profile's name (default: device and "
                                                    "model).")] = None,
        device_kind: Annotated[str, typer.Option("--device-kind", metavar="gpu|cpu", help="For a device the "
                                                 "catalog does not know: a GPU or a CPU (no CUDA graphs; launch "
                                                 "and compute share its cores).")] = "gpu",
        device_memory_gib: Annotated[Optional[float], typer.Option("--device-memory-gib", min=0.001, help=(
            "For a device the catalog does not know: its memory, GiB (default 64, assumed and said so in the "
            "profile; a CPU server's KV cache is sized by VLLM_CPU_KVCACHE_SPACE in the launch's environment "
            "where it sets one, not by this)."))] = None,
        fmt: Annotated[str, typer.Option("--format", "-f", metavar="text|json")] = "text",
        vllm_version: VersionOpt = None,
        gpu: GpuOpt = None,
        model: ModelOpt = None,
        set_values: SetOpt = None,
        pick: PickOpt = None,
        usage_context: UsageOpt = "serve",
    ) -> None:
        """Fit the step-time model to bench results (or measured steps), the memory terms to start-up logs, and write a calibration profile."""
        typer.echo(calibrate_command(inputs or [], bench or [], hold_out or [], steps, output, name, device_kind,
                                     device_memory_gib, fmt, vllm_version, gpu, model, set_values, pick,
                                     usage_context, log or [], published))


def calibrate_command(inputs: list[str], bench: list[str], hold_out: list[str], steps: Optional[str],
                      output: Optional[str], name: Optional[str], device_kind: str, device_memory_gib: Optional[float],
                      fmt: str, vllm_version: Optional[str], gpu: Optional[str], model: Optional[str],
                      set_values: Optional[list[str]], pick: Optional[int], usage_context: str,
                      logs: Optional[list[str]] = None, published: Optional[str] = None) -> str:
    """Fit and write the profile, with a progress line on stderr while a bench fit runs (on a terminal only: logs
    and CI stay quiet); what to print."""
    from ..fitting.run import fit_profile
    from ..errors import ReaderError
    from ..render.progress import ProgressLine

    if fmt not in ("text", "json"):
        raise ReaderError(f"unknown format '{fmt}': expected text or json.", key="--format")
    line = ProgressLine("calibrate", stages=("speed", "fit"))
    try:
        fitted = fit_profile(inputs, bench, hold_out, steps, output, name, device_kind, device_memory_gib,
                             vllm_version, gpu, model, set_values, pick, usage_context, logs, published,
                             progress=line)
    finally:
        line.close()
    if fmt == "json":
        import json

        return json.dumps({"written": fitted.written_to, "profile": fitted.profile.model_dump(mode="json",
                                                                                              exclude_none=True),
                           "notes": fitted.notes}, indent=1)
    from ..render.calibration_view import render_profile

    return render_profile(fitted.profile, written_to=fitted.written_to, notes=fitted.notes)
