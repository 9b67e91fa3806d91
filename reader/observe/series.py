"""Snapshots over a window -> the counter increases, histogram changes and gauge samples of the metrics in
names.py, for one served model, summed over engines (data parallel) and, behind a Prometheus, instances.

Counters and histogram buckets are increases, series by series, as Prometheus's increase() sees them: a
value below the one before is a restart, which counts from zero. A series that first appears inside the
window counts from zero too (it was created then). With a single snapshot, everything counts from the
server's start (the `_created` timestamps prometheus_client exports say when that was).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..errors import ReaderError
from .histogram import Histogram
from .names import BY_KEY, Metric
from .samples import Sample, Snapshot

MODEL_LABEL = "model_name"


@dataclass
class Window:
    snapshots: list[Snapshot]
    model: Optional[str] = None
    names_used: dict[str, str] = field(default_factory=dict)   # metric key -> the spelling found
    restarts_at: set[int] = field(default_factory=set)          # snapshots where counters started again

    def __post_init__(self) -> None:
        # per snapshot: series name -> this model's samples (engines and instances alike)
        self._index: list[dict[str, list[Sample]]] = []
        for snap in self.snapshots:
            by_name: dict[str, list[Sample]] = {}
            for s in snap.samples:
                if self.model is None or s.label(MODEL_LABEL) in (None, self.model):
                    by_name.setdefault(s.name, []).append(s)
            self._index.append(by_name)
        self._present = {name for by_name in self._index for name in by_name}

    @property
    def start(self) -> float:
        return self.snapshots[0].time

    @property
    def end(self) -> float:
        return self.snapshots[-1].time

    def name_of(self, key: str) -> Optional[str]:
        """The spelling of a metric this window holds (the newest first), or None."""
        if key in self.names_used:
            return self.names_used[key]
        metric = BY_KEY[key]
        present = self._present
        for name in metric.names:
            probe = name + "_count" if metric.kind == "histogram" else name
            if probe in present:
                self.names_used[key] = name
                return name
        return None

    # ---- counters and histograms ----------------------------------------------------------------------

    def read_at_both_ends(self, key: str) -> bool:
        """Is the metric in the window's first and last snapshot? Only then is its increase known: a series
        missing from an end (a page cut short, a metric not exported) is unknown, never zero."""
        name = self.name_of(key)
        if name is None:
            return False
        probe = name + "_count" if BY_KEY[key].kind == "histogram" else name
        return all(probe in self._index[i] for i in {0, len(self._index) - 1})

    def increase(self, key: str, by: Optional[str] = None) -> Optional[float] | dict[str, float]:
        """The counter's increase over the window (summed over its series), or per value of label `by`."""
        name = self.name_of(key)
        if name is None:
            return None
        per_series = self._increases(name)
        if by is None:
            return sum(per_series.values())
        out: dict[str, float] = {}
        for labels, value in per_series.items():
            label = dict(labels).get(by, "")
            out[label] = out.get(label, 0.0) + value
        return out

    def track(self, key: str, suffix: str = "") -> list[float]:
        """The counter's (or a histogram's _count/_sum) increase since the window's start, at every snapshot."""
        name = self.name_of(key)
        if name is None:
            return []
        totals = [0.0] * len(self._index)
        for i, _, step in self._steps(name + suffix):
            totals[i] += step
        return list(itertools.accumulate(totals))

    def histogram(self, key: str) -> Optional[Histogram]:
        name = self.name_of(key)
        if name is None:
            return None
        buckets: dict[float, float] = {}
        for labels, value in self._increases(name + "_bucket").items():
            le = dict(labels).get("le")
            if le is not None:
                bound = float(le)
                buckets[bound] = buckets.get(bound, 0.0) + value
        total = sum(self._increases(name + "_sum").values())
        count = sum(self._increases(name + "_count").values())
        bounds = tuple(sorted(buckets))
        return Histogram(bounds=bounds, counts=tuple(buckets[b] for b in bounds), total=total, count=count)

    def _increases(self, name: str) -> dict[tuple, float]:
        out: dict[tuple, float] = {}
        for _, labels, step in self._steps(name):
            out[labels] = out.get(labels, 0.0) + step
        return out

    def _steps(self, name: str) -> Iterator[tuple[int, tuple, float]]:
        """(snapshot index, series labels, increase since the series' previous value) for every sample."""
        single = len(self._index) == 1
        last: dict[tuple, float] = {}
        for i, by_name in enumerate(self._index):
            for s in by_name.get(name, ()):
                if math.isnan(s.value):
                    continue
                before = last.get(s.labels)
                if before is None:
                    # present from the first snapshot: the window starts there; created inside it: from zero
                    step = s.value if (i > 0 or single) else 0.0
                elif s.value >= before:
                    step = s.value - before
                else:
                    self.restarts_at.add(i)
                    step = s.value
                last[s.labels] = s.value
                yield i, s.labels, step

    # ---- gauges -------------------------------------------------------------------------------------------

    def gauge(self, key: str, how: str = "sum", where: Optional[dict[str, str]] = None) -> list[tuple[float, float]]:
        """(time, value) per snapshot holding the gauge: summed (or the max) over engines and instances."""
        name = self.name_of(key)
        if name is None:
            return []
        out = []
        for snap, by_name in zip(self.snapshots, self._index):
            values = [s.value for s in by_name.get(name, ())
                      if not math.isnan(s.value) and all(s.label(k) == v for k, v in (where or {}).items())]
            if values:
                out.append((snap.time, max(values) if how == "max" else sum(values)))
        return out

    def info(self, key: str) -> list[dict[str, str]]:
        """The label sets of an info metric (one per engine) in the newest snapshot that has it."""
        name = self.name_of(key)
        if name is None:
            return []
        for by_name in reversed(self._index):
            found = [dict(s.labels) for s in by_name.get(name, ())]
            if found:
                return found
        return []

    def created(self) -> Optional[float]:
        """When the server's counters were created (its start), from the _created samples."""
        times = [s.value for s in self.snapshots[0].samples if s.name.endswith("_created") and s.value > 0]
        return min(times) if times else None


def models_in(snapshots: list[Snapshot]) -> list[str]:
    return sorted({s.label(MODEL_LABEL) for snap in snapshots for s in snap.samples if s.label(MODEL_LABEL)})


def window(snapshots: list[Snapshot], model: Optional[str] = None) -> Window:
    """The window for one served model: the one there is, or the one asked for by --served-model."""
    if not snapshots:
        raise ReaderError("no scrapes to read.", key="SOURCE")
    models = models_in(snapshots)
    if model is not None and model not in models:
        raise ReaderError(f"no metrics for the served model '{model}' here"
                          + (f" (it serves: {', '.join(models)})." if models else "."), key="--served-model")
    if model is None and len(models) > 1:
        raise ReaderError(f"this endpoint serves {len(models)} models ({', '.join(models)}): choose one with "
                          "--served-model.", key="--served-model")
    return Window(snapshots=sorted(snapshots, key=lambda s: s.time), model=model or (models[0] if models else None))


def metric(key: str) -> Metric:
    return BY_KEY[key]
