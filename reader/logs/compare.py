"""Each memory term vLLM logged beside what the capacity model predicts for the same deployment, with
the reason a difference arises (the model's assumption for that term, in numbers).

Predicted figures come from a Capacity computed WITHOUT the log's measurements; the logged ones from
the LogReading. Where the log is silent on a term the row says so; where it states the KV size in
tokens or blocks, the bytes per token it implies are checked against the model's KV layout.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from ..capacity.api import Capacity
from .reading import GIB, Figure as LoggedFigure, LogReading
from .terms import measured_terms

Term = Literal["total", "requested", "weights", "activation_peak", "non_torch", "cudagraph", "available_kv",
               "num_gpu_blocks", "kv_tokens", "max_concurrency"]
LABELS = {"total": "GPU memory (total)", "requested": "requested (x utilization)", "weights": "weights",
          "activation_peak": "activation peak (profiling run)", "non_torch": "non-torch memory",
          "cudagraph": "CUDA graphs", "available_kv": "available KV cache memory", "num_gpu_blocks": "KV blocks",
          "kv_tokens": "KV cache size (tokens)", "max_concurrency": "maximum concurrency"}
_UNITS = {"num_gpu_blocks": "blocks", "kv_tokens": "tokens", "max_concurrency": "x"}
CLOSE = 0.05  # within 5%: no explanation needed


class TermRow(BaseModel):
    term: Term
    label: str
    unit: str  # "GiB", "blocks", "tokens", "x"
    logged: Optional[float] = None
    logged_line: Optional[int] = None
    predicted: Optional[float] = None
    predicted_how: str = ""
    why: str = ""  # why the two differ, or why one is missing

    @property
    def difference_pct(self) -> Optional[float]:
        if self.logged is None or self.predicted is None or self.logged == 0:
            return None
        return 100.0 * (self.predicted / self.logged - 1.0)


class MemoryComparison(BaseModel):
    rows: list[TermRow] = Field(default_factory=list)
    kv_bytes_per_token_logged: Optional[float] = None
    kv_bytes_per_token_predicted: Optional[float] = None
    notes: list[str] = Field(default_factory=list)

    def row(self, term: str) -> Optional[TermRow]:
        return next((r for r in self.rows if r.term == term), None)


def compare_memory(reading: LogReading, predicted: Capacity, gpu_assumed: bool = False) -> MemoryComparison:
    w = reading.memory
    cap_w = predicted.workers[0]
    terms = measured_terms(reading)
    out = MemoryComparison()
    logged = {
        "total": _gib(w.total) if reading.kv.device == "GPU" else None, "requested": _gib(w.requested),
        "weights": _gib(w.weights), "activation_peak": _opt(terms.activation_peak_bytes),
        "non_torch": _opt(terms.non_torch_bytes), "cudagraph": _opt(terms.cudagraph_memory_bytes),
        "available_kv": _gib(w.available_kv),
        "num_gpu_blocks": _count(reading.kv.num_gpu_blocks), "kv_tokens": _count(reading.kv.kv_tokens),
        "max_concurrency": _count(reading.kv.max_concurrency),
    }
    lines = {"total": w.total, "requested": w.requested, "weights": w.weights, "activation_peak": w.activation_peak,
             "non_torch": w.non_torch or w.consumed, "cudagraph": w.cudagraph_estimate or w.cudagraph,
             "available_kv": w.available_kv, "num_gpu_blocks": reading.kv.num_gpu_blocks,
             "kv_tokens": reading.kv.kv_tokens, "max_concurrency": reading.kv.max_concurrency}
    figures = {"total": cap_w.total, "requested": cap_w.requested, "weights": cap_w.weights,
               "activation_peak": cap_w.activation_peak, "non_torch": cap_w.non_torch, "cudagraph": cap_w.cudagraph,
               "available_kv": cap_w.available_kv, "num_gpu_blocks": predicted.num_gpu_blocks,
               "kv_tokens": predicted.gpu_kv_cache_tokens, "max_concurrency": predicted.max_concurrency}
    for term in LABELS:
        fig = figures[term]
        unit = _UNITS.get(term, "GiB")
        value = fig.value / GIB if unit == "GiB" else fig.value
        line = lines[term]
        row = TermRow(term=term, label=LABELS[term], unit=unit, logged=logged[term],
                      logged_line=line.line if isinstance(line, LoggedFigure) else None,
                      predicted=value, predicted_how=fig.how)
        row.why = _why(term, row, reading, predicted, gpu_assumed)
        out.rows.append(row)
    _per_token(out, reading, predicted)
    return out


def _why(term: str, row: TermRow, reading: LogReading, cap: Capacity, gpu_assumed: bool) -> str:
    if row.logged is None:
        return "not in the log" + ("" if reading.kv.device == "GPU" or term != "total" else
                                   f" (vLLM's {reading.kv.device} backend sizes its cache from its own setting)")
    pct = row.difference_pct
    if pct is not None and abs(pct) <= 100 * CLOSE:
        return "agrees within 5%"
    if reading.kv.device != "GPU" and term in ("available_kv", "num_gpu_blocks", "kv_tokens", "max_concurrency"):
        return (f"vLLM's {reading.kv.device} backend sizes its KV cache from its own setting (VLLM_CPU_KVCACHE_SPACE), "
                f"not from a GPU's memory; the prediction is for {cap.gpu}")
    if term in ("num_gpu_blocks", "kv_tokens", "max_concurrency") and "num_gpu_blocks_override" in reading.resolved:
        return "num_gpu_blocks_override fixes the block count whatever the memory"
    gap = "" if row.predicted is None else f"{row.predicted - row.logged:+.2f} {row.unit}: "
    return gap + _reason(term, reading, cap, gpu_assumed)


# Why a logged term and its prediction differ: what the prediction assumes for that term.
REASONS_TEXT = {
    "total": "the catalog's total memory of the GPU differs from what torch reported on that machine (another GPU "
             "than assumed, driver, ECC or MIG)",
    "requested": "total memory x gpu_memory_utilization: follows the total (and the utilization, if the log's differs)",
    "weights": "estimated from the parameter shapes and the weight format; the checkpoint's real tensors differ "
               "(quantization scales and zero points, tied or untied embeddings, vision or audio towers, a draft model)",
    "activation_peak": "estimated from the tensors of the profiling run (hidden states and the largest layer at "
                       "max_num_batched_tokens, or the sampler pass over max_num_seqs x vocabulary); vLLM measures "
                       "torch's peak, which also holds allocator rounding and kernel workspaces",
    "non_torch": "an allowance per GPU for the release's profiler accounting (more with several GPUs); vLLM measures "
                 "cuBLAS, NCCL and attention buffers, and some releases the CUDA context too",
    "cudagraph": "estimated from the capture sizes and the layers; releases before 0.20.0 do not subtract graph memory "
                 "from the KV budget, so a logged capture size there is after the fact",
    "available_kv": "requested minus the terms above: the sum of their differences",
    "num_gpu_blocks": "available KV memory / bytes per block: follows the available memory (and the block size)",
    "kv_tokens": "blocks x block size per KV-cache group: follows the available memory and the KV layout",
    "max_concurrency": "KV tokens / max_model_len: follows the KV tokens (and max_model_len, if it differs)",
}


def _reason(term: str, reading: LogReading, cap: Capacity, gpu_assumed: bool) -> str:
    if term == "total" and gpu_assumed:
        return f"the GPU was not given, so {cap.gpu} was assumed; the log's device is another one (give --gpu)"
    if term == "weights":
        return REASONS_TEXT[term].replace("the weight format", cap.weight_format)
    if term == "non_torch" and reading.engine == "v0":
        return REASONS_TEXT[term] + " (V0 counted the CUDA context in several releases)"
    return REASONS_TEXT[term]


def _per_token(out: MemoryComparison, reading: LogReading, cap: Capacity) -> None:
    """The KV bytes per token the log implies (available memory / tokens) against the model's layout."""
    w = reading.memory
    tokens = reading.kv.kv_tokens
    if w.available_kv is None or tokens is None or tokens.value <= 0 or "num_gpu_blocks_override" in reading.resolved:
        return
    logged = w.available_kv.value * GIB / tokens.value
    predicted = cap.workers[0].available_kv.value / cap.gpu_kv_cache_tokens.value if cap.gpu_kv_cache_tokens.value \
        else None
    out.kv_bytes_per_token_logged = logged
    out.kv_bytes_per_token_predicted = predicted
    if predicted and abs(logged / predicted - 1) > 0.05:
        out.notes.append(
            f"the log's KV memory holds {logged:,.0f} bytes per token, the model's layout {predicted:,.0f}: the KV "
            "layout differs (KV-cache dtype, sliding-window or hybrid layer groups, MLA, or a different checkpoint)")


def _gib(figure: Optional[LoggedFigure]) -> Optional[float]:
    return None if figure is None else figure.value


def _count(figure: Optional[LoggedFigure]) -> Optional[float]:
    return None if figure is None else figure.value


def _opt(value: Optional[int]) -> Optional[float]:
    return None if value is None else value / GIB
