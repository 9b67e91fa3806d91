"""The numbers a what-if, a sweep point or a mode is compared on (ms; per second of simulated time)."""
from __future__ import annotations

from typing import Optional

from pydantic import BaseModel

from ..sim.api import SimResult


class Metrics(BaseModel):
    output_throughput: float
    total_token_throughput: float
    request_throughput: float
    ttft_mean_ms: Optional[float]
    ttft_p99_ms: Optional[float]
    itl_median_ms: Optional[float]
    itl_p99_ms: Optional[float]
    tpot_mean_ms: Optional[float]
    e2el_p99_ms: Optional[float]
    preemptions: int
    completed: int
    goodput_rps: Optional[float] = None
    kv_cache_tokens: Optional[int] = None
    offered_rps: Optional[float] = None  # open-loop arrivals per second as drawn, not as asked for

    @classmethod
    def of(cls, result: SimResult, kv_tokens: Optional[int] = None) -> "Metrics":
        return cls(output_throughput=result.output_throughput, total_token_throughput=result.total_token_throughput,
                   request_throughput=result.request_throughput, ttft_mean_ms=result.ttft_ms.mean,
                   ttft_p99_ms=result.ttft_ms.p99, itl_median_ms=result.itl_ms.median, itl_p99_ms=result.itl_ms.p99,
                   tpot_mean_ms=result.tpot_ms.mean, e2el_p99_ms=result.e2el_ms.p99, preemptions=result.preemptions,
                   completed=result.completed,
                   goodput_rps=result.goodput.request_goodput if result.goodput is not None else None,
                   kv_cache_tokens=kv_tokens, offered_rps=result.offered_rate)
