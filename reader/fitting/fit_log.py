"""`calibrate --log LOG ...`: one deployment's memory overhead terms from its own start-up logs.

Each log is first matched to the deployment (reader/calibration/log_match.py: another release, model or
device is refused) and set at its own settings. The terms are then:
- as vLLM printed them (activation peak, non-torch, CUDA graphs), the median over the logs that did;
- non-torch memory, where a log printed only its available KV memory (or its blocks), solved from it:
  the one term no estimate pins down.

A term is stored at the config's settings, with the capacity model's estimate there. When the logs ran
at those settings the value is their median; when they ran at others (another token budget, another
max_num_seqs), it is the median ratio of measurement to estimate at each log's settings, times the
estimate at the config's: the estimate's dependence on the settings, at the level the logs measured.
The same ratio carries it to any trial's settings later (reader/capacity/profile_terms.py).

The report sets each log's available KV memory, predicted with the fitted terms carried to that log's
settings, beside what it logged (weights and the device total stay predicted, so the error is not zero
by construction), and each term beside the log's own figure.
"""
from __future__ import annotations

import hashlib
import statistics
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field

from ..capacity.profile_terms import DEPENDS_ON, LABELS, ProfileTerm, settings_of
from ..errors import ReaderError
from ..logs.reading import GIB, LogReading
from .fit_memory import logged_available
from .log_match import check_weights, logged_run, what_it_shows
from ..calibration.profile import FitPoint, FitReport, MemoryTerm, MemoryTerms, MetricError, SourceFile, TermSettings

# The profile's field, the capacity model's name, and the log's figure (reader/logs/terms.py MeasuredTerms).
TERMS = (("activation_peak_bytes", "activation_peak", "activation_peak_bytes"),
         ("non_torch_bytes", "non_torch", "non_torch_bytes"),
         ("cudagraph_bytes", "cudagraph", "cudagraph_memory_bytes"))
NOTHING_TO_FIT = ("the start-up lines that carry memory figures: 'Available KV cache memory', '# GPU blocks' or "
                  "'GPU KV cache size', the profiler's weights / activation peak / non-torch lines")


class DeploymentTerms(BaseModel):
    """A deployment's memory overhead terms from its own logs, with how well they predict those logs."""

    terms: MemoryTerms  # with the fit's report in terms.fit
    sources: list[SourceFile] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class _Sample(BaseModel):
    """One log's figure of one term, with the estimate at the log's settings."""

    value: float
    estimate: float
    settings: dict[str, Any]
    path: str
    solved: bool = False  # non-torch solved from the available KV memory, not printed


class _Log(BaseModel):
    model_config = {"arbitrary_types_allowed": True}
    path: str
    text: str
    reading: LogReading
    request: Any  # CapacityRequest at the log's settings, without its measurements
    estimated: Any  # Capacity of that request: the estimates
    samples: dict[str, _Sample] = Field(default_factory=dict)


def deployment_terms(resolved: Any, logs: list[tuple[str, str]], check_device: bool = True) -> DeploymentTerms:
    """The memory terms of the deployment `resolved` from its start-up logs (name, text).
    check_device=False skips the device check (the public corpus runs logs of GPUs the catalog lacks on a
    stand-in whose total is replaced by the logged one, tools/fit_memory_terms.py)."""
    from ..capacity.api import compute_capacity
    from ..logs.read import read_log
    from ..logs.report import NOT_A_LOG
    from ..pipeline import capacity_request

    if not logs:
        raise ReaderError("no log to fit the memory terms on: give one or more start-up logs with --log.")
    notes: list[str] = []
    usable: list[_Log] = []
    empty: list[tuple[str, LogReading]] = []
    for path, text in logs:
        reading = read_log(text, path)
        if not reading.is_vllm_log:
            raise ReaderError(NOT_A_LOG, file=path, key="--log")
        log = _prepare(resolved, path, text, reading, check_device, notes)
        if log.samples:
            usable.append(log)
        else:
            empty.append((path, reading))
    if not usable:
        raise ReaderError(_nothing_to_fit(empty), file=empty[0][0], key="--log")
    for path, reading in empty:
        notes.append(f"{path}: nothing to fit ({what_it_shows(reading)}, but none of {NOTHING_TO_FIT})")
    at_config = capacity_request(resolved, measured=False)
    config_estimates = compute_capacity(at_config).workers[0]
    config_settings = {**settings_of(at_config), "gpu_memory_utilization": at_config.gpu_memory_utilization}
    terms: dict[str, MemoryTerm] = {}
    for field, name, _ in TERMS:
        samples = [log.samples[name] for log in usable if name in log.samples]
        term = _combine(name, samples, _estimate_of(config_estimates, name), config_settings, resolved)
        if term is not None:
            terms[field] = term
        elif samples:
            notes.append(f"{LABELS[name]}: measured only at other settings, with no estimate to carry it to the "
                         "config's, so the estimate stands")
    report = _report(usable, terms)
    sources = [SourceFile(path=log.path, sha256=hashlib.sha256(log.text.encode()).hexdigest(), kind="log",
                          description=_describe(log.reading)) for log in usable]
    return DeploymentTerms(terms=MemoryTerms(**terms, fit=report), sources=sources, notes=notes)


# ---- one log --------------------------------------------------------------------------------------------

def _prepare(resolved: Any, path: str, text: str, reading: LogReading, check_device: bool,
             notes: list[str]) -> _Log:
    from ..capacity.api import compute_capacity
    from ..logs.terms import measured_terms

    run = logged_run(resolved, path, text, reading, check_device)
    notes += run.notes
    request = _request_at(run.resolved, reading)
    estimated = compute_capacity(request)
    measured = measured_terms(reading)
    check_weights(resolved, path, measured.weights_bytes, estimated.workers[0].weights.value)
    log = _Log(path=path, text=text, reading=reading, request=request, estimated=estimated)
    if reading.kv.device == "CPU":
        return log  # vLLM's CPU backend is given its KV space and profiles no memory
    settings = settings_of(request)
    for _, name, logged_field in TERMS:
        value = getattr(measured, logged_field)
        if value is not None:
            log.samples[name] = _Sample(value=float(value), estimate=_estimate_of(estimated.workers[0], name),
                                        settings=settings, path=path)
    if "non_torch" not in log.samples and request.kv_cache_memory_bytes is None:
        residual = _non_torch_residual(request, reading, measured)
        if residual is not None:
            log.samples["non_torch"] = _Sample(value=residual, estimate=estimated.workers[0].non_torch.value,
                                               settings=settings, path=path, solved=True)
    return log


def _request_at(run: Any, reading: LogReading) -> Any:
    """The capacity request of the logged run: its settings, with the device total, utilization, engine and
    release the log printed, and none of its measured terms."""
    from ..logs.terms import measured_terms
    from ..pipeline import capacity_request

    terms = measured_terms(reading)
    update: dict[str, Any] = {}
    if terms.total_memory_bytes:
        update["total_memory_bytes"] = terms.total_memory_bytes
    if terms.gpu_memory_utilization:
        update["gpu_memory_utilization"] = terms.gpu_memory_utilization
    if reading.engine:
        update["engine"] = reading.engine
    if reading.release:
        update["vllm_version"] = reading.release
    return capacity_request(run, measured=False).model_copy(update={**update, "profile_terms": {}})


def _non_torch_residual(request: Any, reading: LogReading, measured: Any) -> Optional[float]:
    """The non-torch memory that makes the prediction meet the logged available KV memory, given the log's
    other terms where printed."""
    from ..capacity.api import compute_capacity

    given = {k: v for k, v in measured.capacity_fields().items()
             if k in ("weights_bytes", "activation_peak_bytes", "cudagraph_memory_bytes", "measured_source")}
    predicted = compute_capacity(request.model_copy(update=given))
    logged, _ = logged_available(reading, predicted)
    if logged is None:
        return None
    w = predicted.workers[0]
    return max(0.0, w.non_torch.value + (w.available_kv.value - logged))


def _estimate_of(worker: Any, name: str) -> float:
    return float(getattr(worker, name).value)


# ---- the terms --------------------------------------------------------------------------------------------

def _combine(name: str, samples: list[_Sample], config_estimate: float, config_settings: dict[str, Any],
             resolved: Any) -> Optional[MemoryTerm]:
    """One term at the config's settings from the logs' samples, or None where they cannot be carried there."""
    if not samples:
        return None
    keys = DEPENDS_ON[name]
    here = [s for s in samples if all(s.settings.get(k) == config_settings.get(k) for k in keys)]
    at = TermSettings(**{k: v for k, v in config_settings.items() if k in TermSettings.model_fields})
    estimate = config_estimate if config_estimate > 0 else None
    if len(here) == len(samples):
        value = statistics.median(s.value for s in samples)
        how = "at the config's settings"
    elif config_estimate > 0 and all(s.estimate > 0 for s in samples):
        ratio = statistics.median(s.value / s.estimate for s in samples)
        value = ratio * config_estimate
        how = (f"carried to the config's settings with the estimate: median measured/estimated {ratio:.3f} x "
               f"{config_estimate / GIB:.2f} GiB")
    elif here:
        value = statistics.median(s.value for s in here)
        how = "from the logs at the config's settings (the others cannot be carried there)"
        samples = here
    else:
        return None
    solved = all(s.solved for s in samples)
    what = ("solved from the logged available KV memory (the log does not print the term)" if solved else
            "measured by vLLM at start-up")
    listed = "; ".join(f"{Path(s.path).name}: {s.value / GIB:.2f} GiB at {_settings_text(name, s.settings)}"
                       + (f" ({s.value / s.estimate:.2f}x the estimate)" if s.estimate > 0 else "")
                       for s in samples[:4]) + ("; ..." if len(samples) > 4 else "")
    source = (f"{what} in {len(samples)} log(s), {how} ({_settings_text(name, config_settings)}); {listed}; "
              f"{resolved.require_model().id} on {resolved.require_gpu().id}")
    return MemoryTerm(value=float(value), source=source, fitted=True, at=at, estimate=estimate)


_SHOWN = {"max_num_batched_tokens": "max_num_batched_tokens", "max_num_seqs": "max_num_seqs",
          "tensor_parallel_size": "TP", "pipeline_parallel_size": "PP", "data_parallel_size": "DP",
          "num_speculative_tokens": "speculative tokens", "cudagraph_capture_sizes": "capture sizes",
          "max_cudagraph_capture_size": "largest capture size"}


def _settings_text(name: str, settings: dict[str, Any]) -> str:
    parts = []
    for key in DEPENDS_ON[name]:
        value = settings.get(key)
        if key == "enforce_eager":
            parts.append("eager" if value else "CUDA graphs")
        elif value is not None and not (key == "num_speculative_tokens" and value == 0):
            parts.append(f"{_SHOWN[key]} {value}")
    return ", ".join(parts)


# ---- the report ---------------------------------------------------------------------------------------------

def _report(logs: list[_Log], terms: dict[str, MemoryTerm]) -> FitReport:
    from ..capacity.api import compute_capacity

    profile_terms = {name: ProfileTerm(value=terms[field].value, at=terms[field].at.model_dump(),
                                       estimate=terms[field].estimate, profile="being fitted")
                     for field, name, _ in TERMS if field in terms}
    points: list[FitPoint] = []
    for log in logs:
        fitted = compute_capacity(log.request.model_copy(update={"profile_terms": profile_terms}))
        logged, _ = logged_available(log.reading, fitted)
        if logged:
            points.append(_point(log.path, "available_kv_gib", logged, fitted.workers[0].available_kv.value, True))
            points.append(_point(log.path, "available_kv_gib_without_profile", logged,
                                 log.estimated.workers[0].available_kv.value, False))
        for name, sample in log.samples.items():
            if name in profile_terms and not sample.solved and sample.value > 0:
                points.append(_point(log.path, f"{name}_gib", sample.value,
                                     _estimate_of(fitted.workers[0], name), False))
    metrics = list(dict.fromkeys(p.metric for p in points))
    errors = [_error([p for p in points if p.metric == m]) for m in metrics]
    in_loss = [p for p in points if p.in_loss]
    return FitReport(evidence="log", method=("the terms vLLM printed at start-up (non-torch solved from the available "
                                             "KV memory where it is not printed), median over the logs, carried "
                                             "between settings with the capacity model's estimate"),
                     free=[field for field, _, _ in TERMS if field in terms], iterations=0, converged=True,
                     loss=statistics.fmean(abs(p.error_pct) for p in in_loss) / 100.0 if in_loss else 0.0,
                     errors=errors, points=points)


def _point(path: str, metric: str, measured: float, predicted: float, in_loss: bool) -> FitPoint:
    return FitPoint(source=path, metric=metric, measured=measured / GIB, predicted=predicted / GIB,
                    error_pct=100.0 * (predicted / measured - 1.0), in_loss=in_loss)


def _error(points: list[FitPoint]) -> MetricError:
    errors = [abs(p.error_pct) for p in points]
    return MetricError(metric=points[0].metric, points=len(points), median_abs_pct=statistics.median(errors),
                       max_abs_pct=max(errors), in_loss=points[0].in_loss)


def _nothing_to_fit(empty: list[tuple[str, LogReading]]) -> str:
    shown = "; ".join(f"{Path(path).name} shows {what_it_shows(reading)}" for path, reading in empty[:3])
    cpu = any(reading.kv.device == "CPU" for _, reading in empty)
    return (f"there is nothing to fit the memory terms on: {shown}; but "
            + ("vLLM's CPU backend is given its KV-cache space (VLLM_CPU_KVCACHE_SPACE) and profiles no memory. "
               if cpu else f"no log has {NOTHING_TO_FIT}. ")
            + "Give a GPU server's start-up log from its first line to 'Maximum concurrency'.")


def _describe(reading: LogReading) -> str:
    release = f"vLLM {reading.release}" if reading.release else "vLLM (release not printed)"
    return f"{release} start-up log"
