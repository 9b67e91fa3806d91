"""KV-cache arithmetic as vLLM's V1 engine does it (and the V0 figure for old versions).

Sources, all @ v0.18.0 unless said (see shared/reference/vllm/kv-capacity.md):
- page sizes: vllm/v1/kv_cache_interface.py 80-88 (standard), 196-207 (MLA), 199-200 (fp8_ds_mla);
- per-request worst case `max_memory_usage_bytes`: same file 113-121 (full), 251-270 (sliding),
  232-244 (chunked local), 293-300 (mamba);
- groups, blocks, tokens, concurrency, start-up check, max-length estimate:
  vllm/v1/core/kv_cache_utils.py (get_num_blocks 836-851, grouping 911-1155, report 1284-1327,
  check 616-651, estimate_max_model_len 662-714); the grouping heuristic (group size = smallest
  type's layer count, or the largest when largest < 1.5 x smallest) and the per-worker projection
  were read in a stored copy of vllm-project/vllm main (`_get_kv_cache_groups_uniform_page_size`,
  `get_kv_cache_configs`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from ..catalog.types import ModelSpec
from ..errors import ReaderError

# fp8_ds_mla stores 656 bytes per token per layer (512 fp8 latent + 4 fp32 scales + 64 bf16 rope),
# kv_cache_interface.py 199-200 @ v0.18.0
FP8_DS_MLA_TOKEN_BYTES = 656


def kv_dtype_bytes(kv_cache_dtype: str, model: ModelSpec, act_bytes: int) -> tuple[float, str]:
    """Bytes per KV element and a label. 'auto' = model dtype unless the checkpoint asks for fp8
    (vllm/utils/torch_utils.py 324-342 @ v0.18.0, resolve_kv_cache_dtype_string)."""
    d = (kv_cache_dtype or "auto").lower()
    if d == "auto":
        ckpt = model.quantization.kv_cache_dtype if model.quantization else None
        if ckpt:
            return kv_dtype_bytes(ckpt, model, act_bytes)[0], f"auto -> {ckpt} (checkpoint's quantization config)"
        return float(act_bytes), f"auto -> model dtype ({act_bytes} B)"
    if d.startswith("fp8") or d in ("int8_per_token_head", "fp8_per_token_head"):
        return 1.0, d
    if d in ("bfloat16", "float16", "half", "bf16", "fp16"):
        return 2.0, d
    if d in ("float32", "fp32"):
        return 4.0, d
    if d.startswith("nvfp4") or d.endswith("4bit") or d.startswith("int4"):
        return 0.5, d
    raise ReaderError(f"unknown kv_cache_dtype '{kv_cache_dtype}'", key="kv_cache_dtype")


@dataclass(frozen=True)
class KvKind:
    """Layers of one attention kind on one worker (one KV-cache spec)."""

    kind: str  # full | sliding | chunked | linear
    layers: int  # layers of this kind on the worker
    groups: int  # KV-cache groups this kind is split into (model-wide)
    page_bytes: int  # one block of one layer
    token_bytes: float  # one token of one layer (page_bytes / block_size)
    window: int | None = None  # sliding window or attention chunk
    state_blocks: int = 1  # linear/Mamba: blocks one request holds (1 + speculative; 2 + speculative to align)
    block_size: int | None = None  # tokens per block where vLLM raised it to even out pages; None = the layout's

    def max_request_bytes(self, max_len: int, block_size: int, mnbt: int, dcp: int = 1) -> int:
        """Worst-case bytes of one request in ONE layer of this kind (max_memory_usage_bytes). Decode context
        parallelism spreads a full-attention request's tokens over its dcp ranks
        (FullAttentionSpec.max_memory_usage_bytes, vllm/v1/kv_cache_interface.py @ v0.32.0)."""
        block_size = self.block_size or block_size
        if self.kind == "full":
            blocks = math.ceil(math.ceil(max_len / dcp) / block_size)
        elif self.kind == "sliding":
            blocks = math.ceil(min(self.window - 1 + mnbt, max_len) / block_size) + 1
        elif self.kind == "chunked":
            # chunked local attention (Llama 4): min(chunk + budget, max_len) tokens (kv_cache_interface.py
            # 232-244 @ v0.18.0 per kv-capacity.md; the exact expression is recalled, not line-checked)
            blocks = math.ceil(min(self.window + mnbt, max_len) / block_size)
        else:  # linear/Mamba: a constant state per request (MambaSpec.max_memory_usage_bytes)
            blocks = self.state_blocks
        return blocks * self.page_bytes


@dataclass(frozen=True)
class KvLayout:
    """The KV-cache layout of one worker (one TP rank of one PP stage)."""

    kinds: tuple[KvKind, ...]
    block_size: int
    group_size: int  # layers per KV-cache group on this worker: memory pools = group_size
    num_groups: int
    notes: tuple[str, ...] = field(default=())
    dcp: int = 1  # decode context parallel size: each rank keeps 1/dcp of a request's full-attention tokens

    @property
    def page_bytes(self) -> int:
        return max(k.page_bytes for k in self.kinds)

    @property
    def layers(self) -> int:
        return sum(k.layers for k in self.kinds)

    @property
    def bytes_per_token_full(self) -> float:
        """Bytes one token costs in every layer of this worker if all layers kept it (the
        full-attention formula: layers x 2 x kv_heads x head_dim x dtype)."""
        return sum(k.layers * k.token_bytes for k in self.kinds if k.kind != "linear")

    def num_blocks(self, available: int) -> int:
        """get_num_blocks: available // page // group_size (num_gpu_blocks_override is the caller's)."""
        if available <= 0 or self.group_size == 0:
            return 0
        return int(available // self.page_bytes // self.group_size)

    def tokens(self, num_blocks: int) -> int:
        """'GPU KV cache size: N tokens' = num_blocks // num_groups x block_size (x dcp, which v0.18.0 logs as
        "Multiplying the GPU KV cache size by the cp_world_size")."""
        return num_blocks // max(1, self.num_groups) * self.block_size * self.dcp

    def request_bytes(self, max_len: int, mnbt: int) -> int:
        """Bytes one request of max_len needs on this worker (the start-up check's figure):
        group_size x page x sum over groups of blocks per group."""
        blocks = 0
        for k in self.kinds:
            if k.layers == 0:
                continue
            per_group = math.ceil(k.max_request_bytes(max_len, self.block_size, mnbt, self.dcp) / self.page_bytes)
            blocks += per_group * k.groups
        return self.group_size * self.page_bytes * blocks

    def request_blocks(self, max_len: int, mnbt: int) -> int:
        """Blocks one request of max_len takes from the shared pool: the sum over groups of each group's
        cdiv(max_memory_usage_bytes, page) (get_max_concurrency_for_kv_cache_config)."""
        return math.ceil(self.request_bytes(max_len, mnbt) / (self.page_bytes * self.group_size)) if self.group_size else 0

    def max_concurrency(self, num_blocks: int, max_len: int, mnbt: int) -> float:
        """'Maximum concurrency for L tokens per request: X' (get_max_concurrency_for_kv_cache_config)."""
        per_request_blocks = self.request_blocks(max_len, mnbt)
        return num_blocks / per_request_blocks if per_request_blocks else float("inf")

    def estimate_max_len(self, available: int, max_len: int, mnbt: int) -> int:
        """Binary search for the longest max_model_len that fits (estimate_max_model_len): 0 if
        even one token does not fit."""
        if self.request_bytes(1, mnbt) > available:
            return 0
        lo, hi, best = 1, max_len, 1
        while lo <= hi:
            mid = (lo + hi) // 2
            if self.request_bytes(mid, mnbt) <= available:
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
        return best


def page_bytes_per_layer(model: ModelSpec, tp: int, kv_bytes: float, block_size: int,
                         kv_cache_dtype: str = "auto") -> tuple[int, float, str]:
    """(page bytes of one block of one attention layer, bytes per token per layer, formula text)."""
    if model.mla is not None:
        if (kv_cache_dtype or "").lower() == "fp8_ds_mla":
            return block_size * FP8_DS_MLA_TOKEN_BYTES, float(FP8_DS_MLA_TOKEN_BYTES), "fp8_ds_mla: 656 B/token"
        head = model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
        tok = head * kv_bytes  # one latent per token, no factor 2, not split by TP
        return int(block_size * tok), tok, (f"MLA: ({model.mla.kv_lora_rank} latent + "
                                            f"{model.mla.qk_rope_head_dim} rope) x {kv_bytes:g} B, not split by TP")
    kvh = max(1, model.num_key_value_heads // tp)
    tok = 2 * kvh * model.head_dim * kv_bytes
    text = (f"2 (K,V) x {kvh} KV heads/GPU ({model.num_key_value_heads} // TP {tp}"
            + (", replicated" if model.num_key_value_heads < tp else "") + f") x {model.head_dim} x {kv_bytes:g} B")
    return int(block_size * tok), tok, text


def kind_token_bytes(model: ModelSpec, tp: int, kv_bytes: float, tok: float) -> dict[str, float]:
    """Bytes one token costs in one layer of each attention kind: `tok` for all, but Gemma 4's full-attention
    layers with a head size and KV head count of their own (full_head_dim, full_kv_heads)."""
    out = {kind: tok for kind in ("full", "sliding", "chunked")}
    if model.full_head_dim and model.mla is None:
        kvh = max(1, (model.full_kv_heads or model.num_key_value_heads) // tp)
        out["full"] = 2 * kvh * model.full_head_dim * kv_bytes
    return out


def _even_pages(token_bytes: dict[str, float], kinds: dict[str, int], block_size: int) -> tuple[int, dict[str, int]]:
    """The one page every attention layer gets and each kind's block size: a kind whose page divides the largest
    has its block size raised until its page matches, another keeps its block and pads its page
    (unify_kv_cache_spec_page_size, vllm/v1/core/kv_cache_utils.py 1292-1354 @ v0.32.0)."""
    pages = {k: int(block_size * token_bytes[k]) for k, n in kinds.items() if n and k in token_bytes}
    if not pages:
        return int(block_size * token_bytes["full"]), {}
    top = max(pages.values())
    return top, {k: block_size * (top // p) if top % p == 0 else block_size for k, p in pages.items()}


def _global_groups(model_kinds: dict[str, int]) -> tuple[dict[str, int], int]:
    """Groups per kind and the model-wide group size (vLLM's n:1 heuristic,
    _get_kv_cache_groups_uniform_page_size in vllm/v1/core/kv_cache_utils.py @ v0.32.0): the group size is
    the smallest kind's layer count, or the largest when largest < 1.5 x smallest; Mamba layers are a
    kind like the attention kinds (their pages padded to the attention page)."""
    present = {k: n for k, n in model_kinds.items() if n > 0}
    if len(present) <= 1:
        return {k: 1 for k in present}, sum(present.values())
    lo, hi = min(present.values()), max(present.values())
    size = hi if hi < 1.5 * lo else lo
    return {k: math.ceil(n / size) for k, n in present.items()}, size


@dataclass(frozen=True)
class MambaState:
    """One request's recurrent state in one linear/Mamba layer on one GPU."""

    conv_bytes: int
    ssm_bytes: int
    text: str

    @property
    def bytes(self) -> int:
        return self.conv_bytes + self.ssm_bytes


_SSM_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def mamba_state(model: ModelSpec, tp: int, act_bytes: int, num_spec: int = 0,
                ssm_default: str = "model") -> MambaState:
    """State shapes as vLLM's MambaStateShapeCalculator builds them (gated_delta_net_state_shape,
    mamba2_state_shape in vllm/model_executor/layers/mamba/mamba_utils.py @ v0.32.0): a conv state of
    (kernel - 1 + speculative tokens) columns and the temporal state, both split by TP. Dtypes follow
    MambaStateDtypeCalculator: the conv state in the model dtype (mamba_cache_dtype 'auto'), the temporal
    state in the conv dtype unless the model asks for another (Nemotron-H: float32)."""
    m = model.ssm
    assert m is not None
    ssm_b = _SSM_DTYPE_BYTES.get(m.ssm_state_dtype or ssm_default, act_bytes)
    cols = m.conv_kernel - 1 + num_spec
    if m.kind == "short_conv":
        conv_dim, temporal = m.inner_size, 0
        what = f"conv ({conv_dim}/{tp} x {cols}) x {act_bytes} B, no temporal state"
    elif m.kind == "gated_delta_net":
        conv_dim = 2 * m.key_size + m.inner_size
        temporal = (m.heads // tp) * m.head_dim * m.state_size
        what = (f"conv ({conv_dim}/{tp} x {cols}) x {act_bytes} B + recurrent ({m.heads}/{tp} heads x "
                f"{m.head_dim} x {m.state_size}) x {ssm_b} B")
    else:
        from .shapes import mamba_extra_groups

        groups = m.groups + mamba_extra_groups(m.groups, tp)
        conv_dim = m.inner_size + 2 * groups * m.state_size
        temporal = (m.heads // tp) * m.head_dim * m.state_size
        what = (f"conv ({conv_dim}/{tp} x {cols}) x {act_bytes} B + SSM ({m.heads}/{tp} heads x {m.head_dim} x "
                f"{m.state_size}) x {ssm_b} B")
    conv = (conv_dim // tp) * cols * act_bytes
    return MambaState(conv, temporal * ssm_b, what)


def hybrid_block_size(block_size: int, attn_token_bytes: float, state_bytes: int, mla: bool) -> int:
    """The attention block size vLLM picks so one attention page holds a Mamba state: the smallest
    multiple of the kernel block alignment (16, the FlashAttention/FlashInfer/Triton minimum; 128 for
    MLA; at least the configured block size) whose page covers the state (Platform._align_hybrid_block_size,
    vllm/platforms/interface.py @ v0.32.0; HybridAttentionMambaModelConfig @ v0.18.0, same formula)."""
    align = max(16, block_size)
    if mla:
        align = max(align, 128)
    tokens = align * math.ceil(state_bytes / (align * attn_token_bytes))
    tokens = 16 * math.ceil(tokens / 16)
    return max(block_size, tokens)


def kv_layout(model: ModelSpec, stage_kinds: dict[str, int], tp: int, kv_bytes: float, block_size: int,
              kv_cache_dtype: str = "auto", disable_hybrid: bool = False, *, act_bytes: int = 2,
              num_spec: int = 0, prefix_caching: bool = False, dcp: int = 1,
              ssm_default: str = "model", checkpoint_blocks: int = 0) -> KvLayout:
    """The KV layout of one worker holding `stage_kinds` layers (full/sliding/chunked/linear/none), in vLLM's
    order: which layers keep a cache and at how many bytes per token, then the pages and block sizes that
    even them out, then the KV-cache groups the kinds fall into."""
    notes: list[str] = []
    _, tok1, _ = page_bytes_per_layer(model, tp, kv_bytes, 1, kv_cache_dtype)
    model_kinds, stage, token_bytes = _cached_kinds(model, stage_kinds, kind_token_bytes(model, tp, kv_bytes, tok1),
                                                    disable_hybrid, notes)
    state = mamba_state(model, tp, act_bytes, num_spec, ssm_default) if model.layer_kinds.linear else None
    if state is not None:
        block_size = _state_aligned_block(model, block_size, tok1, state, notes)
    page, kind_blocks = _even_pages(token_bytes, model_kinds, block_size)
    if any(b != block_size for b in kind_blocks.values()):
        notes.append("attention kinds differ in page size: vLLM raises the smaller kinds' block size to even them "
                     "out (" + ", ".join(f"{k} {b} tokens" for k, b in kind_blocks.items()) + ")")
    # mamba_cache_mode 'align' (prefix caching on) keeps 2 states and the family's prefill checkpoints, 'none'
    # one; + one per drafted token (MambaSpec.max_memory_usage_bytes, vllm/v1/kv_cache_interface.py @ v0.32.0)
    held = (2 + checkpoint_blocks if prefix_caching else 1) + num_spec
    groups, size_global = _global_groups(model_kinds)
    kinds, group_size = _grouped_kinds(model, groups, stage, token_bytes, page, block_size, kind_blocks, state, held)
    num_groups = sum(groups.values())
    if state is not None:
        aligned = f"{2 + checkpoint_blocks} with prefix caching: mamba_cache_mode align" + (
            ", one of them the prefill checkpoint" if checkpoint_blocks else "")
        notes.append("linear-attention/Mamba layers: a constant state per request, one page in each of their "
                     "KV-cache groups" + (f" ({aligned})" if prefix_caching else ""))
    if len(groups) > 1:
        padding = sum(g * size_global - model_kinds[k] for k, g in groups.items())
        notes.append(f"hybrid model: {num_groups} KV-cache groups of {size_global} layers; a request "
                     "takes blocks in every group, sliding/chunked groups only for their window"
                     + (f"; {padding} padding layer(s) make the groups equal" if padding else ""))
    if dcp > 1:
        notes.append(f"decode context parallel {dcp}: each GPU keeps 1/{dcp} of a request's full-attention tokens")
    return KvLayout(tuple(kinds), block_size, group_size, num_groups, tuple(notes), dcp)


def _cached_kinds(model: ModelSpec, stage_kinds: dict[str, int], token_bytes: dict[str, float],
                  disable_hybrid: bool, notes: list[str]) -> tuple[dict[str, int], dict[str, int], dict[str, float]]:
    """The model's layers that keep a cache, per kind; this worker's; each kind's bytes per token."""
    from .shapes import stage_layer_kinds

    cached = stage_layer_kinds(model, [model.num_hidden_layers], 0, cached=True)
    model_kinds = {kind: cached[kind] for kind in ("full", "sliding", "chunked", "linear")}
    stage = dict(stage_kinds)
    if model.kv_shared_layers:
        notes.append(f"KV sharing: the last {model.kv_shared_layers} layers read earlier layers' KV cache and keep "
                     "none of their own (no KV-cache spec in vLLM)")
    if disable_hybrid and (model.layer_kinds.sliding or model.layer_kinds.chunked):
        # --disable-hybrid-kv-cache-manager: every attention layer is treated as full attention, each kind's
        # layers keeping their own bytes per token
        attention = {k: model_kinds[k] for k in ("full", "sliding", "chunked")}
        token_bytes = dict(token_bytes)
        token_bytes["full"] = sum(n * token_bytes[k] for k, n in attention.items()) / max(1, sum(attention.values()))
        model_kinds = {"full": sum(attention.values()), "linear": model_kinds["linear"]}
        stage = {"full": stage.get("full", 0) + stage.get("sliding", 0) + stage.get("chunked", 0),
                 "linear": stage.get("linear", 0)}
        notes.append("hybrid KV cache manager disabled: sliding/chunked layers keep the full context")
    return model_kinds, stage, token_bytes


def _state_aligned_block(model: ModelSpec, block_size: int, tok1: float, state: MambaState,
                         notes: list[str]) -> int:
    aligned = hybrid_block_size(block_size, tok1, state.bytes, model.mla is not None)
    if aligned != block_size:
        notes.append(f"hybrid model: vLLM raises the attention block size from {block_size} to {aligned} "
                     f"tokens so one attention page ({aligned} x {tok1:,.0f} B) holds a layer's recurrent "
                     f"state ({state.bytes:,} B: {state.text}); the state page is padded to match")
    return aligned


def _grouped_kinds(model: ModelSpec, groups: dict[str, int], stage: dict[str, int], token_bytes: dict[str, float],
                   page: float, block_size: int, kind_blocks: dict[str, int], state: Optional[MambaState],
                   held: int) -> tuple[list[KvKind], int]:
    """This worker's kinds, each in its number of KV-cache groups, and the most layers a group of them holds."""
    windows = {"sliding": model.sliding_window, "chunked": model.attention_chunk_size}
    kinds = []
    group_size = 0
    for kind, g in groups.items():
        n = stage.get(kind, 0)
        if kind in windows and not windows[kind]:
            raise ReaderError(f"model {model.id} has {kind} layers but no window size", key="model")
        if kind == "linear":
            assert state is not None
            kinds.append(KvKind("linear", n, g, max(page, state.bytes), 0.0, state_blocks=held))
        else:
            own = kind_blocks.get(kind, block_size)
            kinds.append(KvKind(kind, n, g, page, token_bytes[kind], windows.get(kind),
                                block_size=own if own != block_size else None))
        group_size = max(group_size, math.ceil(n / g) if n else 0)
    return kinds, group_size


def v0_block_bytes(layout: KvLayout) -> float:
    """V0 engine (vllm/worker/cache_engine.py get_cache_block_size): one block spans every layer,
    every attention layer keeps the full context."""
    return layout.block_size * layout.bytes_per_token_full
