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
            "For a device the catalog does not know: its memory, GiB (default: the config's KV-cache size "
            "plus the weights, as a floor)."))] = None,
        fmt: Annotated[str, typer.Option("--format", "-f", metavar="text|json")] = "text",
        vllm_version: VersionOpt = None,
        gpu: GpuOpt = None,
        model: ModelOpt = None,
        set_values: SetOpt = None,
        pick: PickOpt = None,
        usage_context: UsageOpt = "serve",
    ) -> None:
        """Fit the step-time model to bench results (or measured steps), the memory terms to start-up logs, and write a calibration profile."""
        from ..calibration.run import calibrate_command

        typer.echo(calibrate_command(inputs or [], bench or [], hold_out or [], steps, output, name, device_kind,
                                     device_memory_gib, fmt, vllm_version, gpu, model, set_values, pick,
                                     usage_context, log or [], published))
