"""A Prometheus histogram's change over a window, and what it says: exact mean, percentiles interpolated
within buckets the way Prometheus's histogram_quantile() does (linearly; the +Inf bucket answers with the
last finite bound), and values spread over the buckets for a simulation to draw from."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..sim.result import LatencyStats


@dataclass(frozen=True)
class Histogram:
    bounds: tuple[float, ...]     # upper bounds, ascending, +Inf last
    counts: tuple[float, ...]     # cumulative counts per bound
    total: float                  # _sum
    count: float                  # _count

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count > 0 else None

    def quantile(self, q: float) -> float | None:
        if self.count <= 0 or not self.bounds:
            return None
        rank = q * self.counts[-1]
        lower_bound, lower_count = 0.0, 0.0
        for bound, cum in zip(self.bounds, self.counts):
            if cum >= rank and cum > lower_count:
                if math.isinf(bound):
                    return lower_bound
                return lower_bound + (bound - lower_bound) * (rank - lower_count) / (cum - lower_count)
            lower_bound, lower_count = bound, cum
        return lower_bound

    def bucket_of(self, q: float) -> tuple[float, float] | None:
        """The bucket (lower, upper bound) the q-quantile lies in: all the buckets can say of it. In the +Inf
        bucket the upper bound is infinite."""
        if self.count <= 0 or not self.bounds:
            return None
        return self.bucket_of_rank(q * self.counts[-1])

    def bucket_of_rank(self, rank: float) -> tuple[float, float]:
        """The bucket the rank-th smallest observation lies in."""
        lower = 0.0
        for bound, cum in zip(self.bounds, self.counts):
            if cum >= rank and cum > 0:
                return lower, bound
            lower = bound
        return lower, math.inf

    def lowest_bound_above_all(self) -> float | None:
        """The lower bound of the highest bucket that holds an observation: the largest one exceeded it."""
        if self.count <= 0:
            return None
        lower = 0.0
        for bound, cum in zip(self.bounds, self.counts):
            if cum >= self.counts[-1]:
                return lower
            lower = bound
        return lower

    def bound_at_or_above(self, value: float) -> float | None:
        """The smallest finite bucket bound at or above `value`."""
        return next((b for b in self.bounds if b >= value and not math.isinf(b)), None)

    def count_above(self, bound: float) -> float:
        """How many observations exceeded a bucket bound."""
        below = next((c for b, c in zip(self.bounds, self.counts) if b == bound), None)
        return 0.0 if below is None or self.count <= 0 else max(0.0, self.counts[-1] - below)

    def share_above(self, value: float) -> float | None:
        """Share of observations above the largest bound at or below `value` (what the buckets can tell)."""
        if self.count <= 0:
            return None
        below = max((cum for bound, cum in zip(self.bounds, self.counts) if bound <= value), default=0.0)
        return max(0.0, 1.0 - below / self.counts[-1])

    def stats(self, scale: float = 1.0) -> LatencyStats:
        """count, exact mean and interpolated median/P90/P99 (times `scale`, e.g. 1000 for seconds -> ms)."""
        if self.count <= 0:
            return LatencyStats()
        q = {p: self.quantile(p) for p in (0.5, 0.9, 0.99)}
        return LatencyStats(count=int(round(self.count)), mean=self.mean * scale,
                            median=q[0.5] * scale if q[0.5] is not None else None,
                            p90=q[0.9] * scale if q[0.9] is not None else None,
                            p99=q[0.99] * scale if q[0.99] is not None else None)

    def spread(self, n: int, lowest: float = 1.0) -> np.ndarray:
        """n values distributed over the buckets as the counts say, their mean the histogram's exact mean.

        Inside each bucket the values are evenly spaced, except in the highest bucket that holds any: its top is
        only a bound, so its values spread evenly from its bottom up to where their mean is what the exact
        sum leaves for them (a lighter tail than the bucket's width allows). When that cannot reach the mean,
        every value is bent within its bucket until it does."""
        if n <= 0 or self.count <= 0:
            return np.empty(0)
        edges = _edges(self.bounds, lowest)
        per_bucket = np.diff(np.concatenate(([0.0], np.asarray(self.counts, dtype=float))))
        raw = per_bucket / per_bucket.sum() * n
        take = np.floor(raw).astype(int)
        for i in np.argsort(-(raw - take))[: n - int(take.sum())]:
            take[i] += 1
        top = max(i for i, k in enumerate(take) if k)
        lo = np.concatenate([np.full(k, edges[i][0]) for i, k in enumerate(take) if k])
        hi = np.concatenate([np.full(k, edges[i][1]) for i, k in enumerate(take) if k])
        pos = np.concatenate([(np.arange(k) + 0.5) / k for k in take if k])
        values = lo + (hi - lo) * pos
        target = self.mean
        if target is None:
            return values
        k_top = int(take[top])
        below = values[:-k_top].sum()
        top_lo, top_hi = edges[top]
        top_mean = (target * n - below) / k_top
        if top_lo <= top_mean <= (top_lo + top_hi) / 2:
            values[-k_top:] = top_lo + 2 * (top_mean - top_lo) * pos[-k_top:]
            return values
        return lo + (hi - lo) * _bend(pos, lo, hi, target)


def _edges(bounds: tuple[float, ...], lowest: float) -> list[tuple[float, float]]:
    out = []
    prev = min(lowest, bounds[0]) if bounds else lowest
    finite = [b for b in bounds if not math.isinf(b)]
    top = (finite[-1] * 2) if finite else lowest
    for b in bounds:
        hi = top if math.isinf(b) else b
        out.append((prev, hi))
        prev = hi
    return out


def _bend(pos: np.ndarray, lo: np.ndarray, hi: np.ndarray, target: float | None) -> np.ndarray:
    """Positions inside the buckets raised to a power so that the values' mean meets `target` (when it can)."""
    if target is None:
        return pos

    def mean_at(g: float) -> float:
        return float((lo + (hi - lo) * pos ** g).mean())

    low_g, high_g = 1e-3, 1e3     # pos**g: near 1 (tops of buckets) .. near 0 (bottoms)
    if not mean_at(high_g) <= target <= mean_at(low_g):
        return pos ** (low_g if target > mean_at(low_g) else high_g)
    a, b = math.log(low_g), math.log(high_g)
    for _ in range(60):
        mid = (a + b) / 2
        if mean_at(math.exp(mid)) > target:
            a = mid
        else:
            b = mid
    return pos ** math.exp((a + b) / 2)
