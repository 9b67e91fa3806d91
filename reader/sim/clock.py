"""The engine clock around one step: the same for a step run alone and for a step inside a leap."""
from __future__ import annotations


def step_clock(t: float, prev_end: float | None, gpu: float, overhead_s: float, async_mode: bool):
    """(start, end, next t, step in flight's end) of a step scheduled at t that takes gpu seconds.
    Async scheduling: the next schedule() runs while this step is on the GPU, so the clock moves to
    the step's start and the step starts once the previous one ends; sync: the clock moves to its end."""
    start = t + overhead_s
    if async_mode:
        if prev_end is not None and prev_end > start:
            start = prev_end
        return start, start + gpu, start, start + gpu
    return start, start + gpu, start + gpu, prev_end
