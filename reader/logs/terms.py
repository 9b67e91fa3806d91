"""The memory a log measured, in the capacity model's terms (bytes per GPU, one worker).

vLLM's wording of a term changes between releases; this is where it is mapped:
- weights: 'Loading model weights took' / 'Model loading took' / the profiler's 'model weights take';
- activation peak: the profiler's torch peak (0.6.4 printed it with the weights inside, read.py
  subtracts them); the newest summary's 'peak activation' also holds the CUDA-graph estimate from
  the release that subtracts it (>= 0.20.0), which is taken out again here;
- non-torch: as printed by the V0 profiler, or 'consumed (weights + non-torch)' less the weights;
- CUDA graphs: the profiler's estimate where the release subtracts one, else what capture took;
- available KV and the device total, as printed.
"""
from __future__ import annotations

from typing import Optional

from pydantic import BaseModel

from ..capacity.behaviour import behaviour
from ..versions import parse_version
from .reading import GIB, LogReading


class MeasuredTerms(BaseModel):
    total_memory_bytes: Optional[int] = None
    weights_bytes: Optional[int] = None
    activation_peak_bytes: Optional[int] = None
    non_torch_bytes: Optional[int] = None
    cudagraph_memory_bytes: Optional[int] = None
    available_kv_bytes: Optional[int] = None
    gpu_memory_utilization: Optional[float] = None
    source: str = ""

    def capacity_fields(self) -> dict:
        """The CapacityRequest fields these set (None where the log says nothing)."""
        out = {k: v for k, v in self.model_dump(exclude={"source", "gpu_memory_utilization"}).items() if v is not None}
        if out:
            out["measured_source"] = self.source
        return out


def measured_terms(reading: LogReading) -> MeasuredTerms:
    w = reading.memory
    lines = sorted({f.line for f in (w.total, w.weights, w.non_torch, w.activation_peak, w.consumed,
                                     w.available_kv, w.cudagraph, w.cudagraph_estimate) if f is not None})
    terms = MeasuredTerms(source=f"vLLM's log, {reading.source}" + (f" lines {_ranges(lines)}" if lines else ""))
    terms.total_memory_bytes = w.total.bytes if w.total is not None and reading.kv.device == "GPU" else None
    terms.weights_bytes = w.weights.bytes if w.weights is not None else None
    terms.available_kv_bytes = w.available_kv.bytes if w.available_kv is not None else None
    terms.gpu_memory_utilization = w.utilization.value if w.utilization is not None else None
    subtracted = _graphs_subtracted(reading)
    graphs = w.cudagraph_estimate if subtracted and w.cudagraph_estimate is not None else w.cudagraph
    terms.cudagraph_memory_bytes = graphs.bytes if graphs is not None else None
    if w.non_torch is not None:
        terms.non_torch_bytes = w.non_torch.bytes
    elif w.consumed is not None and w.weights is not None:
        terms.non_torch_bytes = max(0, w.consumed.bytes - w.weights.bytes)
    if w.activation_peak is not None:
        peak = w.activation_peak.bytes
        if w.consumed is not None and subtracted and w.cudagraph_estimate is not None:
            peak -= w.cudagraph_estimate.bytes  # the summary's 'peak activation' holds the graph estimate
        terms.activation_peak_bytes = max(0, peak)
    return terms


def _graphs_subtracted(reading: LogReading) -> bool:
    if reading.release is None or reading.engine == "v0":
        return False
    return bool(behaviour("cudagraph_memory_subtracted", parse_version(reading.release)).value)


def _ranges(lines: list[int]) -> str:
    return ", ".join(str(n) for n in lines[:6]) + ("..." if len(lines) > 6 else "")


def gib(value: Optional[int]) -> Optional[float]:
    return None if value is None else value / GIB
