"""Whether a start-up log belongs to the deployment being calibrated, and at which settings it ran.

`calibrate CONFIG --log LOG` learns the memory terms of CONFIG's deployment from LOG. A log of another
release, model or device measured other terms, so it is refused (one sentence naming what differs): a
release the log prints against the one the config states, a model whose name or shape differs (or,
where the log names none, whose weights vLLM loaded differ by more than a tenth from the config
model's), a device whose memory or name differs, other tensor- or pipeline-parallel sizes or another
quantization. The scheduler settings may differ: the log then shows the terms at its own settings
(its `max_num_batched_tokens`, `max_num_seqs`, ...), and the run is the config with those settings,
rebuilt from the log's arguments where it printed them.
"""
from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, Field

from ..errors import ReaderError
from ..logs.reading import GIB, LogReading

# How far the log's device memory (torch's total) may sit from the catalog's figure for the config's GPU:
# one GPU model reports within a few tenths of a percent across drivers (H100 SXM: 79.22 GiB logged, 79.33 in
# the catalog); the nearest other models differ by far more (A100 40 GB, L40S 44.99, H100 NVL 93.1).
DEVICE_TOLERANCE = 0.04
WEIGHTS_TOLERANCE = 0.10  # the config model's predicted weights against what vLLM loaded
# The weights' format: the config's where the log does not state it (a checkpoint's own quantization is not an
# argument), and the log's may not differ from it.
_MODEL_CHOICES = ("quantization", "dtype")


class LoggedRun(BaseModel):
    """One log, and the deployment it shows running: the config at the log's own settings."""

    model_config = {"arbitrary_types_allowed": True}
    path: str
    reading: LogReading
    resolved: Any  # ResolvedDeployment
    settings_how: str  # where the log's settings came from
    notes: list[str] = Field(default_factory=list)


def logged_run(config: Any, path: str, text: str, reading: LogReading, check_device: bool = True) -> LoggedRun:
    """The run `reading` shows, as the config's deployment at the log's settings; a log of another release,
    model or device is a ReaderError."""
    _same_release(config, path, reading)
    if check_device:
        _same_device(config, path, reading)
    notes: list[str] = []
    log_deployment = _log_deployment(config, path, text, reading)
    if log_deployment is not None:
        _same_model_name(config, path, log_deployment, notes)
        resolved = _at_log_settings(config, log_deployment)
        how = "the log's arguments and engine config"
    else:
        resolved, how = _config_with_logged_values(config, reading)
        notes.append(f"{path}: no argument or engine config line, so the run is the config's deployment"
                     + (" at the max_model_len the log prints" if "max_model_len" in how else ""))
    _same_parallel(config, resolved, path)
    return LoggedRun(path=path, reading=reading, resolved=resolved, settings_how=how, notes=notes)


def check_weights(config: Any, path: str, logged_bytes: Optional[int], predicted_bytes: float) -> None:
    """The weights vLLM loaded against the config model's: a different checkpoint is refused."""
    if logged_bytes is None or predicted_bytes <= 0:
        return
    if abs(logged_bytes / predicted_bytes - 1.0) > WEIGHTS_TOLERANCE:
        model = config.require_model().id
        raise ReaderError(
            f"this log is of another model: vLLM loaded {logged_bytes / GIB:.2f} GiB of weights per GPU, and the "
            f"config's {model} takes {predicted_bytes / GIB:.2f} GiB, so its memory terms are not this deployment's.",
            file=path, key="--log")


def what_it_shows(reading: LogReading) -> str:
    """A short account of what a log holds, for a log with nothing to fit."""
    parts = []
    if reading.release:
        parts.append(f"vLLM {reading.release_printed or reading.release}")
    elif reading.release_range:
        parts.append(f"a release in {reading.release_range} (by its message formats)")
    if reading.engine:
        parts.append(f"the {reading.engine.upper()} engine")
    if reading.args is not None or reading.engine_config is not None:
        parts.append("the launch")
    kv = reading.kv
    if kv.kv_tokens is not None:
        parts.append(f"a {kv.device} KV cache of {kv.kv_tokens.value:,.0f} tokens")
    elif kv.num_gpu_blocks is not None:
        parts.append(f"{kv.num_gpu_blocks.value:,.0f} KV blocks")
    if reading.stats:
        parts.append(f"{len(reading.stats)} stats line{'s' if len(reading.stats) != 1 else ''}")
    if reading.refusal is not None:
        parts.append("a refused start")
    return ", ".join(parts) if parts else "no figure vllm-reader reads"


# ---- the checks ----------------------------------------------------------------------------------------

def _same_release(config: Any, path: str, reading: LogReading) -> None:
    from ..versions import parse_version

    asked = config.deployment.context.vllm_version
    if not reading.release or not asked or config.version_origin == "none":
        return
    try:
        differ = parse_version(reading.release) != parse_version(asked)
    except ValueError:
        return
    if differ:
        raise ReaderError(
            f"this log is of vLLM {reading.release} and the config runs {asked}: each release profiles memory its own "
            "way, so the terms are fitted per release (give a log of the config's release, or set its version with "
            f"--vllm-version {reading.release}).", file=path, key="--log")


def _same_device(config: Any, path: str, reading: LogReading) -> None:
    from ..calibration.select import is_cpu

    gpu = config.require_gpu()
    on_cpu = reading.kv.device == "CPU"
    if on_cpu != is_cpu(gpu) and (reading.kv.kv_tokens is not None or on_cpu):
        where = "vLLM's CPU backend" if on_cpu else "a GPU"
        raise ReaderError(f"this log is of {where} and the config's device is {gpu.id}: its memory terms are not this "
                          "deployment's.", file=path, key="--log")
    total = reading.memory.total
    if total is not None and not on_cpu and gpu.memory_bytes:
        if abs(total.bytes / gpu.memory_bytes - 1.0) > DEVICE_TOLERANCE:
            raise ReaderError(
                f"this log is of another GPU: its device has {total.value:.2f} GiB (line {total.line}) and the config's "
                f"{gpu.id} {gpu.memory_bytes / GIB:.2f} GiB, so its memory terms are not this deployment's (give "
                "--gpu with the GPU the log ran on).", file=path, key="--log")
    named = _catalog_gpu(reading.gpu_name)
    if named is not None and named != gpu.id:
        raise ReaderError(f"this log is of another GPU: it names the device '{reading.gpu_name}' (line "
                          f"{reading.gpu_name_line}), and the config's is {gpu.id}.", file=path, key="--log")


def _catalog_gpu(name: Optional[str]) -> Optional[str]:
    if not name:
        return None
    from ..catalog.load import find_gpu

    words = name.replace("-", " ").split()
    for i in range(len(words), 0, -1):
        spec = find_gpu("-".join(words[:i]))
        if spec is not None:
            return spec.id
    return None


def _same_model_name(config: Any, path: str, log_deployment: Any, notes: list[str]) -> None:
    """The model the log names against the config's: one name (its last path part), or one shape."""
    from ..config.resolve import resolve
    from ..calibration.select import shape_of

    logged, model = log_deployment.model, config.require_model()
    if not logged:
        return
    names = {_tail(n) for n in (config.deployment.model, model.id) if n}
    if _tail(logged) in names:
        return
    try:
        other = resolve(log_deployment).model
    except ReaderError:
        other = None
    if other is not None and shape_of(other) != shape_of(model):
        raise ReaderError(f"this log is of model {logged} and the config runs {model.id}: their shapes differ, so its "
                          "memory terms are not this deployment's.", file=path, key="--log")
    notes.append(f"{path}: the log names model '{logged}', the config '{config.deployment.model or model.id}'; "
                 + ("they have one shape" if other is not None else "read as one checkpoint (the weights are checked)"))


def _same_parallel(config: Any, run: Any, path: str) -> None:
    for dest, what in (("tensor_parallel_size", "tensor-parallel size"),
                       ("pipeline_parallel_size", "pipeline-parallel size")):
        here, there = config.value(dest) or 1, run.value(dest) or 1
        if here != there:
            raise ReaderError(f"this log ran with {what} {there} and the config with {here}: the memory terms are per "
                              "GPU of one parallel layout, so they are not this deployment's.", file=path, key="--log")
    for dest in _MODEL_CHOICES:
        here, there = config.value(dest), run.value(dest)
        if (here or None) != (there or None):
            raise ReaderError(f"this log ran with {dest} {there or 'none'} and the config with {here or 'none'}: its "
                              "memory terms are not this deployment's.", file=path, key="--log")


def _tail(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1].lower()


# ---- the run at the log's settings ---------------------------------------------------------------------

def _log_deployment(config: Any, path: str, text: str, reading: LogReading) -> Optional[Any]:
    """The launch the log shows (its arguments and engine config), or None where it printed neither."""
    from ..config.context import LoadOptions
    from ..logs.report import log_deployment

    if reading.engine_config is None and reading.args is None and reading.command is None:
        return None
    version = None if reading.release else (config.deployment.context.vllm_version or config.version)
    return log_deployment(text, path, LoadOptions(vllm_version=version))


def _at_log_settings(config: Any, log_deployment: Any) -> Any:
    """The log's launch on the config's device, with the config's model (the names were checked) and the
    config's choices of weights format where the log's arguments are silent on them."""
    from ..config.edit import with_flags
    from ..config.resolve import resolve

    context = log_deployment.context.model_copy(update={"gpu": config.require_gpu().id, "gpu_origin": "cli"})
    deployment = log_deployment.model_copy(update={"context": context})
    silent = {dest: config.deployment.flags[dest].value for dest in _MODEL_CHOICES
              if dest in config.deployment.flags and dest not in deployment.flags}
    if silent:
        deployment = with_flags(deployment, silent)
    device = config.gpu if config.gpu is not None and config.gpu.vendor == "other" else None
    return resolve(deployment, model_resolution=config.model_resolution, device=device)


def _config_with_logged_values(config: Any, reading: LogReading) -> tuple[Any, str]:
    """Where the log shows no launch: the config, at the max_model_len the log quotes if it differs."""
    from ..config.edit import with_flags
    from ..config.resolve import resolve

    logged = reading.resolved.get("max_model_len")
    if logged is None or int(logged.value) == config.value("max_model_len"):
        return config, "the config's settings (the log prints none)"
    deployment = with_flags(config.deployment, {"max_model_len": int(logged.value)})
    device = config.gpu if config.gpu is not None and config.gpu.vendor == "other" else None
    resolved = resolve(deployment, model_resolution=config.model_resolution, device=device)
    return resolved, f"the config's settings at the max_model_len the log prints ({int(logged.value):,}, line {logged.line})"
