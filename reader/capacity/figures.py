"""A number with the formula that produced it, so a report can show inputs next to results."""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict

GiB = 1 << 30


class Figure(BaseModel):
    """One intermediate result: value, unit, how it was computed, and where the rule comes from."""

    model_config = ConfigDict(frozen=True)

    value: float
    unit: str  # bytes | tokens | blocks | requests | x | s | fraction
    how: str  # the formula with its inputs filled in
    source: str = ""  # vLLM file:line@tag, a measurement, or "estimate: ..."
    estimated: bool = False  # True where vLLM measures and we estimate
    # For the memory terms vLLM measures: read from a log of this run, taken from a calibration profile (fitted
    # on the deployment's own logs), or estimated. None for figures that are computed, not measured.
    basis: Optional[Literal["measured", "fitted", "estimated"]] = None

    @property
    def gib(self) -> float:
        return self.value / GiB


def gib(x: float) -> str:
    return f"{x / GiB:.2f} GiB"
