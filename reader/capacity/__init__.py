"""The analytic model: memory, KV-cache capacity, token budget, fragmentation and step time.

Everything here is arithmetic on resolved values (the lead's resolver fills `CapacityRequest`);
nothing reads files except the calibration/behaviour tables in `data/`, and nothing imports the
simulator. Public entry points:

- `compute_capacity(CapacityRequest) -> Capacity`   (reader.capacity.api)
- `StepTimeModel(...)(StepBatch) -> seconds`         (reader.capacity.steptime)
- `fragmentation(...)`                               (reader.capacity.fragmentation)
- `budget_report(...)`                               (reader.capacity.budget)
"""
from __future__ import annotations

__all__ = ["CapacityRequest", "Capacity", "compute_capacity", "StepTimeModel"]


def __getattr__(name: str):  # lazy, so `import reader.capacity` stays cheap for the CLI
    if name in ("CapacityRequest", "Capacity", "compute_capacity"):
        from . import api

        return getattr(api, name)
    if name == "StepTimeModel":
        from .steptime import StepTimeModel

        return StepTimeModel
    raise AttributeError(name)
