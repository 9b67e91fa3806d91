"""`vllm-reader calibrate` from the command line's values to a written profile (free of typer and of rendering:
commands/calibrate.py prints it)."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..errors import ReaderError
from ..calibration.profile import CalibrationProfile, DeviceStandIn, write_profile


@dataclass
class Fitted:
    """A profile fitted and written: where, and what the fit had to say beside it."""

    profile: CalibrationProfile
    written_to: str
    notes: list[str]

DEFAULT_DEVICE_MEMORY_GIB = 64.0


def fit_profile(inputs: list[str], bench: list[str], hold_out: list[str], steps: Optional[str],
                output: Optional[str], name: Optional[str], device_kind: str, device_memory_gib: Optional[float],
                vllm_version: Optional[str], gpu: Optional[str], model: Optional[str],
                set_values: Optional[list[str]], pick: Optional[int], usage_context: str,
                logs: Optional[list[str]] = None, published: Optional[str] = None,
                progress: Optional[Callable[[str, int, int], None]] = None) -> Fitted:
    """Fit and write the profile (atomically, only after the fit succeeded). progress(stage, done, running) is
    told how a bench fit goes."""
    if device_kind not in ("gpu", "cpu"):
        raise ReaderError(f"--device-kind must be gpu or cpu, not '{device_kind}'.", key="--device-kind")
    held = [f.strip() for item in hold_out for f in item.split(",") if f.strip()]
    logs = list(logs or [])
    notes: list[str] = []
    if published is not None:
        if inputs or bench or held or logs or steps:
            raise ReaderError("--published fits published serving runs alone: give no config, bench results, logs "
                              "or steps with it.", key="--published")
        from .run_published import from_published
        profile = from_published(published, gpu, name)
    elif steps is not None:
        if inputs or bench or held or logs:
            raise ReaderError("--steps fits measured step times alone: give no config, bench results or logs with "
                              "it.", key="--steps")
        profile = _from_steps(steps, gpu, name)
    else:
        if not inputs:
            raise ReaderError("give the config the benchmarks ran against, then the results: vllm-reader calibrate "
                              "CONFIG --bench RESULT.json [RESULT.json ...] (or --log SERVER.log for the memory "
                              "terms).", key="CONFIG")
        config, files = inputs[0], list(bench) + list(inputs[1:])
        if not files and not logs:
            raise ReaderError("nothing to fit: add `--bench RESULT.json` (files written by `vllm bench serve "
                              "--save-result`) for the step times, or `--log SERVER.log` (the server's start-up "
                              "log) for the memory terms.", key="--bench")
        if held and not files:
            raise ReaderError("--hold-out needs bench results to fit on (--bench): a start-up log fits the memory "
                              "terms, which have no held-out loads.", key="--hold-out")
        resolved, device = _resolve_config(config, device_kind, device_memory_gib, vllm_version, gpu, model,
                                           set_values, pick, usage_context)
        command = _command(config, files, held, logs, gpu, device_kind, model)
        label = name or f"{_slug(resolved.require_gpu().id)}-{_slug(resolved.require_model().id)}"
        memory = _memory_terms(resolved, logs) if logs else None
        if files:
            profile = _fit_bench(resolved, str(config), files, held, device, label, command, progress)
        else:
            profile = _step_times_not_fitted(resolved, str(config), label, command, memory.terms.fit)
        if memory is not None:
            profile = profile.model_copy(update={"memory": memory.terms, "sources": profile.sources + memory.sources})
            notes = memory.notes
    target = output or f"{profile.name}.calibration.yaml"
    write_profile(profile, target)
    return Fitted(profile=profile, written_to=target, notes=notes)


def _fit_bench(resolved: Any, config: str, files: list[str], held: list[str], device: Optional[DeviceStandIn],
               label: str, command: str, progress: Optional[Callable[[str, int, int], None]]) -> CalibrationProfile:
    from .fit_bench import calibrate_bench

    return calibrate_bench(resolved, config, files, held, device, label, command, progress=progress)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text.rstrip("/").rsplit("/", 1)[-1]).strip("-").lower() or "profile"


def _from_steps(path: str, gpu: Optional[str], name: Optional[str]) -> CalibrationProfile:
    from ..catalog.load import get_gpu
    from .fit_steps import calibrate_steps, load_steps

    data = load_steps(path)
    spec = get_gpu(gpu or str(data["meta"].get("gpu") or ""))
    command = f"vllm-reader calibrate --steps {shlex.quote(path)} --gpu {spec.id}"
    return calibrate_steps(path, spec, name or _slug(spec.id), command)


def _resolve_config(config: str, device_kind: str, device_memory_gib: Optional[float], vllm_version: Optional[str],
                    gpu: Optional[str], model: Optional[str], set_values: Optional[list[str]], pick: Optional[int],
                    usage_context: str) -> tuple[Any, Optional[DeviceStandIn]]:
    """The deployment the measurements came from, on the device they ran on (a stand-in where the catalog lacks
    it: only bench results can fit its figures)."""
    from ..catalog.load import find_gpu
    from ..config.from_cli import load_options
    from ..config.load import load_deployment
    from ..config.resolve import resolve
    from .fit_bench import DEVICE_START
    from ..calibration.select import standin_gpu

    options = load_options(vllm_version, gpu, None, model, None, set_values, pick, usage_context)
    deployment = load_deployment(config, options)
    device_name = deployment.context.gpu
    if not device_name:
        raise ReaderError("calibrate needs the device the measurements ran on: give --gpu (a catalog GPU, or any name "
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
    return resolved, device


def _command(config: str, files: list[str], held: list[str], logs: list[str], gpu: Optional[str], device_kind: str,
             model: Optional[str]) -> str:
    return " ".join(["vllm-reader calibrate", shlex.quote(config), *(["--bench", *map(shlex.quote, files)] if files
                                                                     else []),
                     *(["--hold-out", shlex.quote(",".join(held))] if held else []),
                     *[part for log in logs for part in ("--log", shlex.quote(log))],
                     *(["--gpu", shlex.quote(gpu)] if gpu else []),
                     *(["--device-kind", device_kind] if device_kind != "gpu" else []),
                     *(["--model", shlex.quote(model)] if model else [])])


def _step_times_not_fitted(resolved: Any, config: str, name: str, command: str, report: Any) -> CalibrationProfile:
    """A profile of start-up logs alone: the memory terms are fitted, the step-time coefficients stay the shipped
    profile's (so the step times are what they are without a profile), and a device the catalog lacks is refused:
    only bench results measure it."""
    from .fit_bench import fitted_on
    from ..calibration.profile import Coefficient, default_profile

    gpu = resolved.require_gpu()
    if gpu.vendor == "other":
        raise ReaderError(f"the catalog does not know the device '{gpu.id}', and start-up logs measure memory, not "
                          "its speed: give bench results too (--bench RESULT.json) so that the profile can stand in "
                          "for its datasheet.", key="--log")
    base = default_profile()
    step_time = {k: Coefficient(value=c.value, fitted=False, source=f"not fitted (no bench results): the shipped "
                                f"profile {base.name}'s, {c.source}") for k, c in base.step_time.items()}
    return CalibrationProfile(name=name, fitted_on=fitted_on(resolved, config), step_time=step_time, fit=report,
                              created_by=command)


def _memory_terms(resolved: Any, logs: list[str]) -> Any:
    """The deployment's memory terms, learned from its start-up logs (reader/calibration/fit_log.py)."""
    from .fit_log import deployment_terms
    from ..calibration.profile import read_input

    return deployment_terms(resolved, [(path, read_input(path, "the log")) for path in logs])
