"""Per-GPU memory as vLLM accounts it: weights, activation peak of the profiling run, non-torch
memory, CUDA-graph estimate -> bytes left for the KV cache.

vLLM measures three of these at start-up (profile_run); we estimate them from tensor sizes, with
the constants in data/vllm_memory.yaml (each with its source). Formula, @ v0.18.0
(vllm/v1/worker/gpu_worker.py determine_available_memory 350-470, kv-capacity.md section 1):

    requested    = ceil(total x gpu_memory_utilization)
    available_kv = requested - weights - peak_activation - non_torch - (cudagraph if >= v0.20.0)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..catalog.types import GpuSpec, ModelSpec
from .behaviour import estimate
from .figures import Figure, GiB, gib
from .shapes import GpuShapes

_GRAPH_SRC = "vllm/config/vllm.py 1287-1410 @ v0.18.0 (capture sizes); flags.yaml cudagraph_capture_sizes"


@dataclass(frozen=True)
class StageInfo:
    """One pipeline stage: its GPU, its layers, and whether it holds the embedding / LM head."""

    index: int
    gpu: GpuSpec
    layers: int
    kinds: dict[str, int]
    dense_layers: int
    moe_layers: int
    first: bool
    last: bool
    cached_kinds: dict[str, int] | None = None  # the layers keeping a KV cache of their own; None = kinds


def weights_bytes(model: ModelSpec, shapes: GpuShapes, stage: StageInfo, pp: int) -> Figure:
    """Weights one GPU of this stage holds (model_runner.model_memory_usage)."""
    act = shapes.wfmt.act_bytes
    parts = {
        "attention": _attention_bytes(shapes, stage),
        "linear mixers": stage.kinds.get("linear", 0) * shapes.mixer_bytes(),
        "dense MLP": stage.dense_layers * shapes.dense_mlp_bytes(),
        "MoE": stage.moe_layers * shapes.moe_bytes(),
        "norms": stage.layers * model.norms_per_layer * model.hidden_size * act,
    }
    if stage.first:
        parts["embedding"] = shapes.embed_params * act
    if stage.last and not (model.tie_word_embeddings and pp == 1):
        parts["lm_head"] = shapes.lm_head.weight_bytes
    total = sum(parts.values())
    how = " + ".join(f"{k} {v / GiB:.2f}" for k, v in parts.items() if v) + f" GiB ({shapes.wfmt.describe()}"
    how += f"; TP {shapes.tp}" + (f", EP {shapes.ep}" if shapes.ep > 1 else "") + f"; {stage.layers} layers)"
    return Figure(value=total, unit="bytes", how=how, source="parameter shapes from the model config; "
                  "sharding as in vLLM's parallel linear layers (reader/capacity/shapes.py)")


def _attention_bytes(shapes: GpuShapes, stage: StageInfo) -> float:
    """The stage's attention layers, each kind at its own shapes; the KV-shared ones without K and V."""
    cached = stage.cached_kinds or stage.kinds
    total = 0.0
    for kind in ("full", "sliding", "chunked"):
        n, own = stage.kinds.get(kind, 0), cached.get(kind, 0)
        total += own * shapes.attn_bytes(kind) + (n - own) * shapes.attn_bytes(kind, cached=False)
    return total


def _forward_peak(model: ModelSpec, shapes: GpuShapes, tokens: int, moe_tokens: int) -> tuple[float, str]:
    """Largest set of live tensors in one layer of the profiling forward pass."""
    act = shapes.wfmt.act_bytes
    h = model.hidden_size
    streams = estimate("fwd_activation_streams").value * tokens * h * act
    attn = tokens * act * (sum(g.n for g in shapes.attn if g.name != "o") + shapes.attn[-1].k + h)
    inter = shapes.mlp_inter
    out_widths = sum(g.n for g in shapes.dense_mlp[:-1])
    mlp = tokens * act * (out_widths + inter + h)  # up (or gate_up) out + activation out + down out
    what = "MLP"
    peak = max(attn, mlp)
    if shapes.moe is not None and model.moe is not None:
        m = shapes.moe
        chunk = min(moe_tokens, estimate("fused_moe_chunk_tokens").value)
        workspace = chunk * m.top_k * (max(2 * m.inter, m.hidden) + m.inter) * act
        moe = workspace + moe_tokens * (h * act + m.num_experts * 4)  # gathered input + fp32 router logits
        if moe > peak:
            peak, what = moe, f"fused-MoE workspace ({chunk} tokens x top-{m.top_k})"
    if attn >= peak:
        what = "attention"
    return streams + peak, what


def activation_peak(model: ModelSpec, shapes: GpuShapes, stage: StageInfo, mnbt: int, max_num_seqs: int,
                    moe_token_factor: int) -> Figure:
    """Torch peak of the profiling run: max(forward at max_num_batched_tokens, dummy sampler pass)."""
    fwd, what = _forward_peak(model, shapes, mnbt, mnbt * moe_token_factor)
    how = f"max(forward at {mnbt} tokens: {gib(fwd)} ({what} peak)"
    value = fwd
    if stage.last:
        per_logit = estimate("sampler_bytes_per_logit").value
        sampler = per_logit * max_num_seqs * model.vocab_size + mnbt * model.hidden_size * shapes.wfmt.act_bytes
        how += (f", sampler pass: {max_num_seqs} seqs x {model.vocab_size} vocab x {per_logit} B + hidden "
                f"states = {gib(sampler)}")
        value = max(fwd, sampler)
    how += ")"
    if moe_token_factor > 1:
        how += f"; MoE layers see {moe_token_factor} DP ranks' tokens"
    return Figure(value=value, unit="bytes", how=how, estimated=True,
                  source="estimate (vLLM measures torch peak in profile_run); constants in data/vllm_memory.yaml")


def non_torch_bytes(world: int, estimate_name: str) -> Figure:
    """estimate_name: the non-torch estimate the release's profiler accounting calls for (behaviour
    non_torch_estimate: V0 and V1 counted it differently over the releases)."""
    base = estimate(estimate_name).value
    extra = estimate("non_torch_bytes_distributed_extra").value if world > 1 else 0
    how = f"{base / GiB:.2f} GiB (cuBLAS/attention buffers)" + (
        f" + {extra / GiB:.2f} GiB (NCCL / all-reduce buffers, {world} GPUs)" if extra else "")
    return Figure(value=base + extra, unit="bytes", how=how, estimated=True,
                  source="estimate within the range of V1 start-up logs; data/vllm_memory.yaml")


def capture_sizes(max_num_seqs: int, mnbt: int, spec_tokens: int, user_sizes: list[int] | None,
                  user_max: int | None, default_max: int = 512) -> list[int]:
    """CUDA-graph capture sizes as vLLM v0.18.0 derives them (vllm/config/vllm.py 1287-1410)."""
    if user_sizes:
        return sorted({s for s in user_sizes if 0 < s <= mnbt})
    cap = user_max if user_max else min(max_num_seqs * (1 + spec_tokens) * 2, default_max)
    cap = min(mnbt, cap)
    sizes = [1, 2, 4] + list(range(8, 256, 8)) + list(range(256, cap + 1, 16))
    return [s for s in sizes if s <= cap]


def cudagraph_bytes(model: ModelSpec, layers: int, sizes: list[int]) -> Figure:
    if not sizes:
        return Figure(value=0, unit="bytes", how="no CUDA graphs (enforce_eager or no sizes)")
    per_layer = estimate("cudagraph_bytes_per_graph_per_layer").value
    per_tok = estimate("cudagraph_bytes_per_token_hidden").value
    value = len(sizes) * layers * per_layer + per_tok * model.hidden_size * sum(sizes)
    how = (f"{len(sizes)} graphs (sizes {sizes[0]}..{sizes[-1]}) x {layers} layers x {per_layer / 2**20:.3f} MiB "
           f"+ {per_tok} B x hidden {model.hidden_size} x sum of sizes = {gib(value)}")
    return Figure(value=value, unit="bytes", how=how, estimated=True,
                  source="rough estimate from public capture logs (data/vllm_memory.yaml); " + _GRAPH_SRC)


def requested_bytes(gpu: GpuSpec, util: float) -> Figure:
    value = math.ceil(gpu.memory_bytes * util)
    return Figure(value=value, unit="bytes", source="vllm/v1/worker/utils.py request_memory 403-423 @ v0.18.0",
                  how=f"ceil({gpu.memory_bytes / GiB:.2f} GiB total ({gpu.id}) x gpu_memory_utilization {util:g})"
                      f" = {gib(value)}")
