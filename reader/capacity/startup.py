"""The capacity model's start-up verdict as facts for `check`'s memory rules (rules/validation/memory.yaml
VR417-VR419): does vLLM's start-up check pass, fail, or is it too close to call?

The verdict compares, on the tightest worker, the KV memory left after weights, activation peak, non-torch
memory and CUDA graphs with what one request at max_model_len needs (or, when nothing is left, the weights
with the memory asked for). The terms we estimate (activation peak, non-torch memory, CUDA graphs) rather
than compute from the checkpoint carry an error: a shortfall or a spare within TOLERANCE of them (plus
WEIGHT_TOLERANCE of the weights) is "near", a warning stating the margin, so the gate never blocks a launch
that would start. A shortfall beyond it is "fails", vLLM's own start-up error.
"""
from __future__ import annotations

from typing import Any

GiB = 2**30
TOLERANCE = 0.5  # of the estimated overheads (activation peak + non-torch + CUDA graphs)
WEIGHT_TOLERANCE = 0.02  # of the weights (shards, embeddings, quantization scales we may count differently)


def memory_facts(cap: Any) -> dict[str, Any]:
    """`memory.*` facts of a Capacity (reader/capacity/api.py): verdict fits | near | fails, and its figures."""
    worker = min(cap.workers, key=lambda w: w.available_kv.value - w.kv_request_bytes.value)
    available, need = worker.available_kv.value, worker.kv_request_bytes.value
    tolerance = _tolerance(worker)
    error = cap.startup_error
    margin = available - need if available > 0 else available
    if error is not None and error.kind == "max_len_too_long" and error.needed_bytes is not None:
        # the start-up check's own figures: where the release holds the null block back from the memory it
        # compares (startup_check_reserves_null_block), a request that exactly fits the KV memory is refused
        margin = min(margin, error.available_bytes - error.needed_bytes)
    out = {"memory.verdict": _verdict(error, margin, tolerance), "memory.margin_gib": _gib(margin),
           "memory.shortfall_gib": _gib(max(-margin, 0)), "memory.spare_gib": _gib(max(margin, 0)),
           "memory.tolerance_gib": _gib(tolerance), "memory.available_gib": _gib(available),
           "memory.needed_gib": _gib(need), "memory.weights_gib": _gib(worker.weights.value),
           "memory.requested_gib": _gib(worker.requested.value), "memory.gpu": worker.gpu,
           "memory.max_model_len": cap.max_model_len, "memory.kind": error.kind if error else None,
           "memory.kv_given": worker.kv_given,
           "memory.message": error.message if error else None, "memory.source": error.source if error else None}
    if error is not None and error.estimated_max_model_len:
        out["memory.max_model_len_that_fits"] = error.estimated_max_model_len
    return out


def _tolerance(worker: Any) -> float:
    """The error of our estimate of the KV memory left: none when it was given or measured."""
    if not worker.available_kv.estimated:  # --kv-cache-memory-bytes, or a log's measurement
        return 0.0
    estimated = sum(f.value for f in (worker.activation_peak, worker.non_torch, worker.cudagraph)
                    if f.basis != "measured")
    return TOLERANCE * estimated + WEIGHT_TOLERANCE * worker.weights.value


def _verdict(error: Any, margin: float, tolerance: float) -> str:
    if error is not None and error.kind == "free_memory":
        return "fails"  # memory other processes hold, as given: not an estimate
    if abs(margin) <= tolerance:
        return "near"
    return "fails" if error is not None else "fits"


def _gib(value: float) -> float:
    return round(value / GiB, 2)
