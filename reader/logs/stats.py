"""What the periodic stats lines saw while the server ran: queue, KV-cache usage, throughput."""
from __future__ import annotations

from typing import Optional

from pydantic import BaseModel

from .reading import StatsSample

HIGH_KV_PCT = 90.0


class StatsSummary(BaseModel):
    samples: int
    span_s: Optional[float] = None  # from the first to the last stats line
    running_max: int
    running_mean: float
    waiting_max: int
    waiting_mean: float
    kv_usage_max_pct: float
    kv_usage_mean_pct: float
    high_kv_share: float  # share of stats lines at or above HIGH_KV_PCT
    waiting_share: float  # share of stats lines with requests waiting
    prompt_tps_mean: float
    generation_tps_mean: float
    generation_tps_max: float
    prefix_hit_last_pct: Optional[float] = None
    swapped_max: Optional[int] = None  # V0


def summarize(stats: list[StatsSample]) -> Optional[StatsSummary]:
    """None when the log has no stats line. Means are over stats lines (each covers one logging interval)."""
    if not stats:
        return None
    n = len(stats)
    seconds = [s.seconds for s in stats if s.seconds is not None]
    hits = [s.prefix_hit_pct for s in stats if s.prefix_hit_pct is not None]
    swapped = [s.swapped for s in stats if s.swapped is not None]
    return StatsSummary(
        samples=n, span_s=(max(seconds) - min(seconds)) if len(seconds) > 1 else None,
        running_max=max(s.running for s in stats), running_mean=sum(s.running for s in stats) / n,
        waiting_max=max(s.waiting for s in stats), waiting_mean=sum(s.waiting for s in stats) / n,
        kv_usage_max_pct=max(s.kv_usage_pct for s in stats), kv_usage_mean_pct=sum(s.kv_usage_pct for s in stats) / n,
        high_kv_share=sum(s.kv_usage_pct >= HIGH_KV_PCT for s in stats) / n,
        waiting_share=sum(s.waiting > 0 for s in stats) / n,
        prompt_tps_mean=sum(s.prompt_tps for s in stats) / n,
        generation_tps_mean=sum(s.generation_tps for s in stats) / n,
        generation_tps_max=max(s.generation_tps for s in stats),
        prefix_hit_last_pct=hits[-1] if hits else None, swapped_max=max(swapped) if swapped else None)
