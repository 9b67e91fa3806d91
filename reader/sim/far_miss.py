"""Ending a run early once its answer is known: a latency P99 certainly far above a limit.

A search (the plan) asks of most trials only whether they meet the SLOs, and the trials that miss by far are
the slowest to simulate (their queues grow). A P99 over N samples, interpolated as numpy does, lies between
the sorted samples at floor(0.99 (N - 1)) and the one after it, so once more samples are above a limit than
the top N - floor(0.99 (N - 1)), the P99 is above it whatever the rest turn out to be. N is not known before
the run ends, but that count only grows with N, so the most samples there can be (every request for TTFT,
every output token after the first for ITL) gives a count that is always enough.

Only samples already taken count: a TTFT once the request's first token is out (a later response delay only
adds to it), an ITL once its chunk has arrived. The run counts TTFTs above the limit as first tokens come out
(EngineRun.ttft_over), so a look costs the same however many requests the run has.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

STOPPABLE = ("ttft", "itl")


def samples_needed(most: int) -> int:
    """Samples above a limit that put a P99 over `most` or fewer samples above it."""
    return most - math.floor(0.99 * (most - 1)) if most >= 1 else 1 << 62


class FarMiss:
    """Watches a run for a P99 (TTFT or ITL) certainly above its limit, in seconds."""

    def __init__(self, limits_ms: dict[str, float], num_requests: int, output_len: np.ndarray) -> None:
        self.limits_s = {k: v / 1000.0 for k, v in limits_ms.items() if k in STOPPABLE}
        self.needed = {"ttft": samples_needed(num_requests),
                       "itl": samples_needed(int(np.maximum(output_len.astype(np.int64) - 1, 0).sum()))}
        self._itl_read = 0  # chunks of the run's ITL record already counted
        self._itl_over = 0

    def watch(self, run: Any) -> None:
        """Has `run` count its TTFTs above the limit (before its first token)."""
        if "ttft" in self.limits_s:
            run.ttft_limit_s = self.limits_s["ttft"]

    def reason(self, run: Any) -> Optional[str]:
        """Why the run can stop (the P99 is certainly above its limit), or None."""
        if "ttft" in self.limits_s and run.ttft_over >= self.needed["ttft"]:
            return self._words("TTFT", run.ttft_over, self.needed["ttft"])
        if "itl" in self.limits_s:
            chunks = run.itl_chunks
            for gaps in chunks[self._itl_read:]:
                self._itl_over += int(np.count_nonzero(gaps > self.limits_s["itl"]))
            self._itl_read = len(chunks)
            if self._itl_over >= self.needed["itl"]:
                return self._words("ITL", self._itl_over, self.needed["itl"])
        return None

    def _words(self, metric: str, over: int, needed: int) -> str:
        limit = self.limits_s[metric.lower()] * 1000.0
        return (f"stopped early: {metric} P99 is certainly above {limit:,.0f} ms ({over:,} samples above it "
                f"already; {needed:,} put the P99 of the whole run above it)")
