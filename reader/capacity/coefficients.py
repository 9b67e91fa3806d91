"""The step-time model's coefficients: one named number each, with what it means.

The roofline in reader/capacity/steptime.py reads only these; a calibration profile stores them
(with where each value came from), and `vllm-reader calibrate` fits some of them. Efficiencies are
fractions of the device's achievable peaks (datasheet x achievable_*_fraction).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

MEANING = {
    "gemm_compute_eff": "fraction of the achievable matmul peak large GEMMs reach",
    "gemm_memory_eff": "fraction of the achievable memory bandwidth when streaming weights",
    "gemm_shape_dim": "how a GEMM's compute efficiency falls with its narrower side d: as d / (d + this), relative to "
                      "a GEMM whose narrower side is 8,192 (tensor parallelism narrows every GEMM: fewer tiles per "
                      "wave, shorter K loops); 0 = no fall",
    "knee_p": "soft roofline exponent joining compute and memory time (large = pure max)",
    "kv_read_eff": "fraction of the achievable memory bandwidth attention reaches reading past KV",
    "attn_compute_eff": "fraction of the achievable matmul peak attention FLOPs reach (prefill over past context)",
    "graph_gap_s_per_layer": "device idle time per layer inside a CUDA graph, seconds",
    "eager_cpu_s_per_layer_decode": "host launch time per layer of an eager decode-only step, seconds",
    "eager_cpu_s_per_layer_prefill": "host launch time per layer of an eager step with a prefill, seconds",
    "elementwise_h": "hidden-size tensors read and written per token per layer by element-wise ops",
    "elementwise_i": "intermediate-size tensors read and written per token per layer",
    "achievable_matmul_fraction": "measured matmul peak over the datasheet figure",
    "achievable_copy_fraction": "measured copy bandwidth over the datasheet figure",
    "allreduce_latency_s": "fixed time of one tensor-parallel all-reduce, seconds",
    "link_eff": "all-reduce bandwidth over a ring's on the per-direction interconnect rate (above 1: NVLS, the "
                "switch reduces)",
    "allreduce_latency_per_peer_s": "fixed time one tensor-parallel all-reduce adds per GPU beyond the first "
                                    "(the collective's synchronisation grows with the ranks), seconds",
    "alltoall_latency_s": "fixed time of one expert-parallel token exchange (dispatch or combine, two per MoE layer), "
                          "seconds",
    "moe_layer_latency_s": "fixed time of one mixture-of-experts layer per step beyond its GEMMs' roofline (routing "
                           "top-k, token permutation, the grouped GEMMs' launches and tails), seconds",
    "moe_gemm_eff": "fraction of the dense GEMM efficiencies the routed experts' grouped GEMMs reach",
    "response_latency_s": "time from the engine emitting a token to the client reading it (detokenization, the API "
                          "server's output path, the stream): shifts every latency the client measures, seconds",
    "response_latency_per_request_s": "time a request's tokens reach the client later for each request in flight when "
                                      "its first token is emitted (the API server and the client stream every running "
                                      "request's tokens; a first token waits behind them): grows TTFT with the "
                                      "concurrency, not TPOT, seconds",
    "lowbit_memory_eff": "fraction of the weight-streaming efficiency kept by weight-only formats below 8 bits "
                         "(kernels that dequantize as they stream: Marlin int4, AWQ, GPTQ, MXFP4 on W4A16 paths)",
    "lowbit_compute_eff": "fraction of the 16-bit GEMM compute efficiency that fp8 (W8A8) and fp4 (W4A4) GEMMs reach on "
                          "their own tensor cores' peak (their kernels, scales and tile shapes differ)",
    "overlap_p": "soft-max exponent joining device time and eager launch time (1 = they add, as on a CPU)",
    "attn_cta_gbps": "KV streaming rate of one (sequence, KV head) attention block without split-KV, GB/s",
    "host_overhead_s": "host time per engine step outside the model (scheduling, input preparation), seconds",
    "per_sampled_row_s": "time per sampled row per step (sampler, output processing), seconds",
    "front_end_s": "front-end time per request before the scheduler sees it (HTTP, tokenization), one request "
                   "at a time, seconds",
    "front_end_token_s": "front-end time per streamed token before the client reads it (detokenization, one "
                         "server-sent event), in the same queue as front_end_s, seconds",
    "idle_wake_s": "time an engine left idle for 10 ms or more takes to start its next step once a request "
                   "arrives (its busy loop asleep on its input queue), seconds",
}


@dataclass(frozen=True)
class StepTimeCoefficients:
    gemm_compute_eff: float
    gemm_memory_eff: float
    knee_p: float
    kv_read_eff: float
    attn_compute_eff: float
    graph_gap_s_per_layer: float
    eager_cpu_s_per_layer_decode: float
    eager_cpu_s_per_layer_prefill: float
    elementwise_h: float
    elementwise_i: float
    achievable_matmul_fraction: float
    achievable_copy_fraction: float
    allreduce_latency_s: float
    link_eff: float
    overlap_p: float
    attn_cta_gbps: float
    host_overhead_s: float
    per_sampled_row_s: float
    front_end_s: float
    # Terms a single-GPU step fit cannot see; their neutral values leave a profile fitted without them unchanged.
    allreduce_latency_per_peer_s: float = 0.0
    moe_gemm_eff: float = 1.0
    lowbit_memory_eff: float = 1.0
    response_latency_s: float = 0.0
    alltoall_latency_s: float = 0.0
    moe_layer_latency_s: float = 0.0
    front_end_token_s: float = 0.0
    idle_wake_s: float = 0.0
    lowbit_compute_eff: float = 1.0
    response_latency_per_request_s: float = 0.0
    gemm_shape_dim: float = 0.0

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def optional(cls) -> dict[str, float]:
        """The coefficients with a neutral default (older profiles may lack them)."""
        from dataclasses import MISSING
        return {f.name: f.default for f in fields(cls) if f.default is not MISSING}

    @staticmethod
    def divides(name: str) -> bool:
        """Whether the step time divides by this coefficient (an efficiency, a fraction of a peak, a rate or a
        soft-max exponent): zero or less has no meaning there; every other term is a count or a time, at least 0."""
        return name.endswith(("_eff", "_fraction", "_p", "_gbps"))

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.names()}

    def replace(self, **changes: float) -> "StepTimeCoefficients":
        return StepTimeCoefficients(**{**self.as_dict(), **changes})
