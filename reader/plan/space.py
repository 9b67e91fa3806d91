"""The search space of a plan: replica shapes (GPU type, tensor x pipeline parallel within a node) and
the grid of scheduler knobs tried jointly on each.

A knob the config pins (sets itself) is not searched unless the user releases it with --vary; the
parallel sizes are always searched, with the GPU type they belong to.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from ..catalog.types import GpuSpec, ModelSpec

TP_SIZES = (1, 2, 4, 8, 16)
PP_SIZES = (1, 2, 4, 8)
# The knobs a plan searches (and reports), and the values tried before the bounds narrow them.
KNOBS = ("max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill", "kv_cache_dtype",
         "gpu_memory_utilization")
BUDGETS = (256, 512, 1024, 2048, 4096, 8192, 16384)
SEQS = (32, 64, 128, 256, 512, 1024)
# From this budget up, one long prompt can fill a step; a threshold of a quarter leaves room for the others.
LONG_PREFILL_FROM = 2048
PARALLEL = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel")


def layout_words(tp: int, pp: int = 1, ep: bool = False) -> str:
    """A replica's parallel layout as the reports write it: TP4, TP2 PP2, TP4 EP."""
    return f"TP{tp}" + (f" PP{pp}" if pp > 1 else "") + (" EP" if ep else "")


@dataclass(frozen=True, order=True)
class Shape:
    """One replica's hardware: `tp` x `pp` GPUs of one type; ep: a MoE model's experts spread whole over the
    tensor parallel ranks (--enable-expert-parallel) instead of each sliced over them."""

    gpu: str
    tp: int
    pp: int = 1
    ep: bool = False

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def label(self) -> str:
        return f"{self.gpu} {layout_words(self.tp, self.pp, self.ep)}"

    def flags(self) -> dict[str, Any]:
        """The parallel flags of one replica (None: not written, vLLM's default of 1, or off)."""
        return {"tensor_parallel_size": self.tp if self.tp > 1 else None,
                "pipeline_parallel_size": self.pp if self.pp > 1 else None, "data_parallel_size": None,
                "enable_expert_parallel": True if self.ep else None}


def shapes(gpus: list[GpuSpec], model: ModelSpec, max_gpus: int, per_node: int, tp_sizes: tuple[int, ...] = TP_SIZES,
           pp_sizes: tuple[int, ...] = PP_SIZES, expert_parallel: bool = True) -> tuple[list[Shape], list[str]]:
    """Every TP x PP within one node and --max-gpus, per GPU type, and for a MoE model each TP > 1 also with
    expert parallelism (expert_parallel); and what was left out, with why.

    Tensor parallelism must divide the attention heads (vLLM refuses otherwise; the rules say so too,
    but a shape that can never start is not worth a line per GPU type)."""
    out: list[Shape] = []
    left_out: list[str] = []
    for gpu in gpus:
        for pp in pp_sizes:
            for tp in tp_sizes:
                if tp * pp > min(per_node, max_gpus):
                    continue
                if model.num_attention_heads % tp:
                    continue
                if pp > model.num_hidden_layers:
                    continue
                out.append(Shape(gpu.id, tp, pp))
                if expert_parallel and model.is_moe and tp > 1:
                    out.append(Shape(gpu.id, tp, pp, ep=True))
    heads = model.num_attention_heads
    skipped = [tp for tp in tp_sizes if tp <= per_node and heads % tp]
    if skipped:
        left_out.append(f"tensor parallel sizes {', '.join(map(str, skipped))}: {heads} attention heads do not divide")
    return out, left_out


def model_max_len(workload_longest: int, lookahead: int = 0) -> int:
    """The max_model_len a plan sets: the workload's longest request (plus speculative lookahead), rounded up
    to a multiple of 1,024 tokens."""
    return int(math.ceil((workload_longest + 1 + lookahead) / 1024) * 1024)


@dataclass(frozen=True)
class KnobSpace:
    """The values a plan tries, per shape, for the knobs that decide the SLOs. A value the shape's bounds
    rule out is not tried (`bounds.useful_budgets`, `bounds.useful_seqs`)."""

    budgets: tuple[int, ...] = BUDGETS
    seqs: tuple[int, ...] = SEQS
    kv_dtypes: tuple[str, ...] = ("auto", "fp8")
    unchunked: bool = True  # also chunked prefill off (the budget then covers max_model_len)
    long_prefill: bool = True  # also long_prefill_token_threshold at a quarter of budgets from LONG_PREFILL_FROM
    tp_sizes: tuple[int, ...] = TP_SIZES
    pp_sizes: tuple[int, ...] = PP_SIZES
    expert_parallel: bool = True  # a MoE model's TP shapes also with --enable-expert-parallel


def knob_grid(budgets: list[int], seqs: list[int], dtypes: list[str], chunking: list[bool], max_len: int,
              pinned: set[str], long_prefill: bool = False) -> list[dict[str, Any]]:
    """Every combination of the knob values (a pinned knob keeps the config's value). Without chunked prefill
    the budget covers max_model_len; max_num_seqs above the budget is left out: vLLM refuses both. With
    long_prefill, chunked budgets from LONG_PREFILL_FROM also come with a threshold of a quarter of them."""
    budgets_or_pinned = [None] if "max_num_batched_tokens" in pinned else budgets
    seqs_or_pinned = [None] if "max_num_seqs" in pinned else seqs
    dtypes_or_pinned = [None] if "kv_cache_dtype" in pinned else dtypes
    out = []
    for chunked, dtype, seq in itertools.product(chunking, dtypes_or_pinned, seqs_or_pinned):
        for budget in (budgets_or_pinned if chunked else [max([max_len, *budgets])]):
            if budget is not None and seq is not None and seq > budget:
                continue
            changes = {"max_num_batched_tokens": budget, "max_num_seqs": seq,
                       "kv_cache_dtype": None if dtype == "auto" else dtype,
                       "enable_chunked_prefill": None if chunked or "enable_chunked_prefill" in pinned else False}
            out.append({k: v for k, v in changes.items() if v is not None})
            if long_prefill and chunked and budget is not None and budget >= LONG_PREFILL_FROM \
                    and "long_prefill_token_threshold" not in pinned:
                out.append({**out[-1], "long_prefill_token_threshold": budget // 4})
    return _unique(out)


def _unique(grid: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for changes in grid:
        key = tuple(sorted(changes.items()))
        if key not in seen:
            seen.add(key)
            out.append(changes)
    return out
