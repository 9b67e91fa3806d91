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

# Bits per weight by quantization method, including the scale/zero-point overhead of the usual
# group layout. Provenance per entry; "weight_bits" from the catalog's QuantSpec wins when given.
_METHOD_BITS: dict[str, float] = {
    "fp8": 8.0,  # e4m3 weights; per-tensor/channel/128x128-block scales are < 0.03% extra
    "modelopt": 8.0,  # NVIDIA ModelOpt FP8 (hf_quant_config quant_algo FP8)
    "compressed-tensors": 8.0,  # the common FP8-dynamic export; int4 exports set weight_bits 4
    "fbgemm_fp8": 8.0,
    "int8": 8.0,  # W8A8 int8 (smoothquant-style)
    "experts_int8": 8.0,
    # int4 group-128 formats: 4 bits + one fp16 scale (and a 4-bit zero point) per 128 weights
    # = 4 + 16/128 + 4/128 = 4.156 bits (AutoAWQ/GPTQ default group_size 128)
    "awq": 4.156, "awq_marlin": 4.156, "gptq": 4.156, "gptq_marlin": 4.156,
    "mxfp4": 4.25,  # OCP MX: 4-bit e2m1 + one 8-bit e8m0 scale per 32 weights
    "nvfp4": 4.5,  # 4-bit e2m1 + one fp8 scale per 16 weights
    "modelopt_fp4": 4.5,
    # bitsandbytes nf4: 4 bits + fp32 absmax per 64, double-quantised to 8 bits -> ~4.127
    "bitsandbytes": 4.127,
}
_FP8_METHODS = {"fp8", "modelopt", "compressed-tensors", "fbgemm_fp8"}


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
    """How one GPU stores and multiplies the model's weights."""

    method: str | None  # quantization method, None = unquantized
    linear_bits: float  # attention and dense-MLP linears
    expert_bits: float  # routed/shared expert weights
    lm_head_bits: float
    act_bytes: int  # activation dtype (bf16/fp16 = 2)
    fp8_compute: bool  # W8A8 fp8 GEMMs on fp8 tensor cores

    def describe(self) -> str:
        if not self.method:
            return f"{8 * self.act_bytes}-bit weights (unquantized)"
        return (f"{self.method}: linears {self.linear_bits:g} bits, experts {self.expert_bits:g} bits, "
                f"lm_head {self.lm_head_bits:g} bits")


def resolve_weight_format(model: ModelSpec, quantization: str | None, dtype: str, gpu: GpuSpec) -> WeightFormat:
    """The weight format vLLM ends up with: an explicit --quantization, else the checkpoint's own."""
    act = dtype_bytes(dtype)
    full = 8.0 * act
    spec = model.quantization
    method = (quantization or (spec.method if spec else None) or "").lower() or None
    if method in (None, "none"):
        return WeightFormat(None, full, full, full, act, False)
    if spec and spec.method.lower() == method:
        bits, modules = spec.weight_bits, spec.quantized_modules
    elif method in _METHOD_BITS:
        # online quantization (--quantization fp8 on a bf16 checkpoint) quantizes every linear
        # but the LM head (vllm Fp8Config skips ParallelLMHead)
        bits, modules = _METHOD_BITS[method], "all_but_lm_head"
    else:
        raise ReaderError(f"unknown quantization method '{method}'", key="quantization",
                          hint="Known: " + ", ".join(sorted(_METHOD_BITS)) + ".")
    # the catalog's weight_bits is the payload; add the group-scale overhead of the method
    if method in _METHOD_BITS and abs(bits - round(bits)) < 1e-9 and _METHOD_BITS[method] > bits:
        bits = _METHOD_BITS[method]
    linear = full if modules == "experts_only" else bits
    lm_head = bits if modules == "all_linear" else full
    fp8 = method in _FP8_METHODS and bits >= 8 and gpu.fp8_tflops is not None
    return WeightFormat(method, linear, bits, lm_head, act, fp8)


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

    @property
    def expert_bytes(self) -> float:
        """One expert's gate+up+down weights on this GPU."""
        return 3 * self.hidden * self.inter * self.bits / 8.0


@dataclass(frozen=True)
class GpuShapes:
    """What one GPU of one pipeline stage holds and runs, per layer and in total."""

    tp: int
    ep: int
    q_heads: int  # attention heads per GPU
    kv_heads: int  # KV heads per GPU (1 for MLA)
    attn: tuple[Gemm, ...]
    dense_mlp: tuple[Gemm, ...]
    moe: MoeShape | None
    lm_head: Gemm
    embed_params: int  # vocab-parallel embedding rows x hidden on this GPU
    wfmt: WeightFormat

    def attn_bytes(self) -> float:
        return sum(g.weight_bytes for g in self.attn)

    def dense_mlp_bytes(self) -> float:
        return sum(g.weight_bytes for g in self.dense_mlp)

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


def gpu_shapes(model: ModelSpec, gpu: GpuSpec, wfmt: WeightFormat, tp: int = 1, ep: int = 1) -> GpuShapes:
    """Per-GPU linear shapes under TP (and EP for routed experts)."""
    if tp < 1 or ep < 1:
        raise ReaderError("parallel sizes must be >= 1", key="tensor_parallel_size")
    h, hd = model.hidden_size, model.head_dim
    nh = max(1, model.num_attention_heads // tp)
    lin = wfmt.linear_bits
    if model.mla is not None:
        mla = model.mla
        qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        attn = []
        if mla.q_lora_rank:
            attn += [Gemm("q_a", h, mla.q_lora_rank, lin), Gemm("q_b", mla.q_lora_rank, nh * qk, lin)]
        else:
            attn += [Gemm("q", h, nh * qk, lin)]
        attn += [Gemm("kv_a", h, mla.kv_lora_rank + mla.qk_rope_head_dim, lin),
                 Gemm("kv_b", mla.kv_lora_rank, nh * (mla.qk_nope_head_dim + mla.v_head_dim), lin),
                 Gemm("o", nh * mla.v_head_dim, h, lin)]
        kvh = 1
    else:
        kvh = max(1, model.num_key_value_heads // tp)
        attn = [Gemm("qkv", h, (nh + 2 * kvh) * hd, lin), Gemm("o", nh * hd, h, lin)]
    inter = _round_up(model.intermediate_size, tp) // tp
    dense = (Gemm("gate_up", h, 2 * inter, lin), Gemm("down", inter, h, lin))
    moe = _moe_shape(model, gpu, wfmt, tp, ep) if model.moe is not None else None
    vocab_local = _round_up(model.vocab_size, 64 * tp) // tp  # vLLM pads vocab to 64 per rank
    lm_head = Gemm("lm_head", h, vocab_local, wfmt.lm_head_bits)
    return GpuShapes(tp, ep, nh, kvh, tuple(attn), dense, moe, lm_head, vocab_local * h, wfmt)


def _moe_shape(model: ModelSpec, gpu: GpuSpec, wfmt: WeightFormat, tp: int, ep: int) -> MoeShape:
    moe = model.moe
    assert moe is not None
    h, inter = model.hidden_size, moe.moe_intermediate_size
    if ep > 1:
        local = math.ceil(moe.num_experts / ep)
    else:
        local, inter = moe.num_experts, _round_up(inter, tp) // tp
    if wfmt.method == "mxfp4" and not is_blackwell(gpu):
        # Hopper/Ampere MXFP4 MoE kernels (Marlin / triton) store experts padded: hidden to a
        # multiple of 256 and intermediate to 128 (Mxfp4MoEMethod.create_weights in
        # vllm/model_executor/layers/quantization/mxfp4.py; seen in a stored copy). Cross-check:
        # gpt-oss-120b then loads 65.8 GiB vs vLLM's 'Model loading took 65.9651 GiB' (vllm#23278).
        h, inter = _round_up(h, 256), _round_up(inter, 128)
    shared_inter = (moe.shared_expert_intermediate_size or moe.moe_intermediate_size) * moe.shared_experts
    shared: tuple[Gemm, ...] = ()
    if shared_inter:
        si = _round_up(shared_inter, tp) // tp
        shared = (Gemm("shared_gate_up", model.hidden_size, 2 * si, wfmt.linear_bits),
                  Gemm("shared_down", si, model.hidden_size, wfmt.linear_bits))
    # the router stays unquantized in every checkpoint we know (gpt-oss modules_to_not_convert, fp8 MoE)
    router = Gemm("router", model.hidden_size, moe.num_experts, 8.0 * wfmt.act_bytes)
    return MoeShape(moe.num_experts, local, moe.experts_per_token, h, inter, wfmt.expert_bits, shared, router)


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


def stage_layer_kinds(model: ModelSpec, parts: list[int], stage: int) -> dict[str, int]:
    """How many layers of each attention kind a PP stage holds.

    Layer kinds are spread evenly through the depth in every hybrid model we know (gpt-oss
    alternates, Gemma 3 is 5:1, Llama 4 is 3:1), so a stage gets its share in proportion.
    """
    lk = model.layer_kinds
    total = model.num_hidden_layers
    start, n = sum(parts[:stage]), parts[stage]
    out = {}
    for kind in ("sliding", "chunked", "linear"):
        count = getattr(lk, kind)
        out[kind] = round(count * (start + n) / total) - round(count * start / total)
    out["full"] = n - out["sliding"] - out["chunked"] - out["linear"]
    return out


def stage_moe_layers(model: ModelSpec, parts: list[int], stage: int) -> tuple[int, int]:
    """(dense-MLP layers, MoE layers) on a stage: DeepSeek's first_k_dense layers come first, and
    Llama 4 Maverick interleaves (experts on every moe_layer_step-th layer)."""
    start, n = sum(parts[:stage]), parts[stage]
    if model.moe is None:
        return n, 0
    moe = model.moe.moe_layers_in(start, start + n)
    return n - moe, moe
