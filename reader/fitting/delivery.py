"""How the benchmark client received what the engine produced, and what that does to a replay.

A replay assumes the client sees each token when the engine's step ends. Two signs in a
`--save-detailed` result say it did not:
- a stream delivered in one read (bench.py leaves those requests' latencies out of the fit);
- in a closed loop (`--max-concurrency`), requests sent together that finish together although their
  output lengths differ by far more than a step's worth: the client saw their completions in a bunch, so
  it re-sent in waves. The replay re-sends as each simulated request finishes, which keeps the engine
  busier and its queue shorter than the waves did, so TTFT under load comes out low for that file.
Both come from a front end (API server) or a benchmark client short of CPU: on a CPU host where vLLM's
worker holds one core and the engine core, the API server and the client share the rest, both show in
the shipped recordings (fixtures/calibration/cpu-tiny-llama).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

BURST_FRACTION = 0.05  # first-to-last token within this share of the latency: delivered in one read
WAVE_GAP_S = 0.005  # requests sent within this of the wave's first left the client together
MIN_WAVE = 3
MIN_SPAN_TOKENS = 8  # outputs closer than this finish close together anyway
BUNCHED_SHARE = 0.1  # finishing within this share of the spread their lengths imply: delivered in a bunch


def bunched_waves(data: dict[str, Any]) -> tuple[int, int]:
    """(waves that finished in a bunch, waves whose output lengths should have spread their finishes), over
    the groups of requests a closed-loop client sent together; (0, 0) without per-request details."""
    try:
        start = np.asarray(data["start_times"], dtype=float)
        end = start + np.asarray(data["latencies"], dtype=float)
        out = np.asarray(data["output_lens"], dtype=float)
        tpot_s = float(data["median_tpot_ms"]) / 1000.0
        assert start.size == end.size == out.size and start.size > 0
    except (KeyError, TypeError, ValueError, AssertionError):
        return 0, 0
    if not data.get("max_concurrency") or not np.isfinite(end).all() or not tpot_s > 0:
        return 0, 0
    bunched = eligible = 0
    for wave in _waves(start):
        span = out[wave].max() - out[wave].min()
        if len(wave) < MIN_WAVE or span < MIN_SPAN_TOKENS:
            continue
        eligible += 1
        bunched += bool(end[wave].max() - end[wave].min() < BUNCHED_SHARE * span * tpot_s)
    return bunched, eligible


def _waves(start: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(start, kind="stable")
    cuts = [0] + [i for i in range(1, order.size) if start[order[i]] - start[order[i - 1]] > WAVE_GAP_S]
    return [order[a:b] for a, b in zip(cuts, cuts[1:] + [order.size])]


def delivery_warnings(results: Sequence[Any]) -> list[str]:
    """At most three sentences: how many streams reached the client in one read, which files' closed loops
    finished in bunches, and what to do about both."""
    out = []
    burst = [r for r in results if r.burst_requests]
    if burst:
        requests = sum(r.burst_requests for r in burst)
        total = sum(r.completed for r in results)
        out.append(f"{requests} of {total} requests, in {len(burst)} of {len(results)} files, reached the client "
                   f"in one read (first to last token within {BURST_FRACTION:.0%} of their latency): their "
                   "latencies are left out of the fit.")
    bunched = [r for r in results if r.bunched_waves and 2 * r.bunched_waves >= r.closed_waves]
    if bunched:
        name_of = dict(zip((r.path for r in results), _short_names([r.path for r in results])))
        listed = ", ".join(f"{name_of[r.path]} ({r.bunched_waves} of {r.closed_waves})" for r in bunched)
        these, their = ("this closed-loop file", "its") if len(bunched) == 1 else ("these closed-loop files", "their")
        out.append(f"In {these}, requests sent together all finished together although their output lengths "
                   f"differ (waves so finished, of those that could show it): {listed}. The client saw "
                   "completions in bunches and re-sent in waves, which the replay does not reproduce, so "
                   f"{their} TTFT is likely predicted low.")
    if out:
        out.append(("Both mean" if len(out) == 2 else "This means") + " the API server or the benchmark client "
                   "was short of CPU while the engine ran: give them cores of their own, or expect latencies the "
                   "engine's steps do not explain.")
    return out


def _short_names(paths: Sequence[str]) -> list[str]:
    """The paths less the folders they all share (round-1/c8-mixed.json among the rounds, not the whole path)."""
    parts = [p.replace("\\", "/").split("/") for p in paths]
    common = 0
    while all(len(x) > common + 1 for x in parts) and len({x[common] for x in parts}) == 1:
        common += 1
    return ["/".join(x[common:]) for x in parts]
