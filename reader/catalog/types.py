"""Typed shapes of the catalog entries.

These are the contracts every later stage reads (KV sizing, weights, the step-time model):
values are normalised numbers, never free text; where a figure's source differs from its
entry's, it is named in `figure_sources`.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


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
    # Added: latent MoE (Nemotron-3 Super): the routed experts work in a latent space of this width,
    # entered and left through two replicated projections (fc1/fc2_latent_proj); None = the hidden size.
    latent_size: Optional[int] = Field(default=None, gt=0)

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
    """How many decoder layers use each token mixer (they must add up to num_hidden_layers)."""

    full: int
    sliding: int = 0  # sliding-window attention, window = sliding_window
    chunked: int = 0  # chunked local attention (Llama 4), chunk = attention_chunk_size
    linear: int = 0  # linear attention / Mamba state layers (a constant state per request)
    none: int = 0  # layers with no token mixer, only a feed-forward block (Nemotron-H '-' and 'E' layers)


class SsmSpec(_Strict):
    """The recurrent mixer of hybrid models' linear layers, in the config's own terms.

    kind gated_delta_net (Qwen3-Next): heads = linear_num_value_heads, head_dim = linear_value_head_dim,
    groups = linear_num_key_heads, state_size = linear_key_head_dim.
    kind mamba2 (Nemotron-H): heads = mamba_num_heads, head_dim = mamba_head_dim, groups = n_groups,
    state_size = ssm_state_size.
    kind short_conv (LFM2): a gated depthwise convolution over the last conv_kernel tokens and no temporal state:
    heads 1, head_dim = conv_dim, groups 1, state_size 1. Shapes of the per-request state follow vLLM's
    MambaStateShapeCalculator (vllm/model_executor/layers/mamba/mamba_utils.py @ v0.32.0).
    """

    kind: Literal["gated_delta_net", "mamba2", "short_conv"]
    heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    groups: int = Field(gt=0)
    state_size: int = Field(gt=0)
    conv_kernel: int = Field(gt=1)
    # dtype the config names for the recurrent (temporal) state (Nemotron-H's mamba_ssm_cache_dtype); None =
    # what vLLM picks under 'auto' for this family and release (capacity/data/vllm_memory.yaml).
    ssm_state_dtype: Optional[Literal["float32", "bfloat16", "float16"]] = None

    @property
    def inner_size(self) -> int:
        """Width of the value/x stream (Mamba2 intermediate size, GDN value dim)."""
        return self.heads * self.head_dim

    @property
    def key_size(self) -> int:
        """Width of B/C (Mamba2: groups x state) or of the keys (GDN: key heads x key head dim)."""
        return self.groups * self.state_size


# The parts of a decoder whose linear layers a checkpoint can quantize (or leave alone).
QUANT_PARTS = ("attention", "linear_mixer", "dense_mlp", "experts", "shared_experts", "lm_head")


class QuantFormat(_Strict):
    """How one part's quantized weights are stored."""

    weight_bits: float = Field(gt=0)  # payload bits of one weight (fp8/int8: 8, int4/fp4: 4)
    # Scales and zero points stored beside the weights: one scale of scale_bits (and, for asymmetric
    # formats, one zero point of zero_bits) per group_size weights. group_size None: one scale per
    # output channel, tensor or 128x128 block (below 0.05% of the weights, not counted).
    group_size: Optional[int] = Field(default=None, gt=0)
    scale_bits: float = 0.0
    zero_bits: float = 0.0
    act_bits: Optional[int] = None  # activations quantized too (W8A8 fp8/int8: 8, NVFP4 W4A4: 4)

    @property
    def bits_per_weight(self) -> float:
        """Stored bits per weight, scales and zero points included."""
        if not self.group_size:
            return self.weight_bits
        return self.weight_bits + (self.scale_bits + self.zero_bits) / self.group_size


class QuantSpec(_Strict):
    """The checkpoint's own quantization (what vLLM reads from quantization_config).

    `formats` names the parts of the decoder (QUANT_PARTS) whose linear layers hold quantized
    weights and how; a part that is absent keeps ModelSpec.torch_dtype. Embeddings, norms and MoE
    routers are never quantized by the formats vLLM loads.
    """

    method: str  # fp8, awq, gptq, mxfp4, modelopt, modelopt_fp4, compressed-tensors, fbgemm_fp8, ...
    scheme: str = ""  # the format in words: "fp8 block 128x128", "int4 group 32 symmetric", ...
    formats: dict[str, QuantFormat]
    # Modules the checkpoint leaves unquantized, as written (ignore / modules_to_not_convert /
    # exclude_modules), kept for the report; their effect is already in `formats`.
    excluded: tuple[str, ...] = ()
    kv_cache_dtype: Optional[str] = None  # a checkpoint that asks for an fp8 KV cache

    @model_validator(mode="before")
    @classmethod
    def _from_shorthand(cls, data):
        """Older catalog entries give `weight_bits` and `quantized_modules` instead of `formats`."""
        if isinstance(data, dict) and "formats" not in data and "weight_bits" in data:
            data = dict(data)
            fmt = {"weight_bits": data.pop("weight_bits")}
            parts = _SHORTHAND_PARTS[data.pop("quantized_modules", None) or "all_linear"]
            data["formats"] = {part: fmt for part in parts}
        return data

    @field_validator("formats")
    @classmethod
    def _known_parts(cls, formats: dict) -> dict:
        unknown = set(formats) - set(QUANT_PARTS)
        if unknown:
            raise ValueError(f"unknown parts {sorted(unknown)} (known: {', '.join(QUANT_PARTS)})")
        return formats

    def format_of(self, part: str) -> Optional[QuantFormat]:
        return self.formats.get(part)

    @property
    def main(self) -> QuantFormat:
        """The format of the largest quantized part (experts, else the dense layers), for display."""
        for part in ("experts", "dense_mlp", "attention", "linear_mixer", "shared_experts", "lm_head"):
            if part in self.formats:
                return self.formats[part]
        raise ValueError("a quantization with no quantized part")

    @property
    def weight_bits(self) -> float:
        return self.main.weight_bits


_SHORTHAND_PARTS = {
    "all_linear": QUANT_PARTS,
    "all_but_lm_head": tuple(p for p in QUANT_PARTS if p != "lm_head"),
    "experts_only": ("experts",),
}


class RopeScaling(_Strict):
    """The checkpoint's RoPE scaling (config.json rope_scaling or rope_parameters), as far as vLLM's maximum length
    reads it: the type, its factor and the pre-scaling length a YaRN mapping names."""

    type: str
    factor: Optional[float] = None
    original_max_position_embeddings: Optional[int] = None


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
    # Added: config.json names no length (BLOOM): vLLM assumes max_position_embeddings' 2048 and takes any
    # --max-model-len as given, so no maximum is checked
    max_len_assumed: bool = False
    # Added: what vLLM's maximum length also reads (reader/config/max_len.py): the RoPE scaling, and the
    # top-level original_max_position_embeddings a LongRoPE checkpoint (Phi-3 128k) defaults to.
    rope_scaling: Optional[RopeScaling] = None
    original_max_position_embeddings: Optional[int] = None
    tie_word_embeddings: bool = False
    torch_dtype: Literal["bfloat16", "float16", "float32"] = "bfloat16"
    # Added: config.json names no dtype, so torch_dtype is our assumption; older vLLM releases ran such a
    # model in float16, newer ones in bfloat16.
    torch_dtype_assumed: bool = False
    moe: Optional[MoESpec] = None
    mla: Optional[MLASpec] = None
    # Added: attention whose weights have MLA's low-rank shapes while vLLM caches a full K and V per head, as
    # for MHA (MiniCPM3): mla is then None, num_key_value_heads = heads and head_dim = qk_nope + qk_rope.
    low_rank_attention: Optional[MLASpec] = None
    layer_kinds: LayerKinds
    # Added: the mixer of each layer in order (full/sliding/chunked/linear/none) and its feed-forward
    # block (dense/moe/none), where the config says which layer is which; empty = derived from
    # layer_kinds (spread evenly) and MoESpec.is_moe_layer. Pipeline stages split on these.
    layer_mixers: tuple[Literal["full", "sliding", "chunked", "linear", "none"], ...] = ()
    layer_ffns: tuple[Literal["dense", "moe", "none"], ...] = ()
    sliding_window: Optional[int] = None
    attention_chunk_size: Optional[int] = None
    # Added: Gemma 4's full-attention layers have a head size and KV head count of their own
    # (global_head_dim, num_global_key_value_heads under attention_k_eq_v); None = the same as the other layers'
    full_head_dim: Optional[int] = None
    full_kv_heads: Optional[int] = None
    # Added: the last kv_shared_layers layers read an earlier layer's KV cache and keep none of their own
    # (Gemma 4's num_kv_shared_layers)
    kv_shared_layers: int = 0
    ssm: Optional[SsmSpec] = None  # the recurrent mixer of the linear layers
    # Added: shapes outside the Llama mould.
    mlp_gated: bool = True  # False: two-matrix MLP (GPT-2 c_fc/c_proj, OPT fc1/fc2)
    learned_positions: int = 0  # rows of a learned position-embedding table (GPT-2, OPT)
    # Added: Gemma 4's per-layer input table and its projections (counted in params_total, held on the first
    # stage and split by TP like the token embedding)
    per_layer_input_params: int = 0
    attn_output_gate: bool = False  # Qwen3-Next: q_proj also emits a per-head output gate
    norms_per_layer: int = Field(default=2, ge=1)  # Gemma 2/3: 4; Nemotron-H: 1
    # Added: parts of the model the reader found but vllm-reader does not model, said plainly in every
    # capacity report (e.g. a sparse-attention indexer's key cache).
    unmodelled: tuple[str, ...] = ()
    quantization: Optional[QuantSpec] = None
    # Added: an AutoGPTQ quantize_config.json / AutoAWQ quant_config.json beside a config.json that has no
    # quantization_config (hf_quant.QUANT_FILES): vLLM reads it only when --quantization names the method.
    quantization_file: Optional[str] = None
    file_quantization: Optional[QuantSpec] = None
    is_multimodal: bool = False
    # Parameters of the language model (count, not bytes): no vision tower, no MTP/next-token
    # draft layers (vLLM loads those only for speculative decoding); tied embeddings counted once.
    params_total: int = Field(gt=0)
    # Added: params_total split by part (embedding, attention, linear_mixer, dense_mlp, experts,
    # shared_experts, router, norms, lm_head), as the reader counts them; empty for older entries.
    params_by_part: dict[str, int] = Field(default_factory=dict)
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
