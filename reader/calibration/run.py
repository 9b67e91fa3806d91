"""`vllm-reader calibrate` from the command line's values to a written profile (free of typer)."""
from __future__ import annotations

import re
import shlex
from typing import Optional

from ..errors import ReaderError
from .profile import CalibrationProfile, DeviceStandIn, write_profile

DEFAULT_DEVICE_MEMORY_GIB = 64.0


def calibrate_command(inputs: list[str], bench: list[str], hold_out: list[str], steps: Optional[str],
                      output: Optional[str], name: Optional[str], device_kind: str, device_memory_gib: Optional[float],
                      fmt: str, vllm_version: Optional[str], gpu: Optional[str], model: Optional[str],
                      set_values: Optional[list[str]], pick: Optional[int], usage_context: str) -> str:
    """Fit, write the profile (atomically, only after the fit succeeded) and return what to print."""
    if fmt not in ("text", "json"):
        raise ReaderError(f"unknown format '{fmt}': expected text or json.", key="--format")
    if device_kind not in ("gpu", "cpu"):
        raise ReaderError(f"--device-kind must be gpu or cpu, not '{device_kind}'.", key="--device-kind")
    held = [f.strip() for item in hold_out for f in item.split(",") if f.strip()]
    if steps is not None:
        if inputs or bench or held:
            raise ReaderError("--steps fits measured step times alone: give no config and no bench results with "
                              "it.", key="--steps")
        profile = _from_steps(steps, gpu, name)
    else:
        if not inputs:
            raise ReaderError("give the config the benchmarks ran against, then the results: vllm-reader calibrate "
                              "CONFIG --bench RESULT.json [RESULT.json ...].", key="CONFIG")
        config, files = inputs[0], list(bench) + list(inputs[1:])
        if not files:
            raise ReaderError("no bench results given: add `--bench RESULT.json` (files written by `vllm bench "
                              "serve --save-result`).", key="--bench")
        profile = _from_bench(config, files, held, name, device_kind, device_memory_gib, vllm_version, gpu, model,
                              set_values, pick, usage_context)
    target = output or f"{profile.name}.calibration.yaml"
    write_profile(profile, target)
    if fmt == "json":
        import json
        return json.dumps({"written": target, "profile": profile.model_dump(mode="json", exclude_none=True)},
                          indent=1)
    from ..render.calibration_view import render_profile
    return render_profile(profile, written_to=target)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text.rstrip("/").rsplit("/", 1)[-1]).strip("-").lower() or "profile"


def _from_steps(path: str, gpu: Optional[str], name: Optional[str]) -> CalibrationProfile:
    from ..catalog.load import get_gpu
    from .fit_steps import calibrate_steps, load_steps

    data = load_steps(path)
    spec = get_gpu(gpu or str(data["meta"].get("gpu") or ""))
    command = f"vllm-reader calibrate --steps {shlex.quote(path)} --gpu {spec.id}"
    return calibrate_steps(path, spec, name or _slug(spec.id), command)


def _from_bench(config: str, files: list[str], held: list[str], name: Optional[str], device_kind: str,
                device_memory_gib: Optional[float], vllm_version: Optional[str], gpu: Optional[str],
                model: Optional[str], set_values: Optional[list[str]], pick: Optional[int],
                usage_context: str) -> CalibrationProfile:
    from ..catalog.load import find_gpu
    from ..config.from_cli import load_options
    from ..config.load import load_deployment
    from ..config.resolve import resolve
    from .fit_bench import DEVICE_START, calibrate_bench
    from .select import standin_gpu

    options = load_options(vllm_version, gpu, None, model, None, set_values, pick, usage_context)
    deployment = load_deployment(config, options)
    device_name = deployment.context.gpu
    if not device_name:
        raise ReaderError("calibrate needs the device the benchmarks ran on: give --gpu (a catalog GPU, or any name "
                          "for a device the catalog does not know, with --device-kind cpu for a CPU) or `gpu:` in "
                          "the config's vllm-reader comment block.", key="--gpu", file=config)
    device = None
    if device_kind == "cpu" or find_gpu(device_name) is None:
        memory = device_memory_gib or DEFAULT_DEVICE_MEMORY_GIB
        start = DEVICE_START[device_kind]
        device = DeviceStandIn(name=device_name, kind=device_kind, bf16_tflops=start["device.bf16_tflops"],
                               hbm_bandwidth_gbps=start["device.hbm_bandwidth_gbps"], memory_gib=memory,
                               source=(f"{memory:g} GiB given with --device-memory-gib" if device_memory_gib else
                                       f"{memory:g} GiB assumed (give --device-memory-gib)"))
    resolved = resolve(deployment, model_override=options.model, device=standin_gpu(device) if device else None)
    resolved.require_model()
    command = " ".join(["vllm-reader calibrate", shlex.quote(config), "--bench", *map(shlex.quote, files),
                        *(["--hold-out", *map(shlex.quote, held)] if held else []),
                        *(["--gpu", shlex.quote(gpu)] if gpu else []),
                        *(["--device-kind", device_kind] if device_kind != "gpu" else []),
                        *(["--model", shlex.quote(model)] if model else [])])
    label = name or f"{_slug(device_name)}-{_slug(resolved.require_model().id)}"
    return calibrate_bench(resolved, str(config), files, held, device, label, command)

