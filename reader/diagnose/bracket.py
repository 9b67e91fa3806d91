"""The highest load a replica serves within its SLOs, narrowed inside a bracket: the one search that the load curve
(loadcurve.py) and the plan's per-replica capacity (plan/search.py) share. Each caller runs its own trials and
says which loads fit; this module picks the loads to try next and reads the answer off the loads tried.
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional

BISECT_ROUNDS = 1  # places two loads inside the bracket, cutting it to a third
Fits = Mapping[float, bool]  # load -> whether it fits (meets the SLOs, keeps up)


def split(fits: Fits) -> tuple[Optional[float], Optional[float]]:
    """The highest load that fits below the first that misses, and that first miss (None: no such load)."""
    ok = None
    for load in sorted(fits):
        if not fits[load]:
            return ok, load
        ok = load
    return ok, None


def thirds(low: float, high: float, integral: bool) -> list[float]:
    """Two loads cutting (low, high) into thirds; whole loads (clients) are rounded and kept strictly inside."""
    inner = [low + (high - low) * k / 3 for k in (1, 2)]
    if integral:
        inner = sorted({float(round(x)) for x in inner if low < round(x) < high})
    return inner


def narrow(fits: Fits, run: Callable[[list[float]], Fits], rounds: int, integral: bool,
           floor: Optional[float] = None) -> tuple[Optional[float], Optional[float]]:
    """split() after `rounds` rounds of thirds() inside the bracket. run(loads) simulates the loads and returns
    every load tried so far. floor: a load known to fit, the bracket's bottom when no load tried fits (without
    one, such a bracket is left as it is)."""
    ok, miss = split(fits)
    for _ in range(rounds):
        low = ok if ok is not None else floor
        if low is None or miss is None:
            break
        inner = thirds(low, miss, integral)
        if not inner:
            break
        ok, miss = split(run(inner))
    return ok, miss
