"""Roofline step-time model: GPU seconds for one engine step's batch, calibrated on a real H200.

Parts of a step (per GPU; pipeline stages run one after another for one batch):
- linear layers: for each weight matrix, a roofline of FLOPs against bytes (weights + activations),
  joined by a soft knee `(t_c^p + t_m^p)^(1/p)` because real GEMMs do not switch sharply from
  memory- to compute-bound; M = tokens in the step (padded up to the CUDA-graph bucket);
- element-wise ops (norms, residual adds, activation) as bytes moved;
- attention per request: FLOPs of its new tokens against its context (causal inside the chunk)
  against the KV bytes it reads; sliding-window layers read at most the window;
- LM head on the sampled rows only;
- MoE: router + the experts the batch touches (expected distinct experts under uniform routing,
  E x (1 - (1 - k/E)^tokens)), so weight bytes grow with the batch until every expert is touched;
- tensor-parallel all-reduce (2 per layer) over the GPU's interconnect, pipeline send/recv;
- fp8 GEMMs at the fp8 tensor peak where the GPU has it (W8A8; fp4 likewise for W4A4), else 16-bit
  compute, with their own efficiency relative to 16-bit GEMMs (lowbit_compute_eff);
- per-step overhead: CUDA-graph replay gaps per layer, or the eager CPU launch floor
  (time = soft-max of GPU time and CPU launch time, since the CPU runs ahead of the GPU).

- sampling: a time per sampled row (sampler and output processing; fitted from bench results).

The coefficients (coefficients.py) come from the caller, read from a calibration profile
(reader/calibration/; default_calibration there gives the shipped one): the shipped one is fitted on
measured H200 steps (reader/calibration/profiles/h200-sxm.yaml), `vllm-reader calibrate` fits others
from a deployment's own bench results. The peaks of a GPU are its datasheet figures times the
profile's achievable fractions (the H200's: 762/989 TFLOP/s, 4225/4800 GB/s).
`__call__` is vectorised: per-step cost is a few numpy reductions over the requests plus table
look-ups precomputed at construction (see benchmarks/bench_steptime.py).
"""
from __future__ import annotations

import numpy as np

from ..batch import StepBatch
from .coefficients import StepTimeCoefficients as Calibration
from ..catalog.types import GpuSpec, ModelSpec
from ..errors import ReaderError
from .kv import kv_dtype_bytes, mamba_state
from .memory import capture_sizes as default_capture_sizes
from .shapes import Gemm, GpuShapes, gpu_shapes, resolve_weight_format, stage_layer_kinds, stage_moe_layers

_M_TABLE = 1 << 15  # precomputed token counts; larger steps are computed on the fly
_SHAPE_REFERENCE = 8192  # the narrower GEMM side at which gemm_shape_dim leaves the efficiency as fitted


def _knee_scalar(tc: float, tm: float, p: float) -> float:
    hi = tc if tc > tm else tm
    if hi <= 0:
        return 0.0
    return hi * ((tc / hi) ** p + (tm / hi) ** p) ** (1.0 / p)


def _knee(tc, tm, p):
    """Soft roofline: max(tc, tm) when p -> inf, sum when p = 1."""
    hi = np.maximum(tc, tm)
    safe = np.where(hi > 0, hi, 1.0)
    return np.where(hi > 0, hi * ((tc / safe) ** p + (tm / safe) ** p) ** (1.0 / p), 0.0)


class StepTimeModel:
    """Seconds for one step of a given batch on one replica (TP x PP GPUs)."""

    def __init__(self, model: ModelSpec, gpu: GpuSpec, calibration: Calibration, tp: int = 1, pp: int = 1,
                 quantization: str | None = None,
                 dtype: str = "auto", kv_cache_dtype: str = "auto", enforce_eager: bool = False,
                 cudagraph_capture_sizes: list[int] | None = None, max_num_seqs: int = 256,
                 max_num_batched_tokens: int = 8192, ep: int = 1, dp: int = 1, split_kv: bool = True,
                 table_tokens: int = _M_TABLE) -> None:
        if tp < 1 or pp < 1:
            raise ReaderError("tp and pp must be >= 1", key="tp")
        if model.num_attention_heads % tp:
            raise ReaderError(f"{model.num_attention_heads} heads not divisible by --tp {tp}", key="tp")
        self.model, self.gpu, self.tp, self.pp, self.ep = model, gpu, tp, pp, ep
        self.cal = cal = calibration
        self.wfmt = resolve_weight_format(model, quantization, dtype, gpu)
        # Without EP, vLLM slices the routed experts over the DP ranks too (the memory counts that: capacity/api.py),
        # but decode under DP without EP measures as if each rank read its TP slice of every expert: Qwen3-235B-A22B
        # FP8 on H200 TP1 x DP4, 4-7 clients, 41-44 ms per output token (aiconfigurator's silicon rows), where the
        # DP slice predicts 15 ms and the TP slice about 45. The step time keeps the TP slice until the cause (the
        # naive dispatch's gathers, the ranks' lock-step) is modelled.
        self.shapes: GpuShapes = gpu_shapes(model, gpu, self.wfmt, tp, ep)
        self.moe_factor = dp if model.moe is not None else 1
        # achievable peaks of this GPU (datasheet x the fraction the measured H200 reached)
        self.flops16 = gpu.bf16_tflops * 1e12 * cal.achievable_matmul_fraction
        self.flops_w = (gpu.fp8_tflops * 1e12 * cal.achievable_matmul_fraction if self.wfmt.fp8_compute
                        else self.flops16)
        if self.wfmt.fp4_compute:  # W4A4 (NVFP4) GEMMs on FP4 tensor cores
            self.flops_w = gpu.fp4_tflops * 1e12 * cal.achievable_matmul_fraction
        if self.wfmt.fp8_compute or self.wfmt.fp4_compute:  # low-bit tensor cores reach their own share
            self.flops_w *= cal.lowbit_compute_eff
        self.bw = gpu.hbm_bandwidth_gbps * 1e9 * cal.achievable_copy_fraction
        link = gpu.nvlink_gbps_per_direction or gpu.pcie_gbps_per_direction
        self.link_bw = link * 1e9 * cal.link_eff
        # split_kv: vLLM's decode attention kernels (FlashAttention/FlashInfer split-KV) spread one
        # long sequence over several thread blocks; calib.py's plain SDPA does not, so one
        # (sequence, head) block streams the whole context alone (the attn_cta_gbps floor).
        self.split_kv = split_kv
        self.table_tokens = table_tokens
        self._layers = model.num_hidden_layers
        sizes = cudagraph_capture_sizes if cudagraph_capture_sizes is not None else default_capture_sizes(
            max_num_seqs, max_num_batched_tokens, 0, None, None)
        self.capture = np.array(sorted(sizes), dtype=np.int64) if not enforce_eager else np.zeros(0, np.int64)
        self._attn_setup(kv_cache_dtype)
        # decode_time(M, sum_past, sampled): a decode-only step from three integers, for the simulator's
        # multi-step leaps; None where a step needs more than the sum of contexts (sliding windows,
        # kernels without split-KV).
        self.decode_time = (self._decode_step if split_kv and all(not w for layers, w in self.attn_kinds if layers)
                            else None)
        self._tables()
        # Two models with equal keys predict the same time for every batch.
        self.key = (model.id, gpu.id, tp, pp, self.wfmt, kv_cache_dtype, enforce_eager, tuple(self.capture.tolist()),
                    ep, dp, self.cal, split_kv, table_tokens)

    @property
    def host_overhead_s(self) -> float:
        """Host time per engine step outside the model: the simulator adds it before each step."""
        return self.cal.host_overhead_s

    @property
    def response_latency_s(self) -> float:
        """Time from the engine emitting a token to the client reading it (the simulator delays responses by it)."""
        return self.cal.response_latency_s

    @property
    def response_latency_per_request_s(self) -> float:
        """What a request's tokens add to response_latency_s per request in flight at its first token."""
        return self.cal.response_latency_per_request_s

    @property
    def front_end_s(self) -> float:
        """Front-end time per request before the scheduler sees it (the simulator's client waits it)."""
        return self.cal.front_end_s

    @property
    def front_end_token_s(self) -> float:
        """Front-end time per streamed token before the client reads it (the simulator's front-end queue)."""
        return self.cal.front_end_token_s

    @property
    def idle_wake_s(self) -> float:
        """An idle engine's wake-up before its next step (the simulator waits it)."""
        return self.cal.idle_wake_s

    # ---------------------------------------------------------------- construction
    def _attn_setup(self, kv_cache_dtype: str) -> None:
        m, sh = self.model, self.shapes
        kvb, _ = kv_dtype_bytes(kv_cache_dtype, m, self.wfmt.act_bytes)
        lk = m.layer_kinds
        # (layers, window or 0) per attention kind; linear-attention layers are costed as their state read
        self.attn_kinds = [(lk.full, 0)]
        if lk.sliding:
            self.attn_kinds.append((lk.sliding, m.sliding_window or 0))
        if lk.chunked:
            self.attn_kinds.append((lk.chunked, m.attention_chunk_size or 0))
        if m.mla is not None:
            lat = m.mla.kv_lora_rank + m.mla.qk_rope_head_dim
            self.kv_token_bytes = lat * kvb  # one latent, read by every TP rank
            self.dims_decode = (lat, m.mla.kv_lora_rank)  # absorbed MLA decode
            self.dims_prefill = (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim, m.mla.v_head_dim)
        else:
            self.kv_token_bytes = 2 * sh.kv_heads * m.head_dim * kvb
            self.dims_decode = self.dims_prefill = (m.head_dim, m.head_dim)
        # Linear-attention / Mamba layers: each request's recurrent state is read and written once per layer
        # and step, and every new token costs ~4 x heads x head_dim x state_size FLOPs (state update and
        # readout); their KV-free layers are costed here, not in attn_kinds.
        self.linear_layers = lk.linear if m.ssm is not None else 0
        if self.linear_layers:
            ssm = m.ssm
            self.state_bytes = 2.0 * mamba_state(m, self.tp, self.wfmt.act_bytes).bytes
            self.state_flops = 4.0 * (ssm.heads // self.tp) * ssm.head_dim * ssm.state_size
        # the attention roofline's denominators, formed once (the same floats as forming them per step)
        self._attn_flops_rate = self.flops16 * self.cal.attn_compute_eff
        self._kv_read_rate = self.bw * self.cal.kv_read_eff
        self._cta_rate = self.cal.attn_cta_gbps * 1e9

    def _gemm_time(self, g: Gemm, M: np.ndarray) -> np.ndarray:
        cal, act = self.cal, self.wfmt.act_bytes
        peak = self.flops_w if g.bits <= 8 else self.flops16  # flops_w is flops16 without fp8 compute
        tc = 2.0 * M * g.k * g.n / (peak * cal.gemm_compute_eff * self._shape_eff(g))
        tm = (g.weight_bytes + (M * g.k + M * g.n) * act) / (self.bw * self._memory_eff(g.bits))
        return np.where(M > 0, _knee(tc, tm, cal.knee_p), 0.0)

    def _shape_eff(self, g: Gemm) -> float:
        """The compute efficiency a GEMM keeps for its narrower side (gemm_shape_dim), 1 at 8,192."""
        d = self.cal.gemm_shape_dim
        if d <= 0:
            return 1.0
        side = min(g.k, g.n)
        return (side / (side + d)) / (_SHAPE_REFERENCE / (_SHAPE_REFERENCE + d))

    def _memory_eff(self, bits: float) -> float:
        """Weight-streaming efficiency of a GEMM whose weights have `bits` bits: below 8 bits the kernel
        dequantizes as it streams."""
        weight_only = bits < 7.5 and not self.wfmt.fp4_compute
        return self.cal.gemm_memory_eff * (self.cal.lowbit_memory_eff if weight_only else 1.0)

    def _allreduce_latency(self) -> float:
        """Fixed seconds of one all-reduce over this replica's TP group."""
        return self.cal.allreduce_latency_s + self.cal.allreduce_latency_per_peer_s * (self.tp - 1)

    def _layer_parts(self, M: np.ndarray) -> dict[str, np.ndarray]:
        """Per-step seconds of each part for token counts M (vector), all layers of the model: attention
        projections on the attention layers, the linear-attention/Mamba projections on the linear layers,
        dense MLPs and MoE blocks on the layers that have them (Nemotron-H's mixer-only layers have none)."""
        m, sh, cal, act = self.model, self.shapes, self.cal, self.wfmt.act_bytes
        L = m.num_hidden_layers
        kinds = stage_layer_kinds(m, [L], 0)
        dense_layers, moe_layers = stage_moe_layers(m, [L], 0)
        attn_layers = kinds["full"] + kinds["sliding"] + kinds["chunked"]
        # Gemma 4's full-attention layers project at their own head size and KV heads (GpuShapes.attn_of)
        full_own = kinds["full"] if sh.attn_full else 0
        attn_proj = sum(self._gemm_time(g, M) for g in sh.attn) * (attn_layers - full_own)
        if full_own:
            attn_proj = attn_proj + sum(self._gemm_time(g, M) for g in sh.attn_of("full")) * full_own
        if kinds["linear"] and sh.mixer:
            attn_proj = attn_proj + sum(self._gemm_time(g, M) for g in sh.mixer) * kinds["linear"]
        mlp = sum(self._gemm_time(g, M) for g in sh.dense_mlp) * dense_layers
        inter = sh.mlp_inter
        # hidden-size traffic in every layer, intermediate-size traffic only where a layer has a feed-forward block
        ffn_layers = dense_layers + moe_layers
        elem = M * act * (cal.elementwise_h * m.hidden_size * L + cal.elementwise_i * inter * ffn_layers) / (
            self.bw * cal.gemm_memory_eff)
        moe = self._moe_time(M) * moe_layers if moe_layers else np.zeros_like(M, dtype=float)
        ar = np.zeros_like(M, dtype=float)
        if self.tp > 1:
            nbytes = M * m.hidden_size * act
            # one all-reduce after each token mixer and each feed-forward block (2 per layer in most models;
            # Nemotron-H's layers hold one or the other)
            reduces = L - kinds["none"] + dense_layers + moe_layers
            ar = reduces * (self._allreduce_latency() + 2 * (self.tp - 1) / self.tp * nbytes / self.link_bw)
            ar = np.where(M > 0, ar, 0.0)
        if self.ep > 1 and moe_layers and self.moe_factor > 1:
            # all-to-all only across data-parallel ranks: with one, every rank holds every token and the TP
            # all-reduce above combines the experts' outputs (vLLM FusedMoEParallelConfig.use_all2all_kernels:
            # EP and dp_size > 1, v0.11.0 to v0.32.0)
            ar = ar + moe_layers * self._alltoall(M)
        if self.pp > 1:
            ar = ar + (self.pp - 1) * np.where(M > 0, cal.allreduce_latency_s + M * m.hidden_size * act / self.link_bw, 0.0)
        return {"linear": attn_proj + mlp, "elementwise": elem, "moe": moe, "allreduce": ar}

    def _alltoall(self, M: np.ndarray) -> np.ndarray:
        """Seconds of one MoE layer's expert-parallel exchange: tokens out to the experts' GPUs and back (two
        collectives), each token's hidden state to the (ep-1)/ep of its top-k experts held elsewhere."""
        moe, m = self.shapes.moe, self.model
        assert moe is not None
        nbytes = M * self.moe_factor * m.hidden_size * self.wfmt.act_bytes * moe.top_k * (self.ep - 1) / self.ep
        return np.where(M > 0, 2 * (self.cal.alltoall_latency_s + nbytes / self.link_bw), 0.0)

    def _moe_time(self, M: np.ndarray) -> np.ndarray:
        moe, cal = self.shapes.moe, self.cal
        assert moe is not None
        tokens = M * self.moe_factor
        touched = moe.local_experts * (1.0 - (1.0 - moe.top_k / moe.num_experts) ** tokens)
        assigned = tokens * moe.top_k * moe.local_experts / moe.num_experts  # token-expert pairs on this GPU
        peak = self.flops_w
        tc = 2.0 * assigned * moe.matrices * moe.hidden * moe.inter / (peak * cal.gemm_compute_eff * cal.moe_gemm_eff)
        tm = (touched * moe.expert_bytes
              + assigned * (2 * moe.hidden + moe.matrices * moe.inter) * self.wfmt.act_bytes) / (
            self.bw * self._memory_eff(self.wfmt.expert_bits) * cal.moe_gemm_eff)
        t = _knee(tc, tm, cal.knee_p) + self._gemm_time(moe.router, M) + cal.moe_layer_latency_s
        for g in moe.shared:
            t = t + self._gemm_time(g, M)
        return np.where(M > 0, t, 0.0)

    def _tables(self) -> None:
        M = np.arange(self.table_tokens + 1, dtype=np.float64)
        parts = self._layer_parts(M)
        self._part_tables = parts
        self._lin_table = sum(parts.values())
        self._head_table = self._gemm_time(self.shapes.lm_head, M)
        self._tables_by_key = {**parts, "linear_all": self._lin_table, "lm_head": self._head_table}
        if self.capture.size:
            idx = np.searchsorted(self.capture, np.arange(int(self.capture[-1]) + 1))
            self._pad = self.capture[np.minimum(idx, self.capture.size - 1)]
        else:
            self._pad = np.zeros(0, np.int64)

    # ---------------------------------------------------------------- per step
    def _padded(self, M: int) -> tuple[int, bool]:
        """(tokens the step runs as, whether a CUDA graph replays it): M padded up to its capture size."""
        if M < self._pad.size:
            return int(self._pad[M]), True
        return M, False

    def _entry(self, key: str, n: int) -> float:
        """Seconds of `key` (a part of _layer_parts, "linear_all" or "lm_head") for n tokens: a table
        look-up, computed on the fly beyond the table."""
        if n <= self.table_tokens:
            return float(self._tables_by_key[key][n])
        arr = np.array([float(n)])
        if key == "lm_head":
            return float(self._gemm_time(self.shapes.lm_head, arr)[0])
        parts = self._layer_parts(arr)
        return float(sum(v[0] for v in parts.values()) if key == "linear_all" else parts[key][0])

    def _attention_layer(self, flops: float, kv_bytes: float, seen_max: int) -> float:
        """One layer's attention seconds: soft roofline of its FLOPs against the bytes it reads; without
        split-KV one (sequence, KV head) block streams the longest context alone."""
        tm = kv_bytes / self._kv_read_rate
        if not self.split_kv:
            tm = max(tm, seen_max * self.kv_token_bytes / self.shapes.kv_heads / self._cta_rate)
        return _knee_scalar(flops / self._attn_flops_rate, tm, self.cal.knee_p)

    def _attention(self, new: np.ndarray, past: np.ndarray, M: int, max_new: int) -> float:
        """Attention seconds for all layers, from a few reductions over the requests (no Python loop).

        Per layer: FLOPs = 2 x heads x (d_qk + d_v) x sum_i new_i x (past_i + (new_i + 1) / 2)
        (causal inside the chunk); bytes = KV of every token each request attends to + its q/o rows.
        """
        sum_past = int(past.sum())
        if max_new <= 1:
            if self.decode_time is not None:
                return self._decode_attention(sum_past, M)
            np_dot, nn_dot = sum_past, M  # pure decode: new_i = 1, so the dot products reduce to sums
            dqk, dv = self.dims_decode
        else:
            np_dot, nn_dot = int(np.dot(new, past)), int(np.dot(new, new))
            dqk, dv = self.dims_prefill
        heads = self.shapes.q_heads
        flops_per_pair = 2.0 * heads * (dqk + dv)
        qo_bytes = M * heads * (dqk + dv) * self.wfmt.act_bytes
        total = 0.0
        for layers, window in self.attn_kinds:
            if not layers:
                continue
            if window:
                ctx = past + new
                seen_sum = int(np.minimum(ctx, window).sum())
                pairs = float(np.dot(new, np.minimum(past + (new + 1) * 0.5, window)))
                seen_max = min(int(ctx.max()), window)
            else:
                seen_sum = sum_past + M
                pairs = np_dot + 0.5 * (nn_dot + M)
                seen_max = int(past.max()) + max_new if not self.split_kv else 0
            total += layers * self._attention_layer(flops_per_pair * pairs, seen_sum * self.kv_token_bytes + qo_bytes,
                                                    seen_max)
        if self.linear_layers:
            total += self._recurrent(int(new.size), M)
        return total

    def _recurrent(self, requests: int, M: int) -> float:
        """Seconds of all linear-attention / Mamba layers' recurrences for a step."""
        return self.linear_layers * self._attention_layer(self.state_flops * M, self.state_bytes * requests, 0)

    def _decode_attention(self, sum_past: int, M: int) -> float:
        """_attention() for M decodes reading sum_past tokens in all, when that sum is all it needs
        (full attention, split-KV kernels): the same arithmetic, in the same order."""
        dqk, dv = self.dims_decode
        heads = self.shapes.q_heads
        qo_bytes = M * heads * (dqk + dv) * self.wfmt.act_bytes
        per_layer = self._attention_layer(2.0 * heads * (dqk + dv) * (sum_past + 0.5 * (M + M)),
                                          (sum_past + M) * self.kv_token_bytes + qo_bytes, 0)
        total = 0.0
        for layers, _ in self.attn_kinds:
            if layers:
                total += layers * per_layer
        if self.linear_layers:
            total += self._recurrent(M, M)
        return total

    def _step(self, M: int, attention: float, sampled: int, prefill: bool) -> float:
        """Seconds for a step of M tokens given its attention seconds: linear parts at the padded size,
        LM head on the sampled rows, then the graph gaps or the eager CPU launch floor."""
        graph = M < self._pad.size  # _padded(), inline: this runs once per simulated step
        Mp = int(self._pad[M]) if graph else M
        gpu = float(self._lin_table[Mp]) if Mp <= self.table_tokens else self._entry("linear_all", Mp)
        gpu += attention
        gpu += float(self._head_table[sampled]) if sampled <= self.table_tokens else self._entry("lm_head", sampled)
        total = gpu + self._layers * self.cal.graph_gap_s_per_layer if graph else self._eager_total(gpu, prefill)
        return total + sampled * self.cal.per_sampled_row_s

    def _eager_total(self, gpu: float, prefill: bool) -> float:
        """Seconds of an eager step: the CPU launches kernels ahead of the GPU, so the two overlap
        (a soft max of GPU time and CPU launch time)."""
        cal = self.cal
        cpu = self._layers * (cal.eager_cpu_s_per_layer_prefill if prefill else cal.eager_cpu_s_per_layer_decode)
        p = cal.overlap_p
        return (gpu ** p + cpu ** p) ** (1.0 / p)

    def _decode_step(self, M: int, sum_past: int, sampled: int) -> float:
        """Seconds for a step of M one-token decodes whose contexts sum to sum_past tokens (see
        decode_time); __call__ gives the same float for any such batch."""
        return self._step(M, self._decode_attention(sum_past, M), sampled, False)

    def breakdown(self, batch: StepBatch) -> dict[str, float]:
        """Seconds per part: linear, elementwise, attention, lm_head, moe, allreduce, overhead, sampling, total."""
        new, past = np.asarray(batch.new_tokens), np.asarray(batch.past_tokens)
        M = int(new.sum())
        if M == 0:
            return {"linear": 0.0, "elementwise": 0.0, "attention": 0.0, "lm_head": 0.0, "moe": 0.0,
                    "allreduce": 0.0, "overhead": 0.0, "sampling": 0.0, "total": 0.0}
        max_new = int(new.max())
        Mp, graph = self._padded(M)
        out = {k: self._entry(k, Mp) for k in self._part_tables}
        out["attention"] = self._attention(new, past, M, max_new)
        out["lm_head"] = self._entry("lm_head", int(batch.sampled))
        gpu = sum(out.values())
        over = self._layers * self.cal.graph_gap_s_per_layer if graph else self._eager_total(gpu, max_new > 1) - gpu
        out["overhead"] = over
        out["sampling"] = int(batch.sampled) * self.cal.per_sampled_row_s
        out["total"] = gpu + over + out["sampling"]
        out["padded_tokens"] = float(Mp)
        return out

    def __call__(self, batch: StepBatch) -> float:
        new = batch.new_tokens
        M = int(new.sum())
        if M == 0:
            return 0.0
        max_new = int(new.max())
        return self._step(M, self._attention(new, batch.past_tokens, M, max_new), int(batch.sampled), max_new > 1)
