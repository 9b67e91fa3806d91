"""Which calibration profile a deployment uses, and whether it may use it.

A profile is named with `--calibration` or in the config's `# vllm-reader:` block (`calibration: FILE`,
relative to the config file); without one, the shipped H200 profile applies and every other GPU is
extrapolated from its datasheet. A named profile stands for the deployment it was fitted on:

- another device, tensor- or pipeline-parallel size, weights dtype or quantization is refused: the
  coefficients describe that hardware running those kernels, and nothing says how they transfer;
- another model (by shape: two names of one architecture match) is used with a warning: efficiencies
  and overheads carry over to other shapes as the datasheet extrapolation does, less well;
- another KV-cache dtype, vLLM version or CUDA-graph mode is used with a warning.

A profile of a device the catalog does not know (a CPU, a new GPU) carries that device's fitted figures,
which stand in for its datasheet under the device's own name.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel

from ..catalog.types import GpuSpec, ModelSpec
from ..errors import ReaderError
from .profile import (DEFAULT_PROFILE, CalibrationProfile, DeviceStandIn, read_profile, shipped_profile,
                      shipped_profile_path)


def shape_of(model: ModelSpec) -> dict[str, int]:
    shape = {"layers": model.num_hidden_layers, "hidden": model.hidden_size, "heads": model.num_attention_heads,
             "kv_heads": model.num_key_value_heads, "head_dim": model.head_dim,
             "intermediate": model.intermediate_size, "vocab": model.vocab_size}
    if model.moe is not None:
        shape.update(experts=model.moe.num_experts, experts_per_token=model.moe.experts_per_token)
    return shape


def standin_gpu(device: DeviceStandIn) -> GpuSpec:
    """The catalog entry a profile's device stands in for: its fitted effective figures as the datasheet."""
    return GpuSpec(id=device.name, vendor="other", arch=f"{device.kind} (calibrated, not in the catalog)",
                   device_name=device.name, memory_bytes=int(device.memory_gib * 2**30),
                   memory_marketed_gb=device.memory_gib, hbm_bandwidth_gbps=device.hbm_bandwidth_gbps,
                   bf16_tflops=device.bf16_tflops, source=device.source, verification="measured",
                   notes="stands in for a datasheet: figures fitted by vllm-reader calibrate")


def is_cpu(gpu: GpuSpec) -> bool:
    return gpu.vendor == "other" and gpu.arch.startswith("cpu")


def profile_path(deployment) -> Optional[Path]:
    """The profile the deployment names (--calibration, or the comment block relative to the file)."""
    ctx = deployment.context
    if not ctx.calibration:
        return None
    path = Path(ctx.calibration).expanduser()
    if ctx.calibration_origin == "comment" and not path.is_absolute():
        path = Path(deployment.source).parent / path
    return path


def load_for(deployment) -> tuple[Optional[CalibrationProfile], Optional[str]]:
    path = profile_path(deployment)
    if path is None:
        return None, None
    if not path.is_file():
        where = "the '# vllm-reader:' block" if deployment.context.calibration_origin == "comment" else "--calibration"
        raise ReaderError(f"the calibration profile named in {where} does not exist.", file=str(path),
                          key="calibration", hint="Write one with `vllm-reader calibrate CONFIG --bench RESULT.json`.")
    return read_profile(path), str(path)


class Target(BaseModel):
    """What a profile is checked against: the deployment that is to use it."""

    device: str
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    dtype: str
    quantization: Optional[str] = None
    model: str
    model_shape: dict[str, int]
    kv_cache_dtype: Optional[str] = None
    vllm_version: Optional[str] = None
    enforce_eager: Optional[bool] = None


def problems(profile: CalibrationProfile, target: Target, name: str) -> list[str]:
    """Why the profile may be used only with care on the target (warnings); raises where it may not."""
    on = profile.fitted_on
    across = profile.fit.evidence == "published"  # fitted across TP sizes, models and weight formats
    refusals = [("device", on.device, target.device)] + ([] if across else [
                ("tensor-parallel size", on.tensor_parallel_size, target.tensor_parallel_size),
                ("pipeline-parallel size", on.pipeline_parallel_size, target.pipeline_parallel_size),
                ("weights dtype", on.dtype, target.dtype),
                ("quantization", on.quantization or "none", target.quantization or "none")])
    for what, fitted, here in refusals:
        if str(fitted).lower() != str(here).lower():
            raise ReaderError(
                f"{name} was fitted with {what} {fitted}, and this deployment has {here}: its coefficients describe "
                "that hardware and those kernels only, so it is not used.", key="calibration",
                hint="Calibrate this deployment with `vllm-reader calibrate CONFIG --bench RESULT.json`, or drop "
                     "--calibration to use the shipped profile.")
    out = []
    if on.model_shape and on.model_shape != target.model_shape:
        out.append(f"it was fitted on model {on.model} and this deployment runs {target.model}: its coefficients "
                   "are extrapolated to this model's shapes")
    if target.kv_cache_dtype and on.kv_cache_dtype not in ("auto", target.kv_cache_dtype):
        out.append(f"it was fitted with KV-cache dtype {on.kv_cache_dtype}, this deployment uses "
                   f"{target.kv_cache_dtype}")
    if target.vllm_version and on.vllm_version and on.vllm_version != target.vllm_version:
        out.append(f"it was fitted on vLLM {on.vllm_version}, this deployment runs {target.vllm_version} (per-step "
                   "overheads change between releases)")
    cpu = profile.device is not None and profile.device.kind == "cpu"
    if target.enforce_eager is not None and on.enforce_eager != target.enforce_eager and not cpu:
        out.append("it was fitted " + ("without" if on.enforce_eager else "with") + " CUDA graphs, this deployment "
                   "runs " + ("eagerly" if target.enforce_eager else "with CUDA graphs"))
    return [f"{name}: {text}" for text in out]


def target_of(r) -> Target:
    model = r.require_model()
    kv = r.derived["kv_cache_dtype"].value if "kv_cache_dtype" in r.derived else r.value("kv_cache_dtype")
    return Target(device=r.require_gpu().id, tensor_parallel_size=r.value("tensor_parallel_size") or 1,
                  pipeline_parallel_size=r.value("pipeline_parallel_size") or 1, dtype=r.value("model_dtype"),
                  quantization=r.value("quantization"), model=model.id, model_shape=shape_of(model),
                  kv_cache_dtype=str(kv) if kv else None, vllm_version=r.version,
                  enforce_eager=bool(r.value("enforce_eager")))


def check(r) -> None:
    """Refuse a profile fitted on other hardware; warn (a note on r) where it only extrapolates."""
    from ..config.model import Note

    if r.calibration is None:
        return
    name = f"the calibration profile {r.calibration_path or r.calibration.name}"
    for text in problems(r.calibration, target_of(r), name) + memory_problems(r.calibration, r, name):
        r.notes.append(Note(level="warning", key="calibration", message=text))


def memory_settings_moved(profile: CalibrationProfile, r) -> dict[str, tuple[Any, Any]]:
    """The settings the profile's memory terms depend on that differ in deployment r: name -> (then, now)."""
    from ..capacity.profile_terms import DEPENDS_ON

    moved: dict[str, tuple[Any, Any]] = {}
    for name, term in profile.memory.terms().items():
        if term.at is None:
            continue
        for setting in DEPENDS_ON[name]:
            then, now = getattr(term.at, setting), _setting(r, setting)
            if then is not None and now is not None and then != now:
                moved[setting] = (then, now)
    return moved


def memory_problems(profile: CalibrationProfile, r, name: str) -> list[str]:
    """A warning where the profile's memory terms were measured at other settings than the deployment's."""
    moved = memory_settings_moved(profile, r)
    if not moved:
        return []
    diff = ", ".join(f"{k} {then} there, {now} here" for k, (then, now) in moved.items())
    return [f"{name}: its memory terms were measured at other settings ({diff}); they are scaled to this "
            "deployment's with the capacity model's estimate, so they are less certain than measured"]


def _setting(r, setting: str) -> Any:
    if setting in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
        return r.value(setting) or 1
    if setting == "enforce_eager":
        return bool(r.value(setting))
    if setting in r.values:
        return r.value(setting)
    return None


class CalibrationUse(BaseModel):
    """What a report says about the calibration it used."""

    name: str
    path: str
    chosen: str  # how: --calibration, the comment block, or the shipped default
    evidence: str  # bench, steps, log
    fitted_on: str  # "<model> on <device>"
    device_stands_in: bool
    fit_metric: Optional[str] = None
    fit_median_abs_pct: Optional[float] = None
    fit_max_abs_pct: Optional[float] = None
    extrapolated: Optional[str] = None  # why the figures are extrapolations, where they are
    fit_warnings: int = 0  # sentences the fit left in the profile about its own results (fit.warnings)
    # a profile fitted on published serving runs: its replay's error on them, e.g. "mean TPOT median 7.0%
    # (worst 40%), mean TTFT median 30.1% (worst 150%) over 140 published runs on B200"
    published_error: Optional[str] = None


def describe_use(r) -> CalibrationUse:
    chosen = {"cli": "given with --calibration", "comment": "named in the vllm-reader comment block"}.get(
        r.deployment.context.calibration_origin, "the shipped default") if r.calibration else "the shipped default"
    return use_of(r.calibration, r.calibration_path, chosen, r.gpu.id if r.gpu else "?")


def use_of(profile: Optional[CalibrationProfile], path: Optional[str], chosen: str, gpu: str) -> CalibrationUse:
    """How a report describes the calibration it used (profile None: the shipped default)."""
    given = profile is not None
    default_path = shipped_profile_path(gpu)
    profile = profile or read_profile(default_path)
    err = profile.summary_error()
    extrapolated = None
    if (not given or profile.fit.evidence == "log") and gpu != profile.fitted_on.device:
        extrapolated = (f"{gpu} is extrapolated from its datasheet peaks (calibrate on your own bench results for "
                        "measured figures)")
    return CalibrationUse(
        name=profile.name, path=path or str(default_path.relative_to(DEFAULT_PROFILE.parents[3])),
        chosen=chosen if given else "the shipped default", evidence=profile.fit.evidence,
        fitted_on=f"{profile.fitted_on.model} on {profile.fitted_on.device}",
        device_stands_in=profile.device is not None, fit_metric=err.metric if err else None,
        fit_median_abs_pct=err.median_abs_pct if err else None, fit_max_abs_pct=err.max_abs_pct if err else None,
        extrapolated=extrapolated,
        fit_warnings=0 if profile.fit.evidence == "published" else len(profile.fit.warnings),
        published_error=_published_error(profile))


def _published_error(profile: CalibrationProfile) -> Optional[str]:
    if profile.fit.evidence != "published" or not profile.fit.errors:
        return None
    names = {"mean_tpot_ms": "mean TPOT", "mean_ttft_ms": "mean TTFT"}
    parts = [f"{names.get(e.metric, e.metric)} median {e.median_abs_pct:.1f}% (worst {e.max_abs_pct:.0f}%)"
             for e in profile.fit.errors]
    skipped = len(profile.fit.warnings)  # runs the replay could not start (fit.warnings says why)
    return (f"{', '.join(parts)} over {profile.fit.errors[0].points} published real-vLLM runs on "
            f"{profile.fitted_on.device}" + (f" ({skipped} more not replayed: fit.warnings)" if skipped else ""))


class StepTimeChoice(BaseModel):
    """The step-time command's calibration: the device, the coefficients, and what the report says."""

    model_config = {"arbitrary_types_allowed": True}

    gpu: GpuSpec
    coefficients: Any
    on_cpu: bool
    use: CalibrationUse
    warnings: list[str]


def profile_for_step_time(path: Optional[str], model: ModelSpec, gpu: str, tp: int, pp: int, dtype: str,
                          quantization: Optional[str], kv_cache_dtype: str, enforce_eager: bool) -> StepTimeChoice:
    """The profile `step-time --calibration` names, checked against the step's deployment (or the default)."""
    from ..catalog.load import get_gpu

    if path is None:
        spec = get_gpu(gpu)
        return StepTimeChoice(gpu=spec, coefficients=shipped_profile(spec.id).coefficients(), on_cpu=False,
                              use=use_of(None, None, "", spec.id), warnings=[])
    if not Path(path).is_file():
        raise ReaderError("the calibration profile given with --calibration does not exist.", file=path,
                          key="--calibration")
    profile = read_profile(path)
    device = profile.device
    spec = standin_gpu(device) if device is not None and device.name.lower() == gpu.lower() else get_gpu(gpu)
    names = {"half": "float16", "fp16": "float16", "bf16": "bfloat16", "float": "float32"}
    effective = model.torch_dtype if dtype == "auto" else names.get(dtype, dtype)
    quant = quantization or (model.quantization.method if model.quantization else None)
    target = Target(device=spec.id, tensor_parallel_size=tp, pipeline_parallel_size=pp, dtype=effective,
                    quantization=quant, model=model.id, model_shape=shape_of(model),
                    kv_cache_dtype=None if kv_cache_dtype == "auto" else kv_cache_dtype, enforce_eager=enforce_eager)
    warnings = problems(profile, target, f"the calibration profile {path}")
    return StepTimeChoice(gpu=spec, coefficients=profile.coefficients(), on_cpu=is_cpu(spec),
                          use=use_of(profile, path, "given with --calibration", spec.id), warnings=warnings)
