"""`compute_capacity(CapacityRequest) -> Capacity`: memory, KV blocks, tokens, concurrency, start-up error.

The request holds RESOLVED values (the lead's resolver fills user values and version defaults);
the result holds every intermediate figure with a `how` string, so a report can print the formula's
inputs next to each result, and vLLM's own start-up log lines / error text where it would print them.
"""
from __future__ import annotations

import math
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from ..catalog.types import GpuSpec, ModelSpec
from ..errors import ReaderError
from .behaviour import Fact, behaviour, version_tuple
from .budget import n_max
from .figures import Figure, GiB, gib
from .fragmentation import FragmentationReport, fragmentation, normal_lengths
from .kv import KvLayout, kv_dtype_bytes, kv_layout, page_bytes_per_layer, v0_block_bytes
from .profile_terms import ProfileTerm, carried, settings_of
from .memory import (StageInfo, activation_peak, capture_sizes, cudagraph_bytes, non_torch_bytes,
                     requested_bytes, weights_bytes)
from .shapes import (gpu_shapes, is_blackwell, pp_partition, resolve_weight_format, stage_layer_kinds,
                     stage_moe_layers)

_KV_SRC = "vllm/v1/core/kv_cache_utils.py @ v0.18.0 (kv-capacity.md sections 2-4)"


class CapacityRequest(BaseModel):
    """Everything the capacity model needs, already resolved (no None meaning 'default' left except
    where None is itself the vLLM value, e.g. kv_cache_memory_bytes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: ModelSpec
    gpu: GpuSpec
    stage_gpus: Optional[tuple[GpuSpec, ...]] = None  # GPU of each PP stage when they differ
    vllm_version: str
    engine: Optional[Literal["v0", "v1"]] = None  # None: the version's default engine (VLLM_USE_V1)
    tensor_parallel_size: int = Field(1, ge=1)
    pipeline_parallel_size: int = Field(1, ge=1)
    data_parallel_size: int = Field(1, ge=1)
    decode_context_parallel_size: int = Field(1, ge=1)  # DCP splits full-attention KV over the TP ranks
    enable_expert_parallel: bool = False
    redundant_experts: int = Field(default=0, ge=0)  # EPLB's extra physical experts (with expert parallelism)
    pp_layer_partition: Optional[tuple[int, ...]] = None  # VLLM_PP_LAYER_PARTITION
    dtype: str = "auto"
    quantization: Optional[str] = None  # None: the checkpoint's own quantization, if any
    kv_cache_dtype: str = "auto"
    block_size: int = Field(16, ge=1)
    max_model_len: int = Field(ge=1)
    max_num_batched_tokens: int = Field(ge=1)
    max_num_seqs: int = Field(ge=1)
    gpu_memory_utilization: float = Field(gt=0, le=1)
    kv_cache_memory_bytes: Optional[int] = Field(None, ge=0)
    cpu_offload_gb: float = Field(0, ge=0)
    num_gpu_blocks_override: Optional[int] = Field(None, ge=0)
    enforce_eager: bool = False
    cudagraph_capture_sizes: Optional[tuple[int, ...]] = None
    max_cudagraph_capture_size: Optional[int] = None
    speculative_method: Optional[str] = None
    num_speculative_tokens: int = Field(0, ge=0)
    disable_hybrid_kv_cache_manager: bool = False
    enable_prefix_caching: bool = False  # Mamba layers keep two states per request (mamba_cache_mode align)
    # What is known about the machine beyond the config (defaults: nothing else on the GPU)
    other_process_memory_bytes: int = Field(0, ge=0)  # held by other processes on each GPU at start-up
    # Measured figures from a real start-up log replace our estimates when given
    weights_bytes: Optional[int] = None  # 'Model loading took X GiB'
    activation_peak_bytes: Optional[int] = None  # 'torch peak memory increase'
    non_torch_bytes: Optional[int] = None  # 'non-torch forward increase memory'
    cudagraph_memory_bytes: Optional[int] = None
    total_memory_bytes: Optional[int] = Field(None, gt=0)  # the device's total as the log printed it
    available_kv_bytes: Optional[int] = None  # 'Available KV cache memory: X GiB'
    measured_source: str = "given in the request"  # where the measured figures above come from
    # Terms a calibration profile learned from the deployment's logs, at the settings they were measured at
    # (a log of this very run, above, wins); carried to this request's settings by profile_terms.carried
    profile_terms: dict[str, ProfileTerm] = Field(default_factory=dict)
    # A what-if of a logged deployment: its estimate is moved by what the log measured at the logged settings
    kv_correction_bytes: float = 0.0
    kv_correction_how: str = ""
    # Workload, for concurrency at typical lengths and fragmentation
    workload_mean_context: Optional[float] = Field(None, gt=0)
    workload_p99_context: Optional[float] = Field(None, gt=0)
    workload_context_sd: Optional[float] = Field(None, ge=0)


class StartupError(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["no_kv_memory", "max_len_too_long", "free_memory"]
    message: str  # the text vLLM raises (ValueError)
    stage: int  # pipeline stage whose worker fails
    needed_bytes: Optional[float] = None
    available_bytes: float
    estimated_max_model_len: Optional[int] = None
    source: str
    verbatim: bool = True  # False where the wording was reconstructed, not read


class WorkerMemory(BaseModel):
    """One worker (a TP rank of one PP stage)."""

    model_config = ConfigDict(frozen=True)
    stage: int
    gpu: str
    layers: int
    total: Figure
    requested: Figure
    weights: Figure
    activation_peak: Figure
    non_torch: Figure
    cudagraph: Figure
    other_processes: Figure
    available_kv: Figure
    num_blocks: Figure
    kv_request_bytes: Figure  # one request at max_model_len on this worker
    # the KV memory was given (kv_cache_memory_bytes, the CPU build's VLLM_CPU_KVCACHE_SPACE), so whether one
    # max-length request fits does not depend on the GPU's memory
    kv_given: bool = False


class Capacity(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    gpu: str
    vllm_version: str
    engine: Literal["v0", "v1"]
    parallel: str
    weight_format: str
    kv_cache_dtype: str
    block_size: int
    max_model_len: int
    kv_bytes_per_token: Figure  # per GPU, all layers of stage 0 keeping the token
    page_bytes: Figure  # one block of one layer
    kv_groups: str
    workers: list[WorkerMemory]
    num_gpu_blocks: Figure
    gpu_kv_cache_tokens: Figure
    max_concurrency: Figure  # at max_model_len, as vLLM logs it
    concurrency_at_mean: Optional[Figure] = None
    concurrency_at_p99: Optional[Figure] = None
    fragmentation: Optional[FragmentationReport] = None
    startup_error: Optional[StartupError] = None
    log_lines: list[str] = Field(default_factory=list)  # what vLLM prints at start-up
    warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # version facts used, assumptions

    @property
    def fits(self) -> bool:
        return self.startup_error is None


def _fmt_gib(x: float, style: str) -> str:
    return f"{x / GiB:.2f}" if style == "fixed2" else str(round(x / GiB, 2))


def _stages(req: CapacityRequest) -> list[StageInfo]:
    m, pp = req.model, req.pipeline_parallel_size
    if pp > m.num_hidden_layers:
        raise ReaderError(f"pipeline_parallel_size {pp} exceeds the model's {m.num_hidden_layers} layers",
                          key="pipeline_parallel_size")
    gpus = req.stage_gpus or (req.gpu,) * pp
    if len(gpus) != pp:
        raise ReaderError(f"stage_gpus has {len(gpus)} entries for {pp} pipeline stages", key="stage_gpus")
    parts = pp_partition(m.num_hidden_layers, pp, req.pp_layer_partition)
    out = []
    for i, n in enumerate(parts):
        dense, moe = stage_moe_layers(m, parts, i)
        out.append(StageInfo(i, gpus[i], n, stage_layer_kinds(m, parts, i), dense, moe, i == 0, i == pp - 1,
                             stage_layer_kinds(m, parts, i, cached=True)))
    return out


def _engine(req: CapacityRequest, version) -> str:
    return req.engine or behaviour("engine_default", version).value


def compute_capacity(req: CapacityRequest) -> Capacity:
    version = version_tuple(req.vllm_version)
    engine = _engine(req, version)
    m, tp = req.model, req.tensor_parallel_size
    if m.num_attention_heads % tp:
        raise ReaderError(f"{m.num_attention_heads} attention heads are not divisible by tensor_parallel_size {tp}",
                          key="tensor_parallel_size")
    ep = tp * req.data_parallel_size if (req.enable_expert_parallel and m.moe is not None) else 1
    wfmt = resolve_weight_format(m, req.quantization, req.dtype, req.gpu)
    shapes = gpu_shapes(m, req.gpu, wfmt, tp, ep, req.redundant_experts if ep > 1 else 0, req.data_parallel_size)
    kvb, kv_label = kv_dtype_bytes(req.kv_cache_dtype, m, wfmt.act_bytes)
    stages = _stages(req)
    notes: list[str] = []
    warnings: list[str] = []
    facts = _facts(version, engine, notes)

    ssm_default, checkpoint_blocks = "model", 0
    if m.ssm is not None:
        checkpoint_blocks = behaviour("mamba_prefill_checkpoint_blocks", version, family=m.model_type).value
        fact = behaviour("mamba_ssm_cache_dtype_auto", version, family=m.model_type)
        ssm_default = fact.value
        if m.ssm.ssm_state_dtype is None:
            notes.append(f"recurrent state dtype under mamba_ssm_cache_dtype auto: {fact.value} ({fact.source}"
                         + ("" if fact.verified else "; version boundary not verified") + ")")
    def layout_of(kinds: dict[str, int]) -> KvLayout:
        return kv_layout(m, kinds, tp, kvb, req.block_size, req.kv_cache_dtype, req.disable_hybrid_kv_cache_manager,
                         act_bytes=wfmt.act_bytes, num_spec=req.num_speculative_tokens,
                         prefix_caching=req.enable_prefix_caching, dcp=req.decode_context_parallel_size,
                         ssm_default=ssm_default, checkpoint_blocks=checkpoint_blocks)

    workers, layouts = [], []
    for st in stages:
        layout = layout_of(st.cached_kinds or st.kinds)
        layouts.append(layout)
        workers.append(_worker_memory(req, st, shapes, layout, facts, engine, notes))
    notes.extend(dict.fromkeys(n for lay in layouts for n in lay.notes))
    warnings.extend(_model_warnings(m, engine))

    error = _startup_error(req, stages, workers, layouts, facts, engine, layout_of)
    worst = min(range(len(workers)), key=lambda i: workers[i].num_blocks.value)
    layout, w = layouts[worst], workers[worst]
    blocks = int(w.num_blocks.value)
    bs = layout.block_size
    if engine == "v0":
        tokens = blocks * bs
        tok_how = f"num_gpu_blocks {blocks} x block_size {bs} (V0: one block spans every layer)"
        conc = tokens / req.max_model_len
        conc_how = f"{tokens:,} tokens / max_model_len {req.max_model_len:,}"
    else:
        conc = layout.max_concurrency(blocks, req.max_model_len, req.max_num_batched_tokens)
        per_req = layout.request_blocks(req.max_model_len, req.max_num_batched_tokens)
        conc_how = (f"num_blocks {blocks} / {per_req} blocks one request of {req.max_model_len:,} tokens takes "
                    f"in its {layout.num_groups} KV-cache group(s)")
        if facts["kv_tokens_report"].value == "concurrency":
            tokens = int(conc * req.max_model_len)
            tok_how = f"max concurrency {conc:.2f} x max_model_len {req.max_model_len:,}"
        else:
            tokens = layout.tokens(blocks)
            tok_how = f"num_blocks {blocks} // {layout.num_groups} KV-cache group(s) x block_size {bs}"
    page, tok, page_how = page_bytes_per_layer(m, tp, kvb, bs, req.kv_cache_dtype)
    l0 = layouts[0]
    per_token_how = f"{l0.layers} layers on this GPU x {tok:,.0f} B ({page_how})"
    page_how = f"block_size {bs} x {tok:,.0f} B per token per layer"
    attention = [k for k in l0.kinds if k.kind != "linear" and k.layers]
    if len({k.token_bytes for k in attention}) > 1:  # Gemma 4: full-attention layers with their own head size
        per_token_how = " + ".join(f"{k.layers} {k.kind} layers x {k.token_bytes:,.0f} B" for k in attention)
        page = l0.page_bytes
        page_how = " = ".join(dict.fromkeys(f"block_size {k.block_size or bs} x {k.token_bytes:,.0f} B ({k.kind})"
                                            for k in attention))
    cap = Capacity(
        model=m.id, gpu=req.gpu.id if not req.stage_gpus else " + ".join(g.id for g in req.stage_gpus),
        vllm_version=req.vllm_version, engine=engine,
        parallel=f"TP {tp} x PP {req.pipeline_parallel_size} x DP {req.data_parallel_size}" + (f", EP {ep}" if ep > 1 else ""),
        weight_format=wfmt.describe(), kv_cache_dtype=kv_label, block_size=bs,
        max_model_len=req.max_model_len,
        kv_bytes_per_token=Figure(value=l0.bytes_per_token_full, unit="bytes", source=_KV_SRC, how=per_token_how),
        page_bytes=Figure(value=page, unit="bytes", source="vllm/v1/kv_cache_interface.py 80-88, 196-207 @ v0.18.0",
                          how=page_how),
        kv_groups=_groups_text(l0),
        workers=workers,
        num_gpu_blocks=Figure(value=blocks, unit="blocks", source=_KV_SRC,
                              how=("num_gpu_blocks_override" if req.num_gpu_blocks_override is not None else
                                   f"min over {len(workers)} worker(s): {w.num_blocks.how}")),
        gpu_kv_cache_tokens=Figure(value=tokens, unit="tokens", how=tok_how, source=_KV_SRC + " l.1284-1327"),
        max_concurrency=Figure(value=conc, unit="x", how=conc_how, source=_KV_SRC + " l.799-817"),
        startup_error=error, notes=notes, warnings=warnings,
    )
    return _with_workload(req, cap, layout, blocks, tokens, engine)


def _facts(version, engine: str, notes: list[str]) -> dict[str, Fact]:
    names = ("cudagraph_memory_subtracted", "free_memory_check_at_startup", "gib_format", "pp_startup_check",
             "startup_check_reserves_null_block",
             "kv_tokens_report")
    facts = {n: behaviour(n, version) for n in names}
    facts["utilization_scope"] = behaviour("utilization_scope", version, engine)
    facts["non_torch_estimate"] = behaviour("non_torch_estimate", version, engine)
    for n, f in facts.items():
        notes.append(f"{n} = {f.value} ({f.source}{'' if f.verified else '; version boundary not verified'})")
    return facts


def _worker_memory(req: CapacityRequest, st: StageInfo, shapes, layout: KvLayout, facts, engine: str,
                   notes: list[str]) -> WorkerMemory:
    m = req.model
    gpu = st.gpu if req.total_memory_bytes is None else st.gpu.model_copy(update={"memory_bytes": req.total_memory_bytes})
    total = Figure(value=gpu.memory_bytes, unit="bytes", how=f"{gpu.id}: {gib(gpu.memory_bytes)} as torch reports it"
                   + (" (measured)" if req.total_memory_bytes is not None else ""),
                   source=req.measured_source if req.total_memory_bytes is not None else gpu.source)
    req_fig = requested_bytes(gpu, req.gpu_memory_utilization)
    world = req.tensor_parallel_size * req.pipeline_parallel_size * req.data_parallel_size
    weights = _given(req.weights_bytes, "weights (measured)", req) or weights_bytes(m, shapes, st, req.pipeline_parallel_size)
    moe_factor = req.data_parallel_size if m.moe is not None else 1
    act = _given(req.activation_peak_bytes, "activation peak (measured)", req) or _term(
        req, "activation_peak", activation_peak(m, shapes, st, req.max_num_batched_tokens, req.max_num_seqs, moe_factor))
    nt = _given(req.non_torch_bytes, "non-torch memory (measured)", req) or _term(
        req, "non_torch", non_torch_bytes(world, facts["non_torch_estimate"].value))
    graphs = _graph_figure(req, st, facts, engine)
    global_scope = facts["utilization_scope"].value == "global"
    other = Figure(value=req.other_process_memory_bytes if global_scope else 0, unit="bytes",
                   how=(f"{gib(req.other_process_memory_bytes)} held by other processes counts against the "
                        "utilization (global scope in this version)") if global_scope and req.other_process_memory_bytes
                   else "not counted (per-instance accounting, or none given)",
                   source=facts["utilization_scope"].source)
    offload = min(req.cpu_offload_gb * GiB, weights.value)
    if req.kv_cache_memory_bytes is not None:
        avail = float(req.kv_cache_memory_bytes)
        avail_how = f"kv_cache_memory_bytes {gib(avail)} (profiling result and utilization ignored)"
    elif req.available_kv_bytes is not None:
        avail = float(req.available_kv_bytes)
        avail_how = f"measured: vLLM logged 'Available KV cache memory' {gib(avail)} ({req.measured_source})"
    else:
        avail = req_fig.value - weights.value - act.value - nt.value - graphs.value - other.value + offload
        avail_how = (f"{gib(req_fig.value)} requested - weights {gib(weights.value)} - activation peak "
                     f"{gib(act.value)} - non-torch {gib(nt.value)}"
                     + (f" - CUDA graphs {gib(graphs.value)}" if graphs.value else "")
                     + (f" - other processes {gib(other.value)}" if other.value else "")
                     + (f" + cpu_offload {gib(offload)}" if offload else ""))
        if req.kv_correction_bytes:
            avail += req.kv_correction_bytes
            avail_how += f" {'+' if req.kv_correction_bytes >= 0 else '-'} {gib(abs(req.kv_correction_bytes))} " \
                         f"({req.kv_correction_how})"
    measured = req.kv_cache_memory_bytes is not None or req.available_kv_bytes is not None
    avail_fig = Figure(value=avail, unit="bytes", how=avail_how, estimated=not measured,
                       source="vllm/v1/worker/gpu_worker.py determine_available_memory 350-470 @ v0.18.0")
    blocks, blocks_how = _blocks(req, layout, avail, engine)
    need = layout.request_bytes(req.max_model_len, req.max_num_batched_tokens)
    return WorkerMemory(
        stage=st.index, gpu=st.gpu.id, layers=st.layers, total=total, requested=req_fig, weights=weights,
        activation_peak=act, non_torch=nt, cudagraph=graphs, other_processes=other, available_kv=avail_fig,
        kv_given=req.kv_cache_memory_bytes is not None, num_blocks=Figure(value=blocks, unit="blocks", how=blocks_how, source=_KV_SRC + " get_num_blocks 836-851"),
        kv_request_bytes=Figure(value=need, unit="bytes", source=_KV_SRC + " max_memory_usage_bytes",
                                how=f"one request of {req.max_model_len:,} tokens on this worker: {gib(need)}"))


def _blocks(req: CapacityRequest, layout: KvLayout, avail: float, engine: str) -> tuple[int, str]:
    if req.num_gpu_blocks_override is not None:
        return req.num_gpu_blocks_override, f"num_gpu_blocks_override {req.num_gpu_blocks_override}"
    if engine == "v0":
        per_block = v0_block_bytes(layout)
        n = max(0, int(avail // per_block))
        return n, f"available {gib(avail)} // V0 block {per_block / 2**20:.2f} MiB ({layout.layers} layers x {layout.block_size} tokens)"
    n = layout.num_blocks(int(avail))
    return n, (f"available {gib(avail)} // page {layout.page_bytes:,} B // group size {layout.group_size}"
               f" = {n:,}")


def _graph_figure(req: CapacityRequest, st: StageInfo, facts, engine: str) -> Figure:
    src = facts["cudagraph_memory_subtracted"]
    if req.cudagraph_memory_bytes is not None:
        value = req.cudagraph_memory_bytes if src.value else 0
        return Figure(value=value, unit="bytes", how=f"measured {gib(req.cudagraph_memory_bytes)}"
                      + ("" if src.value else " (not subtracted before v0.20.0)"), source=src.source, basis="measured")
    estimate = _graph_estimate(req, st, facts, engine)
    if "cudagraph" in req.profile_terms and src.value and engine == "v1":
        return carried("cudagraph", req.profile_terms["cudagraph"], estimate, settings_of(req))
    return estimate


def _graph_estimate(req: CapacityRequest, st: StageInfo, facts, engine: str) -> Figure:
    src = facts["cudagraph_memory_subtracted"]
    if req.enforce_eager or engine == "v0" or not src.value:
        why = "enforce_eager" if req.enforce_eager else (
            "V0 engine" if engine == "v0" else "graphs come out of the utilization headroom before v0.20.0")
        return Figure(value=0, unit="bytes", how=f"not subtracted ({why})", source=src.source)
    arch_default = 1024 if is_blackwell(st.gpu) and version_tuple(req.vllm_version) >= (0, 28, 0) else 512
    sizes = capture_sizes(req.max_num_seqs, req.max_num_batched_tokens, req.num_speculative_tokens,
                          list(req.cudagraph_capture_sizes or []), req.max_cudagraph_capture_size, arch_default)
    return cudagraph_bytes(req.model, st.layers, sizes).model_copy(update={"basis": "estimated"})


def _given(value: Optional[int], label: str, req: CapacityRequest) -> Optional[Figure]:
    if value is None:
        return None
    return Figure(value=value, unit="bytes", how=f"{label}: {gib(value)}", source=req.measured_source,
                  basis="measured")


def _term(req: CapacityRequest, name: str, estimate: Figure) -> Figure:
    """An estimated term, or the calibration profile's where it has one."""
    estimate = estimate.model_copy(update={"basis": "estimated"})
    term = req.profile_terms.get(name)
    return estimate if term is None else carried(name, term, estimate, settings_of(req))


def _startup_error(req: CapacityRequest, stages, workers: list[WorkerMemory], layouts: list[KvLayout],
                   facts, engine: str, layout_of) -> Optional[StartupError]:
    style = facts["gib_format"].value
    for st, w in zip(stages, workers):
        if (facts["free_memory_check_at_startup"].value and engine == "v1"
                and facts["utilization_scope"].value == "per_instance" and req.other_process_memory_bytes
                and st.gpu.memory_bytes - req.other_process_memory_bytes < w.requested.value):
            free = st.gpu.memory_bytes - req.other_process_memory_bytes
            msg = (f"Free memory on device ({_fmt_gib(free, 'fixed2')}/{_fmt_gib(st.gpu.memory_bytes, 'fixed2')} GiB) "
                   f"on startup is less than desired GPU memory utilization ({req.gpu_memory_utilization}, "
                   f"{_fmt_gib(w.requested.value, 'fixed2')} GiB). Decrease GPU memory utilization or reduce GPU "
                   "memory used by other processes.")
            return StartupError(kind="free_memory", message=msg, stage=st.index, available_bytes=free,
                                source=facts["free_memory_check_at_startup"].source, verbatim=False)
    if engine == "v0":
        return _v0_error(req, workers, layouts)
    avail = [w.available_kv.value for w in workers]
    for st, w in zip(stages, workers):
        if w.available_kv.value <= 0:
            return StartupError(
                kind="no_kv_memory", stage=st.index, available_bytes=w.available_kv.value, source=_KV_SRC + " 622-628",
                message="No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                        "initializing the engine.")
    if facts["pp_startup_check"].value == "whole_model" and len(stages) > 1:
        # older versions summed every layer of the model and compared it with one worker's memory
        whole = layout_of(req.model.layer_kinds.model_dump())
        i = min(range(len(avail)), key=lambda j: avail[j])
        checks = [(stages[i], avail[i], whole)]
    else:
        checks = list(zip(stages, avail, layouts))
    for st, a, lay in checks:
        if facts["startup_check_reserves_null_block"].value:
            a -= lay.page_bytes * lay.group_size  # the pool's null block, one block of every layer of the group
        need = lay.request_bytes(req.max_model_len, req.max_num_batched_tokens)
        if need > a:
            est = lay.estimate_max_len(int(a), req.max_model_len, req.max_num_batched_tokens)
            msg = (f"To serve at least one request with the models's max seq len ({req.max_model_len}), "
                   f"({_fmt_gib(need, style)} GiB KV cache is needed, which is larger than the available KV cache "
                   f"memory ({_fmt_gib(a, style)} GiB). "
                   + (f"Based on the available memory, the estimated maximum model length is {est}. " if est > 0 else "")
                   + "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
                     "the engine.")
            return StartupError(kind="max_len_too_long", message=msg, stage=st.index, needed_bytes=need,
                                available_bytes=a, estimated_max_model_len=est, source=_KV_SRC + " 616-714")
    return None


def _v0_error(req: CapacityRequest, workers: list[WorkerMemory], layouts: list[KvLayout]) -> Optional[StartupError]:
    src = "vllm/worker/worker.py raise_if_cache_size_invalid (V0 engine)"
    for w in workers:
        if w.num_blocks.value <= 0:
            return StartupError(kind="no_kv_memory", stage=w.stage, available_bytes=w.available_kv.value, source=src,
                                message="No available memory for the cache blocks. Try increasing "
                                        "`gpu_memory_utilization` when initializing the engine.")
    w = min(workers, key=lambda x: x.num_blocks.value)
    tokens = int(w.num_blocks.value) * req.block_size
    if req.max_model_len > tokens:
        return StartupError(
            kind="max_len_too_long", stage=w.stage, available_bytes=w.available_kv.value, source=src,
            needed_bytes=req.max_model_len * v0_block_bytes(layouts[w.stage]) / req.block_size,
            estimated_max_model_len=tokens,
            message=(f"The model's max seq len ({req.max_model_len}) is larger than the maximum number of tokens that "
                     f"can be stored in KV cache ({tokens}). Try increasing `gpu_memory_utilization` or decreasing "
                     "`max_model_len` when initializing the engine."))
    return None


def _requests_at(layout: KvLayout, blocks: int, ctx: float, mnbt: int, engine: str) -> Figure:
    """Requests of `ctx` tokens the cache holds at once. V0 and one-group V1: blocks (less the null block)
    x block size / context. Several groups (sliding windows, Mamba states): the blocks one such request
    takes summed over every group, as vLLM's get_max_concurrency_for_kv_cache_config counts them."""
    src = "N_max ~ blocks x block_size / mean context"
    usable = max(blocks - 1, 0)
    if engine == "v0" or layout.num_groups == 1:
        return Figure(value=n_max(usable, layout.block_size, ctx), unit="requests", source=src,
                      how=f"({blocks} - 1 null block) x {layout.block_size} / {ctx:,.0f} tokens")
    per_request = layout.request_blocks(math.ceil(ctx), mnbt)
    return Figure(value=usable / per_request if per_request else 0.0, unit="requests",
                  source="vllm/v1/core/kv_cache_utils.py get_max_concurrency_for_kv_cache_config, at this context",
                  how=f"({blocks} - 1 null block) / {per_request} blocks per request of {ctx:,.0f} tokens "
                      f"over {layout.num_groups} KV-cache groups")


def _model_warnings(m: ModelSpec, engine: str) -> list[str]:
    """Parts of the deployment this model leaves out of the memory figures, said plainly."""
    out = list(m.unmodelled)
    if m.is_multimodal:
        out.append("multimodal model: the vision/audio encoder's weights, its profiling run and the encoder "
                   "cache are not counted; only the language model's memory is")
    if m.layer_kinds.linear and engine == "v0":
        out.append("V0 engine with Mamba/linear-attention layers: V0 kept their states in a separate cache "
                   "sized by max_num_seqs, which is not modelled; figures follow V1's accounting")
    return out


def _groups_text(layout: KvLayout) -> str:
    kinds = ", ".join(f"{k.kind} {k.layers} layers in {k.groups} group(s)"
                      + (f" (window {k.window})" if k.window else "") for k in layout.kinds)
    return f"{layout.num_groups} group(s), group size {layout.group_size}: {kinds}"


def _with_workload(req: CapacityRequest, cap: Capacity, layout: KvLayout, blocks: int, tokens: int,
                   engine: str) -> Capacity:
    upd: dict = {}
    w0 = cap.workers[0]
    lines = []
    if engine == "v1":
        lines.append(f"Available KV cache memory: {w0.available_kv.value / GiB:.2f} GiB")
        if cap.startup_error is None:
            lines.append(f"GPU KV cache size: {tokens:,} tokens")
            lines.append(f"Maximum concurrency for {req.max_model_len:,} tokens per request: {cap.max_concurrency.value:.2f}x")
    else:
        lines.append(f"# GPU blocks: {blocks}")
    if cap.startup_error is not None:
        lines.append(f"ValueError: {cap.startup_error.message}")
    upd["log_lines"] = lines
    for name, ctx in (("concurrency_at_mean", req.workload_mean_context), ("concurrency_at_p99", req.workload_p99_context)):
        if ctx:
            upd[name] = _requests_at(layout, blocks, ctx, req.max_num_batched_tokens, engine)
    if req.workload_mean_context and req.workload_context_sd is not None:
        lengths = normal_lengths(1000, req.workload_mean_context, req.workload_context_sd, 1, req.max_model_len)
        upd["fragmentation"] = fragmentation(lengths, req.max_model_len, layout.block_size, cap.kv_bytes_per_token.value)
    if req.speculative_method:
        upd["warnings"] = [*cap.warnings, f"speculative decoding ({req.speculative_method}): draft-model weights and "
                           "KV are not included in this memory estimate"]
    return cap.model_copy(update=upd)
