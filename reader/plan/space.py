"""The search space of a plan: replica shapes (GPU type, tensor x pipeline parallel within a node) and
the scheduler knobs tried on each.

A knob the config pins (sets itself) is not searched unless the user releases it with --vary; the
parallel sizes are always searched, with the GPU type they belong to.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..catalog.types import GpuSpec, ModelSpec

TP_SIZES = (1, 2, 4, 8, 16)
PP_SIZES = (1, 2, 4, 8)
# The knobs a plan searches, in the order the fine stage tries them.
KNOBS = ("max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill", "kv_cache_dtype",
         "gpu_memory_utilization", "speculative_config")
PARALLEL = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size")
# Model types whose checkpoints carry multi-token-prediction heads that vLLM drafts with (method "mtp").
MTP_MODEL_TYPES = frozenset({"deepseek_v3", "deepseek_v32", "qwen3_next", "glm4_moe", "mimo", "ernie4_5_moe"})
NGRAM_DRAFT = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}
MTP_DRAFT = {"method": "mtp", "num_speculative_tokens": 1}


@dataclass(frozen=True, order=True)
class Shape:
    """One replica's hardware: `tp` x `pp` GPUs of one type."""

    gpu: str
    tp: int
    pp: int = 1

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def label(self) -> str:
        return f"{self.gpu} TP{self.tp}" + (f" PP{self.pp}" if self.pp > 1 else "")

    def flags(self) -> dict[str, Any]:
        """The parallel flags of one replica (None: not written, vLLM's default of 1)."""
        return {"tensor_parallel_size": self.tp if self.tp > 1 else None,
                "pipeline_parallel_size": self.pp if self.pp > 1 else None, "data_parallel_size": None}


def shapes(gpus: list[GpuSpec], model: ModelSpec, max_gpus: int, per_node: int) -> tuple[list[Shape], list[str]]:
    """Every TP x PP within one node and --max-gpus, per GPU type; and what was left out, with why.

    Tensor parallelism must divide the attention heads (vLLM refuses otherwise; the rules say so too,
    but a shape that can never start is not worth a line per GPU type)."""
    out: list[Shape] = []
    left_out: list[str] = []
    for gpu in gpus:
        for pp in PP_SIZES:
            for tp in TP_SIZES:
                if tp * pp > min(per_node, max_gpus):
                    continue
                if model.num_attention_heads % tp:
                    continue
                if pp > model.num_hidden_layers:
                    continue
                out.append(Shape(gpu.id, tp, pp))
    heads = model.num_attention_heads
    skipped = [tp for tp in TP_SIZES if tp <= per_node and heads % tp]
    if skipped:
        left_out.append(f"tensor parallel sizes {', '.join(map(str, skipped))}: {heads} attention heads do not divide")
    return out, left_out


def model_max_len(workload_longest: int, lookahead: int = 0) -> int:
    """The max_model_len a plan sets: the workload's longest request (plus speculative lookahead), rounded up
    to a multiple of 1,024 tokens."""
    return int(math.ceil((workload_longest + 1 + lookahead) / 1024) * 1024)


@dataclass(frozen=True)
class Signals:
    """What a candidate's simulation showed, for choosing which knobs are worth moving (as the diagnosis
    chooses its what-ifs from the evidence): a knob that did not bind is not moved."""

    seqs_capped: bool = False  # max_num_seqs stopped admission in some step
    preempted: bool = False  # requests were preempted (the KV cache was oversubscribed)
    kv_bound: bool = False  # admission waited for KV blocks, or requests were preempted
    budget_full: bool = False  # some step used the whole token budget
    itl_binding: bool = False  # ITL P99 is the SLO with the least margin
    itl_tight: bool = False  # ... and it is missed, or met by less than a quarter
    long_prompts: bool = False  # some prompt is longer than the token budget


def knob_variants(values: dict[str, Any], pinned: set[str], gpu: GpuSpec, model: ModelSpec, max_len: int,
                  signals: Signals, step: float = 2.0) -> list[tuple[str, dict[str, Any]]]:
    """(knob, changes) pairs: one knob moved from the base values at a time, where the base's simulation
    says it binds; numeric knobs move by `step` (x2 first, finer later). `values` holds the base's resolved
    settings; the rules and the capacity model judge every variant before it is simulated."""
    out: list[tuple[str, dict[str, Any]]] = []
    seqs, budget = values["max_num_seqs"], values["max_num_batched_tokens"]
    chunked = values["enable_chunked_prefill"]
    if "max_num_seqs" not in pinned:
        wanted = ([_round(seqs * step, 8)] if signals.seqs_capped else []) + \
            ([_round(seqs / step, 8)] if signals.preempted else [])
        for new in _within(wanted, low=16, high=2048):
            changes: dict[str, Any] = {"max_num_seqs": new}
            if new > budget:
                changes["max_num_batched_tokens"] = new  # vLLM requires max_num_batched_tokens >= max_num_seqs
            out.append(("max_num_seqs", changes))
    if "max_num_batched_tokens" not in pinned and chunked:
        wanted = ([_round(budget * step, 256)] if signals.budget_full else []) + \
            ([_round(budget / step, 256)] if signals.itl_binding else [])
        for new in _within(wanted, low=512, high=65536):
            changes = {"max_num_batched_tokens": new}
            if seqs > new:
                changes["max_num_seqs"] = new
            out.append(("max_num_batched_tokens", changes))
    if "enable_chunked_prefill" not in pinned:
        if chunked and signals.long_prompts:
            # Without chunking, a step must take a whole prompt: the budget covers max_model_len.
            out.append(("enable_chunked_prefill", {"enable_chunked_prefill": False,
                                                   "max_num_batched_tokens": max(budget, max_len)}))
        elif not chunked:
            out.append(("enable_chunked_prefill", {"enable_chunked_prefill": True}))
    if "kv_cache_dtype" not in pinned and values["kv_cache_dtype"] in ("auto", "bfloat16", "float16") \
            and gpu.fp8_tflops:
        out.append(("kv_cache_dtype", {"kv_cache_dtype": "fp8"}))
    util = values["gpu_memory_utilization"]
    if "gpu_memory_utilization" not in pinned and util is not None and util < 0.95 and signals.kv_bound:
        out.append(("gpu_memory_utilization", {"gpu_memory_utilization": 0.95}))
    # Speculative decoding is a latency tool, simulated at an assumed acceptance rate and step by step
    # (slowly): tried only where the ITL target is tight.
    if "speculative_config" not in pinned and values.get("speculative_config") is None and signals.itl_tight:
        out.append(("speculative_config", {"speculative_config": dict(
            MTP_DRAFT if model.model_type in MTP_MODEL_TYPES else NGRAM_DRAFT)}))
    return out


def _round(value: float, unit: int) -> int:
    return max(unit, int(round(value / unit)) * unit)


def _within(values: list[int], low: int, high: int) -> list[int]:
    return [v for v in values if low <= v <= high]
