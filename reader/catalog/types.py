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
    # Added: MoE only on every Nth layer, counting from 1 (layer i is MoE when (i+1) % N == 0 and
    # i >= dense_layers); the others use a dense MLP of ModelSpec.intermediate_size. Llama 4
    # Maverick interleave_moe_layer_step = 2, Qwen MoE decoder_sparse_step.
    moe_layer_step: int = Field(default=1, gt=0)

    def is_moe_layer(self, index: int) -> bool:
        return index >= self.dense_layers and (index + 1) % self.moe_layer_step == 0

    def moe_layers_in(self, start: int, stop: int) -> int:
        """How many of layers start..stop-1 have experts (the others a dense MLP)."""
        return sum(1 for i in range(start, stop) if self.is_moe_layer(i))


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
    # Which weights are quantized; everything else stays in ModelSpec.torch_dtype.
    #   all_linear: every linear layer, the LM head included (e.g. GPTQ with lm_head: true);
    #   all_but_lm_head: the decoder's linear layers; embeddings and LM head stay unquantized
    #     (vLLM's fp8/awq/modelopt paths never quantize the LM head);
    #   experts_only: only the MoE expert weights (gpt-oss MXFP4).
    # Norms, routers and embeddings are never counted as quantized.
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
    # Dense MLP size. MoE models: the size of their dense-MLP layers (DeepSeek's first layers,
    # Llama 4's intermediate_size_mlp); where every layer is MoE it is the config value, unused.
    intermediate_size: int = Field(gt=0)
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
    # Parameters of the language model (count, not bytes): no vision tower, no MTP/next-token
    # draft layers (vLLM loads those only for speculative decoding); tied embeddings counted once.
    params_total: int = Field(gt=0)
    # MoE: parameters used per token, counted like the published headline figures: attention,
    # norms, router, the top-k routed and the shared experts, the embedding and the LM head
    # (the embedding table is counted whole although a token reads one row of it).
    params_active: Optional[int] = None
    params_source: str
    source: str  # where the architecture facts come from (repo, path, commit)
    verification: Literal["primary", "secondary", "unverified"] = "primary"
    figure_sources: dict[str, str] = Field(default_factory=dict)
    # Added: fields whose value could not be confirmed from a stored primary copy; each has a
    # note in figure_sources. An entry can be "primary" overall with a few unverified figures.
    unverified: tuple[str, ...] = ()
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
    vendor: Literal["NVIDIA", "AMD", "other"]  # other: a device a calibration profile stands in for
    arch: str
    device_name: str  # what torch reports; vLLM's default tiers test it (e.g. 'a100' in the name)
    # Device memory as torch reports total_memory (what vLLM multiplies by gpu_memory_utilization),
    # a few hundred MiB below nvidia-smi's memory.total; gpus.yaml's header says how each was obtained.
    memory_bytes: int = Field(gt=0)
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
    # Added: figures not confirmed from a vendor datasheet, a primary copy or a measurement;
    # each has a note in figure_sources.
    unverified: tuple[str, ...] = ()
    notes: str = ""

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / 2**30
