"""Typed shapes of the catalog entries.

These are the contracts every later stage reads (KV sizing, weights, the step-time model):
values are normalised numbers, never free text; where a figure's source differs from its
entry's, it is named in `figure_sources`.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MoESpec(_Strict):
    num_experts: int = Field(gt=0)
    experts_per_token: int = Field(gt=0)
    moe_intermediate_size: int = Field(gt=0)
    shared_experts: int = 0
    shared_expert_intermediate_size: Optional[int] = None  # defaults to moe_intermediate_size
    dense_layers: int = 0  # leading layers with a dense MLP (DeepSeek first_k_dense_replace)


class MLASpec(_Strict):
    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: Optional[int] = None  # None: queries projected directly from hidden


class LayerKinds(_Strict):
    """How many decoder layers use each attention kind (they must add up to num_hidden_layers)."""

    full: int
    sliding: int = 0  # sliding-window attention, window = sliding_window
    chunked: int = 0  # chunked local attention (Llama 4), chunk = attention_chunk_size
    linear: int = 0  # linear attention / mamba state layers (constant state per request)


class QuantSpec(_Strict):
    """The checkpoint's own quantization (what vLLM reads from quantization_config)."""

    method: str  # fp8, awq, gptq, mxfp4, modelopt, bitsandbytes, compressed-tensors, ...
    weight_bits: float  # bits per weight of the quantized modules (fp8: 8, awq/gptq int4: 4, mxfp4: 4.25)
    quantized_modules: Literal["all_linear", "experts_only", "all_but_lm_head"] = "all_linear"
    kv_cache_dtype: Optional[str] = None  # a checkpoint that asks for an fp8 KV cache


class ModelSpec(_Strict):
    id: str
    aliases: tuple[str, ...] = ()
    architectures: tuple[str, ...] = ()
    model_type: str
    num_hidden_layers: int = Field(gt=0)
    hidden_size: int = Field(gt=0)
    num_attention_heads: int = Field(gt=0)
    num_key_value_heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)  # explicit or hidden/heads; for MLA the q/k head (nope + rope)
    intermediate_size: int = Field(gt=0)  # dense MLP size (MoE models: the dense layers' size)
    vocab_size: int = Field(gt=0)
    max_position_embeddings: int = Field(gt=0)
    tie_word_embeddings: bool = False
    torch_dtype: Literal["bfloat16", "float16", "float32"] = "bfloat16"
    moe: Optional[MoESpec] = None
    mla: Optional[MLASpec] = None
    layer_kinds: LayerKinds
    sliding_window: Optional[int] = None
    attention_chunk_size: Optional[int] = None
    linear_state_bytes: Optional[int] = None  # per request per linear layer, in the model dtype
    quantization: Optional[QuantSpec] = None
    is_multimodal: bool = False
    params_total: int = Field(gt=0)  # parameters of the language model (count, not bytes)
    params_active: Optional[int] = None  # MoE: parameters touched per token
    params_source: str
    source: str  # where the architecture facts come from (repo, path, commit)
    verification: Literal["primary", "secondary", "unverified"] = "primary"
    figure_sources: dict[str, str] = Field(default_factory=dict)
    notes: str = ""

    @property
    def is_moe(self) -> bool:
        return self.moe is not None

    @property
    def is_mla(self) -> bool:
        return self.mla is not None


class GpuSpec(_Strict):
    id: str
    aliases: tuple[str, ...] = ()
    vendor: Literal["NVIDIA", "AMD"]
    arch: str
    device_name: str  # what torch reports; vLLM's default tiers test it (e.g. 'a100' in the name)
    memory_bytes: int = Field(gt=0)  # usable device memory as torch reports total_memory
    memory_marketed_gb: float = Field(gt=0)
    hbm_bandwidth_gbps: float = Field(gt=0)  # GB/s (1e9 bytes/s), peak
    bf16_tflops: float = Field(gt=0)  # dense
    fp8_tflops: Optional[float] = None  # dense; None = no fp8 tensor cores
    int8_tops: Optional[float] = None
    fp4_tflops: Optional[float] = None
    nvlink_gbps_per_direction: Optional[float] = None  # GPU-to-GPU within a node; None = PCIe only
    pcie_gbps_per_direction: float = 32.0
    source: str
    figure_sources: dict[str, str] = Field(default_factory=dict)
    verification: Literal["measured", "primary", "secondary", "unverified"] = "primary"
    notes: str = ""

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / 2**30
