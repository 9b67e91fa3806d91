"""Parameter counts from a model's shapes, layer by layer (no safetensors needed).

Counts follow the modules vLLM builds for each family: attention (GQA, MLA, Qwen3-Next's output
gate), dense MLPs (gated SwiGLU with three matrices, or GPT-2/OPT/Nemotron-H's two), MoE blocks
(routed and shared experts, router, DeepSeek's score bias, Qwen's shared-expert gate), the
recurrent mixers of hybrid models (Gated DeltaNet, Mamba2) and the outer embeddings. Vision
towers and MTP/draft layers are not counted (vLLM loads those only for images or speculation).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from .types import MLASpec, MoESpec, SsmSpec

ATTENTION_MIXERS = ("full", "sliding", "chunked")


@dataclass(frozen=True)
class Shape:
    """Everything the parameter count needs, normalised across families."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool
    moe: Optional[MoESpec] = None
    mla: Optional[MLASpec] = None
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    norms_per_layer: int = 2
    attention_sinks: bool = False
    expert_bias: bool = False
    router_bias: bool = False
    router_score_bias: bool = False
    shared_expert_gate: bool = False
    # Added for families outside the Llama mould
    mlp_gated: bool = True  # three matrices (gate, up, down) or two (up/fc1, down/fc2)
    mlp_bias: bool = False
    norm_bias: bool = False  # LayerNorm (weight and bias) instead of RMSNorm
    learned_positions: int = 0
    attn_output_gate: bool = False
    ssm: Optional[SsmSpec] = None
    mamba_bias: bool = False  # Mamba2 in_proj/out_proj biases (use_bias)
    mamba_conv_bias: bool = True
    mixers: tuple[str, ...] = ()  # per layer; empty = every layer full attention
    ffns: tuple[str, ...] = ()  # per layer; empty = MoE where moe.is_moe_layer, else dense
    extra_outer: int = 0  # parameters outside the layers not covered above (OPT's projections)
    # Gemma 4: full-attention layers' own head size and KV heads; the last kv_shared_layers layers hold no K or V
    # projection (Gemma4Attention, vllm/model_executor/models/gemma4.py @ v0.32.0)
    full_head_dim: Optional[int] = None
    full_kv_heads: Optional[int] = None
    kv_shared_layers: int = 0

    def mixer(self, index: int) -> str:
        return self.mixers[index] if self.mixers else "full"

    def ffn(self, index: int) -> str:
        if self.ffns:
            return self.ffns[index]
        return "moe" if self.moe is not None and self.moe.is_moe_layer(index) else "dense"


def attention_params(s: Shape) -> int:
    if s.mla is not None:
        m = s.mla
        qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim
        if m.q_lora_rank:
            q = s.hidden * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * s.heads * qk_head
        else:
            q = s.hidden * s.heads * qk_head
        kv = (s.hidden * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
              + m.kv_lora_rank * s.heads * (m.qk_nope_head_dim + m.v_head_dim))
        return q + kv + s.heads * m.v_head_dim * s.hidden
    q_width, kv_width = s.heads * s.head_dim, s.kv_heads * s.head_dim
    q_out = q_width * (2 if s.attn_output_gate else 1)
    params = s.hidden * (q_out + 2 * kv_width) + q_width * s.hidden
    if s.qkv_bias:
        params += q_out + 2 * kv_width
    if s.o_bias:
        params += s.hidden
    if s.qk_norm:
        params += 2 * s.head_dim
    if s.attention_sinks:
        params += s.heads
    return params


def attention_by_layer(s: Shape) -> list[int]:
    """Each layer's attention parameters (0 for a layer with another mixer), each distinct shape counted once."""
    if s.full_head_dim is None and not s.kv_shared_layers:
        uniform = attention_params(s)
        return [uniform if s.mixer(i) in ATTENTION_MIXERS else 0 for i in range(s.layers)]
    return [layer_attention_params(s, i) if s.mixer(i) in ATTENTION_MIXERS else 0 for i in range(s.layers)]


def layer_attention_params(s: Shape, index: int) -> int:
    """One layer's attention as vLLM builds it: a full-attention layer at its own head size and KV heads where the
    model gives them (vLLM allocates the V shard of an attention_k_eq_v layer too, filled with K's weights), and a
    KV-shared layer with q_proj and o_proj only, no k_norm (Gemma4Attention, gemma4.py @ v0.32.0)."""
    wide = s.mixer(index) == "full" and s.full_head_dim is not None
    own = replace(s, head_dim=s.full_head_dim, kv_heads=s.full_kv_heads or s.kv_heads) if wide else s
    params = attention_params(own)
    if index >= s.layers - s.kv_shared_layers:
        kv_width = own.kv_heads * own.head_dim
        params -= s.hidden * 2 * kv_width + (2 * kv_width if own.qkv_bias else 0) + (own.head_dim if own.qk_norm else 0)
    return params


def ssm_params(s: Shape) -> int:
    """One linear-attention / Mamba layer's mixer (vLLM's QwenGatedDeltaNetAttention, MambaMixer2)."""
    m = s.ssm
    assert m is not None
    if m.kind == "gated_delta_net":
        key, value = m.key_size, m.inner_size
        in_proj = s.hidden * (2 * key + 2 * value) + s.hidden * 2 * m.heads  # in_proj_qkvz + in_proj_ba
        conv = (2 * key + value) * m.conv_kernel  # no bias
        return in_proj + conv + 2 * m.heads + m.head_dim + value * s.hidden  # dt_bias, A_log, norm, out_proj
    if m.kind == "short_conv":  # in_proj (B, C, x), the depthwise conv, out_proj; biased where conv_bias
        dim = m.inner_size
        biases = 3 * dim + dim + s.hidden if s.mamba_bias else 0
        return s.hidden * 3 * dim + dim * m.conv_kernel + dim * s.hidden + biases
    inner, bc = m.inner_size, 2 * m.key_size
    in_width = 2 * inner + bc + m.heads  # z, x, B, C, dt
    in_proj = s.hidden * in_width + (in_width if s.mamba_bias else 0)
    conv = (inner + bc) * m.conv_kernel + ((inner + bc) if s.mamba_conv_bias else 0)
    out_proj = inner * s.hidden + (s.hidden if s.mamba_bias else 0)
    return in_proj + conv + 3 * m.heads + inner + out_proj  # A, D, dt_bias, gated norm


def mlp_params(s: Shape, size: int, *, bias: bool = False) -> int:
    matrices = 3 if s.mlp_gated else 2
    params = matrices * s.hidden * size
    if bias:
        params += (matrices - 1) * size + s.hidden
    return params


def _expert_params(s: Shape, size: int, width: Optional[int] = None) -> int:
    """One expert of intermediate `size` working on vectors of `width` (the hidden size, or a latent size)."""
    width = width or s.hidden
    params = (3 if s.mlp_gated else 2) * width * size
    if s.expert_bias:
        params += 2 * size + width
    return params


def moe_layer_params(s: Shape) -> tuple[int, int]:
    """(all parameters, parameters used per token) of one MoE feed-forward block."""
    moe = s.moe
    assert moe is not None
    expert = _expert_params(s, moe.moe_intermediate_size, moe.latent_size)
    router = s.hidden * moe.num_experts
    router += moe.num_experts if s.router_bias else 0
    router += moe.num_experts if s.router_score_bias else 0
    shared_size = moe.shared_expert_intermediate_size or moe.moe_intermediate_size
    shared = moe.shared_experts * _expert_params(s, shared_size)
    shared += s.hidden if s.shared_expert_gate else 0
    shared += 2 * s.hidden * moe.latent_size if moe.latent_size else 0  # fc1/fc2_latent_proj
    total = moe.num_experts * expert + router + shared
    return total, moe.experts_per_token * expert + router + shared


def is_moe_layer(moe: Optional[MoESpec], index: int) -> bool:
    return moe is not None and moe.is_moe_layer(index)


def params_by_part(s: Shape) -> dict[str, int]:
    """Parameters of each part of the model (the parts a quantization format can cover, plus the
    embedding, norms and MoE routers, which none does). They add up to count_params' total."""
    parts = dict.fromkeys(("embedding", "attention", "linear_mixer", "dense_mlp", "experts", "shared_experts",
                           "router", "norms", "lm_head"), 0)
    norm = s.hidden * (2 if s.norm_bias else 1)
    parts["embedding"] = s.vocab * s.hidden + s.learned_positions * s.hidden + s.extra_outer
    parts["lm_head"] = 0 if s.tied else s.vocab * s.hidden
    parts["norms"] = norm * (1 + s.norms_per_layer * s.layers)
    linear = ssm_params(s) if s.ssm is not None else 0
    attention = attention_by_layer(s)
    dense = mlp_params(s, s.intermediate, bias=s.mlp_bias)
    if s.moe is not None:
        moe = s.moe
        experts = moe.num_experts * _expert_params(s, moe.moe_intermediate_size, moe.latent_size)
        shared_size = moe.shared_expert_intermediate_size or moe.moe_intermediate_size
        shared = moe.shared_experts * _expert_params(s, shared_size)
        shared += (s.hidden if s.shared_expert_gate else 0) + (2 * s.hidden * moe.latent_size if moe.latent_size else 0)
        router = moe_layer_params(s)[0] - experts - shared
    for index in range(s.layers):
        mixer, ffn = s.mixer(index), s.ffn(index)
        if mixer in ATTENTION_MIXERS:
            parts["attention"] += attention[index]
        elif mixer == "linear":
            parts["linear_mixer"] += linear
        if ffn == "dense":
            parts["dense_mlp"] += dense
        elif ffn == "moe":
            parts["experts"] += experts
            parts["shared_experts"] += shared
            parts["router"] += router
    return parts


def count_params(s: Shape) -> tuple[int, Optional[int]]:
    """(params_total, params_active) from the shapes; active is None for dense models."""
    norm = s.hidden * (2 if s.norm_bias else 1)
    embed = s.vocab * s.hidden + s.learned_positions * s.hidden
    outer = embed + (0 if s.tied else s.vocab * s.hidden) + norm + s.extra_outer
    total = active = outer
    moe_total, moe_active = moe_layer_params(s) if s.moe else (0, 0)
    linear = ssm_params(s) if s.ssm is not None else 0
    attention = attention_by_layer(s)
    dense = mlp_params(s, s.intermediate, bias=s.mlp_bias)
    for index in range(s.layers):
        layer = s.norms_per_layer * norm + attention[index] + (linear if s.mixer(index) == "linear" else 0)
        ffn = s.ffn(index)
        if ffn == "moe":
            total += layer + moe_total
            active += layer + moe_active
        else:
            extra = dense if ffn == "dense" else 0
            total += layer + extra
            active += layer + extra
    return total, (active if s.moe else None)


__all__ = ["Shape", "count_params", "params_by_part", "attention_params", "ssm_params", "mlp_params", "moe_layer_params",
           "is_moe_layer", "ATTENTION_MIXERS"]
