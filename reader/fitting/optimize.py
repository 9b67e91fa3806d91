"""The one search every calibration fit uses: Nelder-Mead over bounded coefficients (numpy only).

Each free coefficient has bounds; the search runs in an unbounded space mapped onto them by a
logistic (in log space for coefficients that span decades), so every value it tries is physical
(efficiencies in (0, 1], overheads >= 0, rates > 0).
"""
from __future__ import annotations

import dataclasses
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

    def starting_at(self, value: float) -> "Free":
        """The same coefficient, its search started at `value` (kept inside the bounds)."""
        return dataclasses.replace(self, start=min(max(value, self.low), self.high))

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
             tolerance: float = 1e-10, relative: float = 0.0, restarts: int = 0) -> SearchResult:
    """The coefficients (within their bounds) that minimise loss; converged when the simplex's
    best and worst losses differ by less than `tolerance` + `relative` x the best loss.

    restarts: start again from the best point with a fresh simplex, up to this many times, while that
    still improves the loss (a loss with steps in it, such as a simulation's, strands a simplex)."""

    def values(z: np.ndarray) -> dict[str, float]:
        return {f.name: f.to_value(float(v)) for f, v in zip(free, z)}

    def f(z: np.ndarray) -> float:
        out = loss(values(z))
        return out if math.isfinite(out) else math.inf

    z0 = np.array([p.to_search() for p in free])
    best, fbest, iterations, converged = _nelder_mead(f, z0, max_iterations, tolerance, relative)
    for _ in range(restarts):
        if not converged or iterations >= max_iterations:
            break
        again, fagain, more, converged = _nelder_mead(f, best, max_iterations - iterations, tolerance, relative)
        iterations += more
        improved = fbest - fagain > tolerance + relative * abs(fbest)
        if fagain < fbest:
            best, fbest = again, fagain
        if not improved:
            break
    return SearchResult(values(best), fbest, iterations, converged)


def _nelder_mead(f, x0: np.ndarray, iters: int, tolerance: float, relative: float
                 ) -> tuple[np.ndarray, float, int, bool]:
    n = x0.size
    simplex = [x0] + [x0 + np.eye(n)[i] * 0.5 for i in range(n)]
    vals = [f(x) for x in simplex]
    for iteration in range(iters):
        order = np.argsort(vals)
        simplex = [simplex[i] for i in order]
        vals = [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < tolerance + relative * abs(vals[0]):
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


def line_search(f: Callable[[float], float], low: float, high: float, evaluations: int = 16) -> float:
    """The x in [low, high] minimising f, by golden-section search (f is assumed to have one valley there)."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = low, high
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(max(evaluations - 2, 0)):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return c if fc <= fd else d
