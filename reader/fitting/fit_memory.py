"""Memory overhead terms learned from vLLM start-up logs: the one place they are fitted.

Two uses of the same arithmetic:
- `calibrate --log LOG ...`: one deployment's own terms (reader/calibration/fit_log.py), using the
  prediction of a log's available KV memory below;
- tools/fit_memory_terms.py: the shipped defaults of the capacity model's estimates
  (reader/capacity/data/vllm_memory.yaml), re-fitted on the public log corpus (fixtures/logs/public,
  the entries of INDEX.yaml with a `fit` section), reported per release before and after.

A case is a public log plus what its thread says that the log does not (the command, the GPU, the
release). Its prediction uses only the config and the device's total memory where the log printed it
(a fact of the machine, not an overhead term); the weights are predicted too, and a second error is
kept with the log's own weights so the overhead terms can be judged apart from the weight estimate.
"""
from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Optional

import yaml
from pydantic import BaseModel, Field

from ..capacity.behaviour import trial_estimates
from ..logs.reading import GIB, LogReading
from .optimize import Free, SearchResult, minimize

# The estimates the shipped fit moves: non-torch memory of the V0 engine (both accounting scopes) and of the V1
# engine while it counted total - free (up to 0.8.5). Not moved:
# - V1's per-instance non-torch (0.9.2 on, every current release): its three logs disagree in sign (0.10.1 and
#   0.11.0 want more overhead, 0.19.0 less), 0.45 GiB already agrees with them within 6%, 16% and 3%, and the
#   0.11.0 gap sits with the sampler estimate of gpt-oss's 201k-token vocabulary as much as with this term;
#   freed, it moved every current release's KV cache by 0.25 GiB on that evidence (calibrate --log fits a
#   deployment's own terms instead);
# - the activation terms: where vLLM printed them (V0 profiler lines) the estimate is within a few percent, and
#   freeing them made the leave-one-out error worse;
# - the extra of a distributed deployment: the corpus's one multi-GPU log also holds a KV connector's buffers.
DEFAULT_FREE = ("non_torch_bytes_v0_global", "non_torch_bytes_v0_0_6_5", "non_torch_bytes_v0_per_instance",
                "non_torch_bytes_v1_global")
# The estimates a fit may move, with their physical bounds (bytes, or bytes per unit).
FREE = {
    **{name: Free(name, 0.0, 3.0 * GIB, 0.45 * GIB)
       for name in ("non_torch_bytes_v0_until_0_6_3", "non_torch_bytes_v0_global", "non_torch_bytes_v0_0_6_5",
                    "non_torch_bytes_v0_per_instance",
                    "non_torch_bytes_v1_global", "non_torch_bytes_v1_per_instance")},
    "non_torch_bytes_distributed_extra": Free("non_torch_bytes_distributed_extra", 0.0, 4.0 * GIB, 0.5 * GIB),
    "sampler_bytes_per_logit": Free("sampler_bytes_per_logit", 8.0, 80.0, 37.0),
    "fwd_activation_streams": Free("fwd_activation_streams", 1.0, 8.0, 2.0),
    "cudagraph_bytes_per_graph_per_layer": Free("cudagraph_bytes_per_graph_per_layer", 0.0, 4.0 * 2**20,
                                                 0.375 * 2**20),
}


class LogCase(BaseModel):
    """One public log the fit can use, and what its thread adds."""

    file: str
    url: str
    command: Optional[str] = None  # the launch as the thread states it, when the log has no argument line
    vllm_version: Optional[str] = None
    gpu: Optional[str] = None
    gpus: Optional[int] = None
    model: Optional[str] = None  # a catalog model with the checkpoint's shape, when its own name is not known
    quantization: Optional[str] = None
    usage_context: str = "serve"


class CasePoint(BaseModel):
    file: str
    release: str
    engine: str
    logged_available_gib: float
    logged_how: str  # "printed", or derived from the logged blocks or tokens
    predicted_available_gib: float
    with_logged_weights_gib: Optional[float] = None  # the prediction when the weights are the log's
    terms: dict[str, tuple[Optional[float], float]] = Field(default_factory=dict)  # term: (logged, predicted) GiB

    @property
    def error_pct(self) -> float:
        return 100.0 * (self.predicted_available_gib / self.logged_available_gib - 1.0)

    @property
    def overhead_error_pct(self) -> Optional[float]:
        if self.with_logged_weights_gib is None:
            return None
        return 100.0 * (self.with_logged_weights_gib / self.logged_available_gib - 1.0)


# ---- the public corpus -------------------------------------------------------------------------------

def corpus_cases(index: Path) -> list[LogCase]:
    data = yaml.safe_load(index.read_text())
    return [LogCase(file=e["file"], url=e["url"], **e["fit"]) for e in data["logs"] if e.get("fit")]


def resolved_case(case: LogCase, folder: Path) -> tuple[Any, LogReading]:
    """The deployment of a case as vllm-reader resolves it, with the log attached (its measurements)."""
    from ..config.context import LoadOptions
    from ..config.edit import with_flags
    from ..config.load import load_command_line, load_deployment
    from ..config.resolve import resolve
    from ..logs.read import read_log

    path = folder / case.file
    reading = read_log(path.read_text(), case.file)
    options = LoadOptions(vllm_version=case.vllm_version, gpu=case.gpu, gpu_count=case.gpus, model=case.model,
                          usage_context=case.usage_context if case.usage_context != "serve" else None)
    if case.command:
        deployment = load_command_line(case.command, options)
        deployment.log = reading
    else:
        deployment = load_deployment(str(path), options)
    if case.quantization:
        deployment = with_flags(deployment, {"quantization": case.quantization})
    return resolve(deployment, model_override=case.model), reading


class PreparedCase(BaseModel):
    """A case resolved once: the capacity request of its config, and the log's measurements."""

    model_config = {"arbitrary_types_allowed": True}
    case: LogCase
    request: Any  # CapacityRequest, without the log's measurements but with the device it ran on
    reading: LogReading
    release: str


def prepare(case: LogCase, folder: Path) -> PreparedCase:
    from ..logs.terms import measured_terms
    from ..pipeline import capacity_request

    resolved, reading = resolved_case(case, folder)
    terms = measured_terms(reading)
    device = {"total_memory_bytes": terms.total_memory_bytes} if terms.total_memory_bytes else {}
    if terms.gpu_memory_utilization:
        resolved.values["gpu_memory_utilization"].value = terms.gpu_memory_utilization
    engine = {"engine": reading.engine} if reading.engine else {}  # the engine the log shows ran
    release = reading.release or case.vllm_version or resolved.version  # memory behaviour changes between tags
    request = capacity_request(resolved, measured=False).model_copy(
        update={**device, **engine, "vllm_version": release})
    return PreparedCase(case=case, request=request, reading=reading, release=release)


def predict_case(prepared: PreparedCase) -> Optional[CasePoint]:
    """The case's available KV memory, logged and predicted; None when the log gives no KV figure."""
    from ..capacity.api import compute_capacity
    from ..logs.terms import measured_terms

    case, reading, base = prepared.case, prepared.reading, prepared.request
    terms = measured_terms(reading)
    predicted = compute_capacity(base)
    logged, how = logged_available(reading, predicted)
    if logged is None:
        return None
    w = predicted.workers[0]
    point = CasePoint(file=case.file, release=prepared.release,
                      engine=predicted.engine, logged_available_gib=logged / GIB, logged_how=how,
                      predicted_available_gib=w.available_kv.value / GIB)
    if terms.weights_bytes is not None:
        again = compute_capacity(base.model_copy(update={"weights_bytes": terms.weights_bytes}))
        point.with_logged_weights_gib = again.workers[0].available_kv.value / GIB
    for name, fig, logged_term in (("weights", w.weights, terms.weights_bytes),
                                   ("activation_peak", w.activation_peak, terms.activation_peak_bytes),
                                   ("non_torch", w.non_torch, terms.non_torch_bytes),
                                   ("cudagraph", w.cudagraph, terms.cudagraph_memory_bytes)):
        point.terms[name] = (None if logged_term is None else logged_term / GIB, fig.value / GIB)
    return point


def logged_available(reading: LogReading, predicted: Any) -> tuple[Optional[float], str]:
    """Available KV memory as printed, or implied by the logged blocks or tokens at the model's KV layout."""
    w = reading.memory
    if w.available_kv is not None:
        return float(w.available_kv.bytes), "printed"
    cap_w = predicted.workers[0]
    if reading.kv.num_gpu_blocks is not None and predicted.num_gpu_blocks.value > 0:
        per_block = cap_w.available_kv.value / predicted.num_gpu_blocks.value
        return reading.kv.num_gpu_blocks.value * per_block, "from the logged blocks"
    if reading.kv.kv_tokens is not None and predicted.gpu_kv_cache_tokens.value > 0:
        per_token = cap_w.available_kv.value / predicted.gpu_kv_cache_tokens.value
        return reading.kv.kv_tokens.value * per_token, "from the logged KV tokens"
    return None, ""


# ---- fitting ------------------------------------------------------------------------------------------

def evaluate(cases: list[PreparedCase], values: Optional[dict[str, float]] = None) -> list[CasePoint]:
    with trial_estimates(values or {}):
        points = [predict_case(case) for case in cases]
    return [p for p in points if p is not None]


def loss(points: list[CasePoint]) -> float:
    """Mean absolute error of the available KV memory, relative to the device's requested memory scale: a
    5 GiB cache on an 80 GB GPU weighs as much as 50 GiB, and a negative logged figure still counts."""
    if not points:
        return float("inf")
    return statistics.fmean(abs(p.predicted_available_gib - p.logged_available_gib) /
                            max(abs(p.logged_available_gib), 1.0) for p in points)


def fit(cases: list[PreparedCase], names: tuple[str, ...], max_iterations: int = 800, restarts: int = 2
        ) -> SearchResult:
    """Nelder-Mead, restarted from its own result (a simplex can collapse on a term only one log moves)."""
    free = [FREE[n] for n in names]
    result = minimize(lambda values: loss(evaluate(cases, values)), free, max_iterations=max_iterations,
                      tolerance=1e-12)
    for _ in range(restarts):
        free = [Free(f.name, f.low, f.high, min(max(result.values[f.name], f.low), f.high), f.log) for f in free]
        again = minimize(lambda values: loss(evaluate(cases, values)), free, max_iterations=max_iterations,
                         tolerance=1e-12)
        if again.loss >= result.loss - 1e-12:
            break
        result = SearchResult(again.values, again.loss, result.iterations + again.iterations, again.converged)
    return result


def leave_one_out(cases: list[PreparedCase], names: tuple[str, ...]) -> list[CasePoint]:
    """Each case predicted by terms fitted on the others: what the fit says about a log it has not seen."""
    out = []
    for i, case in enumerate(cases):
        others = cases[:i] + cases[i + 1:]
        values = fit(others, names).values
        out += evaluate([case], values)
    return out


def median_abs_error(points: list[CasePoint]) -> float:
    return statistics.median(abs(p.error_pct) for p in points) if points else float("nan")


def by_release(before: list[CasePoint], after: list[CasePoint], held_out: list[CasePoint]) -> list[dict[str, Any]]:
    """Per release: how many logs, and the median absolute error before, after, and left out of the fit."""
    rows: dict[str, dict[str, list[float]]] = {}
    for b, a, h in zip(before, after, held_out):
        row = rows.setdefault(b.release, {"before": [], "after": [], "held_out": [], "files": []})
        row["before"].append(abs(b.error_pct))
        row["after"].append(abs(a.error_pct))
        row["held_out"].append(abs(h.error_pct))
        row["files"].append(b.file)
    return [{"release": release, "logs": len(v["files"]), "before_pct": statistics.median(v["before"]),
             "after_pct": statistics.median(v["after"]), "held_out_pct": statistics.median(v["held_out"]),
             "files": v["files"]}
            for release, v in sorted(rows.items(), key=lambda kv: tuple(int(x) for x in kv[0].split(".")))]
