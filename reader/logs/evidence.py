"""A vLLM log as Evidence (reader/evidence): what its stats lines saw, and the memory it measured at start-up.

The stats lines are samples, one per logging interval: running and waiting requests and KV-cache usage at
that moment, throughput averaged over the interval. Counters the log does not print (steps, latencies) stay
unknown. The memory terms become figures under keys the predicted side fills from the capacity model
(memory_figures), so the comparison puts each term logged beside predicted.
"""
from __future__ import annotations

import statistics
from typing import Optional

from ..capacity.api import Capacity
from ..evidence.model import Evidence, Figure
from .compare import LABELS, REASONS_TEXT
from .reading import GIB, LogReading
from .terms import measured_terms

# Memory rows: key, the term, its unit.
_MEMORY = (("memory.total_gib", "total"), ("memory.requested_gib", "requested"), ("memory.weights_gib", "weights"),
           ("memory.activation_peak_gib", "activation_peak"), ("memory.non_torch_gib", "non_torch"),
           ("memory.cudagraph_gib", "cudagraph"), ("memory.available_kv_gib", "available_kv"))
TOLERANCE = 0.05


def log_evidence(reading: LogReading) -> Evidence:
    stats = reading.stats
    ev = Evidence(source="log", description=_describe(reading))
    if stats:
        seconds = [s.seconds for s in stats if s.seconds is not None]
        ev.duration_s = (max(seconds) - min(seconds)) if len(seconds) > 1 else None
        ev.samples, ev.sample_unit = len(stats), "stats lines"
        ev.running_mean = statistics.fmean(s.running for s in stats)
        ev.running_peak = float(max(s.running for s in stats))
        ev.waiting_mean = statistics.fmean(s.waiting for s in stats)
        ev.waiting_peak = max(s.waiting for s in stats)
        ev.kv_usage_mean = statistics.fmean(s.kv_usage_pct for s in stats) / 100.0
        ev.kv_usage_peak = max(s.kv_usage_pct for s in stats) / 100.0
        ev.fraction_time_kv_above_95pct = sum(s.kv_usage_pct > 95.0 for s in stats) / len(stats)
        ev.output_throughput = statistics.fmean(s.generation_tps for s in stats)
        ev.total_token_throughput = statistics.fmean(s.prompt_tps + s.generation_tps for s in stats)
    if reading.preemptions.warnings:
        ev.preemptions = reading.preemptions.cumulative
        ev.notes.append("preemptions: the count at vLLM's last preemption warning (it warns every 50th)")
    override = reading.resolved.get("num_gpu_blocks_override")  # 'Overriding num_gpu_blocks=X with ...=Y'
    if reading.kv.num_gpu_blocks is not None:
        ev.num_gpu_blocks = int(reading.kv.num_gpu_blocks.value)
    elif override is not None:
        ev.num_gpu_blocks = int(override.value)
    if reading.kv.kv_tokens is not None:
        ev.kv_cache_tokens = int(reading.kv.kv_tokens.value)
    ev.figures = _observed_figures(reading)
    return ev


def memory_figures(capacity: Capacity) -> list[Figure]:
    """The predicted side's memory rows (the first worker, as vLLM's log reports the first worker)."""
    w = capacity.workers[0]
    values = {"total": w.total, "requested": w.requested, "weights": w.weights, "activation_peak": w.activation_peak,
              "non_torch": w.non_torch, "cudagraph": w.cudagraph, "available_kv": w.available_kv}
    out = [_figure(key, term, values[term].value / GIB) for key, term in _MEMORY]
    out.append(_concurrency(capacity.max_concurrency.value))
    return out


def _observed_figures(reading: LogReading) -> list[Figure]:
    terms = measured_terms(reading)
    w = reading.memory
    gpu = reading.kv.device == "GPU"
    values: dict[str, Optional[float]] = {
        "total": w.total.value if w.total is not None and gpu else None,
        "requested": w.requested.value if w.requested is not None else None,
        "weights": _gib(terms.weights_bytes), "activation_peak": _gib(terms.activation_peak_bytes),
        "non_torch": _gib(terms.non_torch_bytes), "cudagraph": _gib(terms.cudagraph_memory_bytes),
        "available_kv": w.available_kv.value if w.available_kv is not None else None}
    out = [_figure(key, term, values[term]) for key, term in _MEMORY if values[term] is not None]
    if reading.kv.max_concurrency is not None:
        out.append(_concurrency(reading.kv.max_concurrency.value))
    return out


def _figure(key: str, term: str, value: Optional[float]) -> Figure:
    return Figure(key=key, label=LABELS[term], value=value, unit="GiB", group="memory", tolerance=TOLERANCE,
                  if_off=REASONS_TEXT[term])


def _concurrency(value: float) -> Figure:
    return Figure(key="kv.max_concurrency", label=LABELS["max_concurrency"], value=value, unit="x", group="kv",
                  tolerance=TOLERANCE, if_off=REASONS_TEXT["max_concurrency"])


def _gib(value: Optional[int]) -> Optional[float]:
    return None if value is None else value / GIB


def _describe(reading: LogReading) -> str:
    release = f"vLLM {reading.release}" if reading.release else "vLLM (release not printed)"
    parts = [f"{release} log {reading.source}"]
    if reading.stats:
        parts.append(f"{len(reading.stats)} stats lines")
    if reading.workers:
        parts.append("start-up memory of the first worker")
    return ", ".join(parts)
