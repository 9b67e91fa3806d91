"""Per-GPU shapes of a model: the linear layers one GPU holds and runs, and their byte widths.

Shared by the memory model (weights per GPU) and the step-time model (GEMM roofline), so the two
can never disagree about what a GPU holds. Shapes follow vLLM's sharding:
- attention and dense-MLP linears are split by tensor parallel (TP); KV heads are replicated when
  TP > number of KV heads (`max(1, kv_heads // tp)` per GPU, vllm/config/model.py 1161-1172 @ v0.18.0);
- MLA's down-projections (q_a, kv_a) are replicated on every TP rank, the up-projections split;
- MoE experts are split by expert parallel (EP = TP x DP when enabled) or, without EP, each expert's
  intermediate size is split by TP;
- the embedding and LM head are vocab-parallel (split by TP) and live on the first / last PP stage.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..catalog.types import GpuSpec, ModelSpec
from ..errors import ReaderError

# Bits per weight of an online --quantization (or a method named without a checkpoint config), scales
# and zero points included, for the usual layout of each method (vllm/model_executor/layers/quantization
# @ v0.32.0). A checkpoint's own quantization_config (QuantSpec) gives exact groups and wins.
_METHOD_BITS: dict[str, float] = {
    "fp8": 8.0,  # e4m3 weights; per-tensor/channel/128x128-block scales are < 0.03% extra
    "fp8_per_tensor": 8.0, "fp8_per_block": 8.0, "fp8_per_channel": 8.0,
    "modelopt": 8.0,  # NVIDIA ModelOpt FP8 (hf_quant_config quant_algo FP8)
    "compressed-tensors": 8.0,  # the common FP8-dynamic export; int4 exports carry a config
    "fbgemm_fp8": 8.0,
    "int8": 8.0, "int8_per_channel_weight_only": 8.0,  # W8A8 int8 (smoothquant-style)
    "experts_int8": 8.0,
    # int4 group-128 formats: 4 bits + one fp16 scale and a packed 4-bit zero point per 128 weights
    # = 4 + 16/128 + 4/128 = 4.156 bits (AutoAWQ/GPTQ default group_size 128; auto_awq.py, auto_gptq.py)
    "awq": 4.156, "awq_marlin": 4.156, "auto_awq": 4.156, "gptq": 4.156, "gptq_marlin": 4.156, "auto_gptq": 4.156,
    "mxfp4": 4.25,  # OCP MX: 4-bit e2m1 + one 8-bit e8m0 scale per 32 weights
    "nvfp4": 4.5, "nvfp4_per_token": 4.5,  # 4-bit e2m1 + one fp8 scale per 16 weights
    "modelopt_fp4": 4.5,
    # bitsandbytes nf4: 4 bits + absmax per 64, double-quantised to 8 bits -> ~4.127
    "bitsandbytes": 4.127,
}
_FP8_METHODS = {"fp8", "modelopt", "compressed-tensors", "fbgemm_fp8", "fp8_per_tensor", "fp8_per_block",
                "fp8_per_channel", "modelopt_mixed"}
# W4A4 methods: weights and activations in NVFP4, multiplied on fp4 tensor cores where the GPU has them
_FP4_METHODS = {"nvfp4", "nvfp4_per_token", "modelopt_fp4"}
# Names of one checkpoint format: --quantization awq_marlin on an AWQ checkpoint loads the checkpoint's own
# quantization (vLLM upgrades awq/gptq to their Marlin kernels on its own).
_SAME_FORMAT = [{"awq", "awq_marlin", "auto_awq"}, {"gptq", "gptq_marlin", "auto_gptq"},
                {"modelopt", "modelopt_fp4", "modelopt_mixed"}, {"fp8"}, {"compressed-tensors"},
                {"mxfp4", "gpt_oss_mxfp4"}, {"fbgemm_fp8"}, {"bitsandbytes"}]


def dtype_bytes(dtype: str) -> int:
    """Bytes of the activation/weight dtype vLLM runs the model in.

    'auto' keeps the checkpoint dtype, except that float32 checkpoints run in 16-bit
    (vllm/config/model.py _get_and_verify_dtype: fp32 -> bf16/fp16 under 'auto').
    """
    d = (dtype or "auto").lower()
    if d in ("auto", "bfloat16", "bf16", "float16", "fp16", "half"):
        return 2
    if d in ("float32", "fp32", "float"):
        return 4
    raise ReaderError(f"unknown dtype '{dtype}' (expected auto, bfloat16, float16 or float32)", key="dtype")


@dataclass(frozen=True)
class WeightFormat:
    """How one GPU stores and multiplies the model's weights: stored bits per weight of each part
    (scales and zero points included), 8 x act_bytes where a part is not quantized."""

    method: str | None  # quantization method, None = unquantized
    attn_bits: float  # attention projections
    mixer_bits: float  # linear-attention / Mamba projections
    mlp_bits: float  # dense MLPs
    expert_bits: float  # routed experts
    shared_bits: float  # shared experts
    lm_head_bits: float
    act_bytes: int  # activation dtype (bf16/fp16 = 2)
    fp8_compute: bool  # W8A8 fp8 GEMMs on fp8 tensor cores
    scheme: str = ""
    present: tuple[str, ...] = ()  # the parts this model has (for the description); empty = all
    fp4_compute: bool = False  # W4A4 (NVFP4) GEMMs on fp4 tensor cores (Blackwell)

    @property
    def linear_bits(self) -> float:
        """Bits of the dense linears (attention and MLP), for reports and the activation estimate."""
        return self.attn_bits

    def describe(self) -> str:
        if not self.method:
            return f"{8 * self.act_bytes}-bit weights (unquantized)"
        full = 8.0 * self.act_bytes
        named = (("attention", "attention", self.attn_bits), ("linear_mixer", "linear mixers", self.mixer_bits),
                 ("dense_mlp", "MLP", self.mlp_bits), ("experts", "experts", self.expert_bits),
                 ("shared_experts", "shared experts", self.shared_bits), ("lm_head", "lm_head", self.lm_head_bits))
        parts = [(name, bits) for part, name, bits in named if not self.present or part in self.present]
        quant = ", ".join(f"{n} {b:.3g}" for n, b in parts if b < full)
        kept = [n for n, b in parts if b >= full]
        text = f"{self.method}" + (f" ({self.scheme})" if self.scheme else "") + f": {quant} bits per weight"
        return text + (f"; {', '.join(kept)} {full:g}-bit" if kept else "")


def _stored_bits(fmt, method: str) -> float:
    """Bits per weight of a part; a grouped format given without its groups or scales (an older catalog entry's
    bare weight_bits) takes the method's usual layout. Scales without groups are per channel (GPTQ's
    group_size -1): the payload alone."""
    bits = fmt.bits_per_weight
    usual = _METHOD_BITS.get(method.lower(), bits)
    bare = fmt.group_size is None and not fmt.scale_bits
    return usual if bare and usual > bits and float(bits).is_integer() else bits


def _same_format(a: str, b: str) -> bool:
    return a == b or any(a in names and b in names for names in _SAME_FORMAT)


def resolve_weight_format(model: ModelSpec, quantization: str | None, dtype: str, gpu: GpuSpec) -> WeightFormat:
    """The weight format vLLM ends up with: an explicit --quantization, else the checkpoint's own."""
    act = dtype_bytes(dtype)
    full = 8.0 * act
    # an AutoGPTQ / AutoAWQ file beside config.json counts only when --quantization makes vLLM read it
    spec = model.quantization or (model.file_quantization if quantization else None)
    method = (quantization or (model.quantization.method if model.quantization else None) or "").lower() or None
    if method in (None, "none"):
        return WeightFormat(None, full, full, full, full, full, full, act, False)
    if spec and _same_format(spec.method.lower(), method):
        bits = {part: _stored_bits(fmt, spec.method) for part, fmt in spec.formats.items()}
        fp8 = any(f.act_bits == 8 and f.weight_bits == 8 for f in spec.formats.values()) and spec.method in (
            _FP8_METHODS | {"modelopt_mixed"})
        fp4 = any(f.act_bits == 4 and f.weight_bits == 4 for f in spec.formats.values())
        scheme, method = spec.scheme, spec.method
    elif method in _METHOD_BITS:
        # online quantization (--quantization fp8 on a 16-bit checkpoint) quantizes every linear layer but
        # the LM head (vLLM's Fp8Config skips ParallelLMHead); mxfp4 only has an experts kernel
        parts = ("experts",) if method == "mxfp4" else ("attention", "linear_mixer", "dense_mlp", "experts",
                                                         "shared_experts")
        bits = {part: _METHOD_BITS[method] for part in parts}
        fp8, scheme = method in _FP8_METHODS, "online" if spec is None else f"over a {spec.method} checkpoint"
        fp4 = method in _FP4_METHODS
    else:
        raise ReaderError(f"unknown quantization method '{method}'", key="quantization",
                          hint="Known: " + ", ".join(sorted(_METHOD_BITS)) + ".")
    return WeightFormat(method, bits.get("attention", full), bits.get("linear_mixer", full),
                        bits.get("dense_mlp", full), bits.get("experts", full), bits.get("shared_experts", full),
                        bits.get("lm_head", full), act, fp8 and gpu.fp8_tflops is not None, scheme,
                        _present_parts(model), fp4 and gpu.fp4_tflops is not None)


def _present_parts(model: ModelSpec) -> tuple[str, ...]:
    kinds = model.layer_kinds
    ffns = model.layer_ffns or (("moe",) if model.moe else ()) + (("dense",) if not model.moe or
                                                                   model.moe.dense_layers or
                                                                   model.moe.moe_layer_step > 1 else ())
    parts = []
    if kinds.full or kinds.sliding or kinds.chunked:
        parts.append("attention")
    if kinds.linear:
        parts.append("linear_mixer")
    if "dense" in ffns:
        parts.append("dense_mlp")
    if "moe" in ffns:
        parts.append("experts")
        if model.moe is not None and model.moe.shared_experts:
            parts.append("shared_experts")
    return tuple(parts) + ("lm_head",)


@dataclass(frozen=True)
class Gemm:
    """One weight matrix of shape [k, n] on this GPU."""

    name: str
    k: int
    n: int
    bits: float

    @property
    def weight_bytes(self) -> float:
        return self.k * self.n * self.bits / 8.0


@dataclass(frozen=True)
class MoeShape:
    """Routed experts as one GPU holds them."""

    num_experts: int  # global experts
    local_experts: int  # experts on this GPU
    top_k: int
    hidden: int  # (padded) hidden size the kernel sees
    inter: int  # (padded) per-expert intermediate size on this GPU
    bits: float
    shared: tuple[Gemm, ...]  # shared experts (dense, TP-split)
    router: Gemm
    matrices: int = 3  # gate, up, down (SwiGLU); 2 for Nemotron-H's relu2 experts

    @property
    def expert_bytes(self) -> float:
        """One expert's weights on this GPU."""
        return self.matrices * self.hidden * self.inter * self.bits / 8.0


@dataclass(frozen=True)
class GpuShapes:
    """What one GPU of one pipeline stage holds and runs, per layer and in total."""

    tp: int
    ep: int
    q_heads: int  # attention heads per GPU
    kv_heads: int  # KV heads per GPU (1 for MLA)
    attn: tuple[Gemm, ...]  # one attention layer's projections
    dense_mlp: tuple[Gemm, ...]  # one dense MLP
    moe: MoeShape | None
    lm_head: Gemm
    embed_params: int  # vocab-parallel embedding rows x hidden on this GPU (+ learned positions)
    wfmt: WeightFormat
    mixer: tuple[Gemm, ...] = ()  # one linear-attention / Mamba layer's projections
    mixer_small_params: int = 0  # its conv weights, A/D/dt_bias and gated norm (16-bit)
    # Gemma 4: a full-attention layer's projections at its own head size and KV heads, where they differ
    attn_full: tuple[Gemm, ...] = ()
    q_gate: bool = False  # Qwen3-Next: the qkv projection's q part is twice the heads' width (the output gate)

    def attn_of(self, kind: str) -> tuple[Gemm, ...]:
        """One attention layer's projections: a full-attention layer's own where it has them."""
        return self.attn_full if kind == "full" and self.attn_full else self.attn

    def attn_bytes(self, kind: str = "sliding", cached: bool = True) -> float:
        """One attention layer's weights; a KV-shared layer (cached False) holds q_proj and o_proj only
        (Gemma4Attention, gemma4.py @ v0.32.0)."""
        gemms = self.attn_of(kind)
        total = sum(g.weight_bytes for g in gemms)
        if not cached and gemms[0].name == "qkv":
            qkv = gemms[0]
            total -= qkv.weight_bytes * (2 * self.kv_width(kind)) / qkv.n
        return total

    def kv_width(self, kind: str) -> int:
        """K's (and V's) width in this GPU's qkv projection for a layer of `kind`: what the projection holds beyond
        the query heads (twice their width with an output gate) and o's input."""
        gemms = self.attn_of(kind)
        q_width = gemms[-1].k * (2 if self.q_gate else 1)
        return (gemms[0].n - q_width) // 2

    def mixer_bytes(self) -> float:
        return sum(g.weight_bytes for g in self.mixer) + self.mixer_small_params * self.wfmt.act_bytes

    def dense_mlp_bytes(self) -> float:
        return sum(g.weight_bytes for g in self.dense_mlp)

    @property
    def mlp_inter(self) -> int:
        """Intermediate width of the dense MLP on this GPU (input of its down projection)."""
        return self.dense_mlp[-1].k

    def moe_bytes(self) -> float:
        if self.moe is None:
            return 0.0
        m = self.moe
        return (m.local_experts * m.expert_bytes + sum(g.weight_bytes for g in m.shared)
                + m.router.weight_bytes)


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def is_blackwell(gpu: GpuSpec) -> bool:
    return "blackwell" in gpu.arch.lower()


def gpu_shapes(model: ModelSpec, gpu: GpuSpec, wfmt: WeightFormat, tp: int = 1, ep: int = 1,
               redundant_experts: int = 0, dp: int = 1) -> GpuShapes:
    """Per-GPU linear shapes under TP (and EP for routed experts, with EPLB's redundant copies). Without EP, the
    routed experts are sliced over every GPU of the data parallel ranks too (dp x tp), while attention and the
    dense and shared MLPs stay whole per rank: vLLM flattens the MoE layer's tensor parallel group across data
    parallelism (FusedMoEParallelConfig.make / flatten_tp_across_dp_and_pcp,
    vllm/model_executor/layers/fused_moe/config.py @ v0.18.0)."""
    if tp < 1 or ep < 1:
        raise ReaderError("parallel sizes must be >= 1", key="tensor_parallel_size")
    h = model.hidden_size
    nh = max(1, model.num_attention_heads // tp)
    attn, kvh = _attention_gemms(model, nh, tp, wfmt.attn_bits)
    full = _attention_gemms(model, nh, tp, wfmt.attn_bits, model.full_head_dim, model.full_kv_heads)[0] \
        if model.full_head_dim else []
    inter = _round_up(model.intermediate_size, tp) // tp
    if model.mlp_gated:
        dense = (Gemm("gate_up", h, 2 * inter, wfmt.mlp_bits), Gemm("down", inter, h, wfmt.mlp_bits))
    else:  # GPT-2 c_fc/c_proj, OPT fc1/fc2, Nemotron-H up/down (relu2)
        dense = (Gemm("up", h, inter, wfmt.mlp_bits), Gemm("down", inter, h, wfmt.mlp_bits))
    moe = _moe_shape(model, gpu, wfmt, tp, ep, redundant_experts, dp) if model.moe is not None else None
    vocab_local = _round_up(model.vocab_size, 64 * tp) // tp  # vLLM pads vocab to 64 per rank
    lm_head = Gemm("lm_head", h, vocab_local, wfmt.lm_head_bits)
    mixer, small = _mixer_gemms(model, tp, wfmt.mixer_bits) if model.ssm is not None else ((), 0)
    # learned positions are replicated; Gemma 4's per-layer input table is vocab-parallel like the embedding
    embed = vocab_local * h + model.learned_positions * h + model.per_layer_input_params // tp
    return GpuShapes(tp, ep, nh, kvh, tuple(attn), dense, moe, lm_head, embed, wfmt, mixer, small, tuple(full),
                     model.attn_output_gate)


def _attention_gemms(model: ModelSpec, nh: int, tp: int, bits: float, head_dim: int | None = None,
                     kv_heads: int | None = None) -> tuple[list[Gemm], int]:
    h, hd = model.hidden_size, head_dim or model.head_dim
    mla = model.mla or model.low_rank_attention  # MiniCPM3: MLA's projections, yet a K and V per head cached
    if mla is not None:
        qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        attn = []
        if mla.q_lora_rank:
            attn += [Gemm("q_a", h, mla.q_lora_rank, bits), Gemm("q_b", mla.q_lora_rank, nh * qk, bits)]
        else:
            attn += [Gemm("q", h, nh * qk, bits)]
        attn += [Gemm("kv_a", h, mla.kv_lora_rank + mla.qk_rope_head_dim, bits),
                 Gemm("kv_b", mla.kv_lora_rank, nh * (mla.qk_nope_head_dim + mla.v_head_dim), bits),
                 Gemm("o", nh * mla.v_head_dim, h, bits)]
        return attn, (1 if model.mla is not None else max(1, model.num_key_value_heads // tp))
    kvh = max(1, (kv_heads or model.num_key_value_heads) // tp)
    q = nh * (2 if model.attn_output_gate else 1)  # Qwen3-Next's q_proj also emits the output gate
    return [Gemm("qkv", h, (q + 2 * kvh) * hd, bits), Gemm("o", nh * hd, h, bits)], kvh


def _mixer_gemms(model: ModelSpec, tp: int, bits: float) -> tuple[tuple[Gemm, ...], int]:
    """One linear-attention / Mamba layer on one GPU: its projections, and the small parameters
    (conv weights, A/D/dt_bias, gated norm) it keeps in 16-bit. Sharding as vLLM's
    QwenGatedDeltaNetAttention (mamba/gdn/qwen_gdn_linear_attn.py) and MambaMixer2 (mamba/mamba_mixer2.py,
    groups replicated to the heads' shards) @ v0.32.0."""
    m = model.ssm
    assert m is not None
    h = model.hidden_size
    if m.kind == "gated_delta_net":
        key, value = m.key_size // tp, m.inner_size // tp
        heads = m.heads // tp
        gemms = (Gemm("in_proj_qkvz", h, 2 * key + 2 * value, bits), Gemm("in_proj_ba", h, 2 * heads, bits),
                 Gemm("out_proj", value, h, bits))
        return gemms, (2 * key + value) * m.conv_kernel + 2 * heads + m.head_dim
    if m.kind == "short_conv":  # ShortConv: in_proj and the conv column-parallel, out_proj row-parallel
        dim = m.inner_size // tp
        return (Gemm("in_proj", h, 3 * dim, bits), Gemm("out_proj", dim, h, bits)), dim * m.conv_kernel
    groups = m.groups + mamba_extra_groups(m.groups, tp)
    inner, heads, bc = m.inner_size // tp, m.heads // tp, 2 * groups * m.state_size // tp
    gemms = (Gemm("in_proj", h, 2 * inner + bc + heads, bits), Gemm("out_proj", inner, h, bits))
    return gemms, (inner + bc) * (m.conv_kernel + 1) + 3 * heads + inner


def mamba_extra_groups(groups: int, tp: int) -> int:
    """Groups vLLM adds so every TP shard of the heads holds the groups it needs
    (MambaStateShapeCalculator.extra_groups_for_head_shards, mamba_utils.py @ v0.32.0)."""
    return 0 if groups % tp == 0 else tp - groups


def _moe_shape(model: ModelSpec, gpu: GpuSpec, wfmt: WeightFormat, tp: int, ep: int, redundant: int = 0,
               dp: int = 1) -> MoeShape:
    """The MoE layer on one GPU: without EP its routed experts are sliced over tp x dp GPUs (gpu_shapes says
    why), its shared experts over the rank's tp."""
    moe = model.moe
    assert moe is not None
    h, inter = moe.latent_size or model.hidden_size, moe.moe_intermediate_size
    if ep > 1:
        # EPLB adds redundant physical experts to every rank's share; vLLM refuses a count the EP ranks do not
        # divide (FusedMoE.__init__, vllm/model_executor/layers/fused_moe/layer.py @ v0.32.0), so the ceiling
        # only matters without EPLB, where the first ranks hold one more (determine_expert_map)
        local = math.ceil((moe.num_experts + redundant) / ep)
    else:
        local, inter = moe.num_experts, _round_up(inter, tp * dp) // (tp * dp)
    if wfmt.method == "mxfp4" and not is_blackwell(gpu):
        # Hopper/Ampere MXFP4 MoE kernels (Marlin / triton) store experts padded: hidden to a
        # multiple of 256 and intermediate to 128 (Mxfp4MoEMethod.create_weights in
        # vllm/model_executor/layers/quantization/mxfp4.py; seen in a stored copy). Cross-check:
        # gpt-oss-120b then loads 65.8 GiB vs vLLM's 'Model loading took 65.9651 GiB' (vllm#23278).
        h, inter = _round_up(h, 256), _round_up(inter, 128)
    matrices = 3 if model.mlp_gated else 2
    shared_inter = (moe.shared_expert_intermediate_size or moe.moe_intermediate_size) * moe.shared_experts
    shared: tuple[Gemm, ...] = ()
    if shared_inter:
        si = _round_up(shared_inter, tp) // tp
        up = Gemm("shared_gate_up" if matrices == 3 else "shared_up", model.hidden_size, (matrices - 1) * si,
                  wfmt.shared_bits)
        shared = (up, Gemm("shared_down", si, model.hidden_size, wfmt.shared_bits))
    if moe.latent_size:
        # fc1/fc2_latent_proj: replicated on every rank and kept unquantized (vllm/model_executor/models/
        # nemotron_h.py NemotronHMoE @ v0.32.0)
        full = 8.0 * wfmt.act_bytes
        shared += (Gemm("latent_in", model.hidden_size, moe.latent_size, full),
                   Gemm("latent_out", moe.latent_size, model.hidden_size, full))
    # the router stays unquantized in every checkpoint we know (gpt-oss modules_to_not_convert, fp8 MoE)
    router = Gemm("router", model.hidden_size, moe.num_experts, 8.0 * wfmt.act_bytes)
    return MoeShape(moe.num_experts, local, moe.experts_per_token, h, inter, wfmt.expert_bits, shared, router,
                    matrices)


def pp_partition(num_layers: int, pp: int, override: tuple[int, ...] | None = None) -> list[int]:
    """Layers per pipeline stage, as vLLM splits them.

    Default: even split, remainder added from the second-to-last stage backwards (the last stage
    also runs norm + LM head). `override` is VLLM_PP_LAYER_PARTITION.
    Source: vllm/distributed/utils.py get_pp_indices (same code in every stored copy checked).
    """
    if override:
        parts = list(override)
        if len(parts) != pp or sum(parts) != num_layers:
            raise ReaderError(f"pp_layer_partition {parts} must have {pp} entries summing to {num_layers}",
                              key="pp_layer_partition")
        return parts
    parts = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        parts[-i] += 1
    return parts


def stage_layer_kinds(model: ModelSpec, parts: list[int], stage: int, cached: bool = False) -> dict[str, int]:
    """How many layers of each mixer kind (full/sliding/chunked/linear/none) a PP stage holds: exact
    where the config says which layer is which (layer_mixers), else each kind's share in proportion
    (kinds are spread evenly through the depth in every hybrid model we know). cached: only the layers that keep
    a KV cache of their own, not the trailing KV-shared ones (vLLM gives those no KV-cache spec)."""
    start, n = sum(parts[:stage]), parts[stage]
    if model.layer_mixers:
        stop = start + n
        if cached:
            stop = min(stop, model.num_hidden_layers - model.kv_shared_layers)
        chosen = model.layer_mixers[start:stop]
        return {kind: chosen.count(kind) for kind in ("full", "sliding", "chunked", "linear", "none")}
    lk = model.layer_kinds
    total = model.num_hidden_layers
    out = {}
    for kind in ("sliding", "chunked", "linear", "none"):
        count = getattr(lk, kind)
        out[kind] = round(count * (start + n) / total) - round(count * start / total)
    out["full"] = n - out["sliding"] - out["chunked"] - out["linear"] - out["none"]
    return out


def stage_moe_layers(model: ModelSpec, parts: list[int], stage: int) -> tuple[int, int]:
    """(dense-MLP layers, MoE layers) on a stage: DeepSeek's first_k_dense layers come first, Llama 4
    Maverick interleaves (experts on every moe_layer_step-th layer), Nemotron-H's pattern names them
    (its Mamba and attention layers have no feed-forward block at all)."""
    start, n = sum(parts[:stage]), parts[stage]
    if model.layer_ffns:
        chosen = model.layer_ffns[start:start + n]
        return chosen.count("dense"), chosen.count("moe")
    if model.moe is None:
        return n, 0
    moe = model.moe.moe_layers_in(start, start + n)
    return n - moe, moe
