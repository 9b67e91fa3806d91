"""The one search every calibration fit uses: Nelder-Mead over bounded coefficients (numpy only).

Each free coefficient has bounds; the search runs in an unbounded space mapped onto them by a
logistic (in log space for coefficients that span decades), so every value it tries is physical
(efficiencies in (0, 1], overheads >= 0, rates > 0).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class Free:
    """One free coefficient: its bounds, where the search starts, and whether it spans decades."""

    name: str
    low: float
    high: float
    start: float
    log: bool = False

    def __post_init__(self) -> None:
        assert self.low < self.high and self.low <= self.start <= self.high, self
        assert not self.log or self.low > 0, self

    def _ends(self) -> tuple[float, float, float]:
        if self.log:
            return math.log(self.low), math.log(self.high), math.log(self.start)
        return self.low, self.high, self.start

    def to_value(self, z: float) -> float:
        lo, hi, _ = self._ends()
        x = lo + (hi - lo) / (1.0 + math.exp(-max(min(z, 700.0), -700.0)))
        return math.exp(x) if self.log else x

    def to_search(self) -> float:
        lo, hi, x = self._ends()
        x = min(max(x, lo + 1e-9 * (hi - lo)), hi - 1e-9 * (hi - lo))
        return math.log((x - lo) / (hi - x))

    def at_bound(self, value: float) -> bool:
        lo, hi, _ = self._ends()
        x = math.log(value) if self.log else value
        return min(x - lo, hi - x) < 1e-3 * (hi - lo)


@dataclass(frozen=True)
class SearchResult:
    values: dict[str, float]
    loss: float
    iterations: int
    converged: bool


def minimize(loss: Callable[[dict[str, float]], float], free: Sequence[Free], max_iterations: int = 4000,
             tolerance: float = 1e-10) -> SearchResult:
    """The coefficients (within their bounds) that minimise loss; converged when the simplex's
    best and worst losses differ by less than `tolerance`."""

    def values(z: np.ndarray) -> dict[str, float]:
        return {f.name: f.to_value(float(v)) for f, v in zip(free, z)}

    def f(z: np.ndarray) -> float:
        out = loss(values(z))
        return out if math.isfinite(out) else math.inf

    z0 = np.array([p.to_search() for p in free])
    best, fbest, iterations, converged = _nelder_mead(f, z0, max_iterations, tolerance)
    return SearchResult(values(best), fbest, iterations, converged)


def _nelder_mead(f, x0: np.ndarray, iters: int, tolerance: float) -> tuple[np.ndarray, float, int, bool]:
    n = x0.size
    simplex = [x0] + [x0 + np.eye(n)[i] * 0.5 for i in range(n)]
    vals = [f(x) for x in simplex]
    for iteration in range(iters):
        order = np.argsort(vals)
        simplex = [simplex[i] for i in order]
        vals = [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < tolerance:
            return simplex[0], vals[0], iteration, True
        c = np.mean(simplex[:-1], axis=0)
        xr = c + (c - simplex[-1])
        fr = f(xr)
        if fr < vals[0]:
            xe = c + 2 * (c - simplex[-1])
            fe = f(xe)
            simplex[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = xr, fr
        else:
            xc = c + 0.5 * (simplex[-1] - c)
            fc = f(xc)
            if fc < vals[-1]:
                simplex[-1], vals[-1] = xc, fc
            else:
                simplex = [simplex[0]] + [simplex[0] + 0.5 * (s - simplex[0]) for s in simplex[1:]]
                vals = [vals[0]] + [f(s) for s in simplex[1:]]
    i = int(np.argmin(vals))
    return simplex[i], vals[i], iters, False
