"""What a client's own timings (`vllm bench serve`, a user's stopwatch) can be, given the server's histograms.

vLLM times its latency histograms inside the server, on a shorter path than a client's (vLLM 0.32.0, the same in
0.18.0):
- `vllm:time_to_first_token_seconds` and `vllm:e2e_request_latency_seconds` run from the request's arrival stamp,
  `time.time()` when the front end renders the prompt (vllm/renderers/base.py, render_cmpl), to the moment the
  front end's output loop takes the token's batch from the engine core (`IterationStats()` in
  vllm/v1/engine/async_llm.py output_handler; `IterationStats.update_from_output` and `_time_since` in
  vllm/v1/metrics/stats.py);
- `vllm:inter_token_latency_seconds` and `vllm:request_time_per_output_token_seconds` are differences of the engine
  core's own timestamps of consecutive output batches (`update_from_output`, `update_from_finished_request`).
`vllm bench serve` starts its clock before it sends the request and stops it when it reads the first streamed
chunk (vllm/benchmarks/lib/endpoint_request_func.py, `st = time.perf_counter()` ... `output.ttft = timestamp -
st`). So a client's TTFT and end-to-end latency add connecting, parsing, the wait before rendering and the
stream's sending, which no series times: each request's is at least the server's, so each percentile is at least
the server's, and the scrapes bound it from no other side (on the recorded saturated burst, two CPUs shared: the
bench's TTFT median 2.70 s against the server's 1.0-2.5 s bucket). The stream can bunch chunks or hold them back,
so a client's ITL and TPOT percentiles can lie on either side of the server's: unknown here.
"""
from __future__ import annotations

import math
from typing import Optional

from ..evidence.model import Figure
from .histogram import Histogram

CLIENT_BOUND = "a client times more than the server does, and no series bounds how much more"
SERVER_SIDE = ("TTFT, ITL and end-to-end latency above are server-side: vLLM times them from the request's arrival "
               "in its front end to the moment the token's batch reaches it (inter-token times: the engine core's "
               "own timestamps), not what a client such as vllm bench serve measures, which adds connecting, "
               "parsing and the stream's sending. A client's TTFT and end-to-end percentiles are at least the "
               "server's buckets' lower bounds (the rows 'as a client sees it'); its ITL and TPOT percentiles are "
               "unknown here, since the stream can bunch chunks or hold them back")

# (figure key, histogram, label, percentile): the figures whose client-side value the server bounds from below
CLIENT_FIGURES = (("client.ttft_median", "ttft", "TTFT median", 0.5), ("client.ttft_p99", "ttft", "TTFT P99", 0.99),
                  ("client.e2el_p99", "e2el", "end-to-end latency P99", 0.99))


def client_figures(histograms: dict[str, Optional[Histogram]]) -> list[Figure]:
    """A client's percentile as a lower bound: the bucket's lower bound of the server's observation at the rank
    a client's percentile (interpolated between neighbours, as numpy's is) cannot fall below."""
    out = []
    for key, histogram, label, q in CLIENT_FIGURES:
        h = histograms.get(histogram)
        if h is None or h.count <= 0:
            continue
        n = h.count
        low, _ = h.bucket_of_rank(math.floor(q * (n - 1)) + 1)
        if low <= 0:
            continue   # the first bucket: "at least 0" says nothing
        out.append(Figure(key=key, label=f"{label}, as a client sees it", value=1000.0 * low,
                          unit="ms", group="latency", low=1000.0 * low, high=math.inf, bound=CLIENT_BOUND))
    return out
