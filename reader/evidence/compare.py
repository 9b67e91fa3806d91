"""Predicted beside observed: two Evidence, row by row, with the rows where they disagree flagged.

The standard rows come from Evidence's own fields (ROWS below); any Figure either side carries joins by
its key, so a new source (a log's memory terms, say) adds rows by adding figures to both sides. A row
agrees when the predicted value is within its tolerance of the observed one (relative to the observed);
a row without a tolerance, or with a side unknown, is shown and never flagged. A row predicted from
several simulations of the same observed load (draws) shows their median and range.

Tolerances: one per kind of figure (TOLERANCE; README, "How predicted and observed figures are compared").
An observed value known only to lie in a range (a percentile's histogram bucket, a rate over a busy span the
snapshots bound) agrees when the prediction lies in that range, widened by its kind's tolerance.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable, Optional

from pydantic import BaseModel, Field

from .model import Evidence, Figure

STEP_TIME = "the step-time model: the GPU, the model or its calibration differ from the server's"
WORKLOAD = ("the load: arrivals and request lengths are rebuilt from the metrics' histograms (their pairing and "
            "order are not in the metrics)")
KV_SIZE = ("the KV cache: the memory the server had for it differs from the capacity model's (GPU, model or memory "
           "terms)")
SCHEDULER = "a scheduler setting, or the number of KV blocks, differs from the server's"
TIME_AVERAGE = ("a time average, so the step-time model (how fast each burst of work is served, against the pauses "
                "between them) moves it as much as the scheduler does")


# The kinds of figure and the relative difference within which a prediction agrees with each.
TOLERANCE: dict[str, float] = {
    "count": 0.10,    # a counter read at both ends, and what its exact sums give (means, rates)
    "gauge": 0.30,    # a time average of a gauge sampled at snapshots (or from latency sums: Little's law)
    "bucket": 0.0,    # a percentile from histogram buckets: the prediction inside the bucket it lies in
    "setting": 0.0,   # the server's own configuration (vllm:cache_config_info): exactly
}
# A gauge also agrees within this much in its own unit (percentage points, requests): 0% against 0.4% does.
GAUGE_FLOOR = 1.0


class Row(BaseModel):
    key: str
    group: str
    label: str
    unit: str = ""
    predicted: Optional[float] = None
    observed: Optional[float] = None
    predicted_low: Optional[float] = None     # the range over draws, when there were several
    predicted_high: Optional[float] = None
    draws: int = 1
    exact: bool = False                       # the observed value is an exact count
    observed_low: Optional[float] = None      # the range the observed value is only known to lie in
    observed_high: Optional[float] = None
    unknown: bool = False                     # the source could not read it (not zero)
    bound: str = ""                           # why the observed side is only a bound (Figure.bound)
    kind: Optional[str] = None
    tolerance: Optional[float] = None
    difference: Optional[float] = None        # (predicted - observed) / observed
    agrees: Optional[bool] = None
    if_off: str = ""


class Comparison(BaseModel):
    rows: list[Row] = Field(default_factory=list)
    predicted: str = ""                        # where each side came from, in words
    observed: str = ""
    notes: list[str] = Field(default_factory=list)

    @property
    def disagreements(self) -> list[Row]:
        return [r for r in self.rows if r.agrees is False]


@dataclass(frozen=True)
class _Spec:
    key: str
    group: str
    label: str
    unit: str
    value: Callable[[Evidence], Optional[float]]
    kind: Optional[str]              # a key of TOLERANCE; None: shown, never flagged
    if_off: str
    exact: bool = False
    bucket: Optional[str] = None     # the Evidence.bucket_ranges key of a bucket-derived percentile
    rate: bool = False               # per second of the busy span (a range when the span is)


def _per_step(ev: Evidence) -> Optional[float]:
    if ev.prompt_tokens_total is None or ev.output_tokens_total is None or not ev.steps_with_output:
        return None
    return (ev.prompt_tokens_total + ev.output_tokens_total) / ev.steps_with_output


def _pct(x: Optional[float]) -> Optional[float]:
    return None if x is None else 100.0 * x


ROWS: tuple[_Spec, ...] = (
    _Spec("load.requests", "load", "requests finished", "", lambda e: e.num_requests, None, WORKLOAD, True),
    _Spec("load.prompt_mean", "load", "prompt length, mean", "tokens",
          lambda e: e.prompt_tokens.mean if e.prompt_tokens else None, "count", WORKLOAD),
    _Spec("load.output_mean", "load", "output length, mean", "tokens",
          lambda e: e.output_tokens.mean if e.output_tokens else None, "count", WORKLOAD),
    _Spec("kv.blocks", "kv", "KV-cache blocks", "", lambda e: e.num_gpu_blocks, "setting", KV_SIZE, True),
    _Spec("kv.block_size", "kv", "block size", "tokens", lambda e: e.block_size, "setting", KV_SIZE, True),
    _Spec("kv.tokens", "kv", "KV-cache size", "tokens", lambda e: e.kv_cache_tokens, "setting", KV_SIZE, True),
    _Spec("kv.usage_mean", "kv", "KV usage, time average", "%", lambda e: _pct(e.kv_usage_mean), "gauge",
          TIME_AVERAGE),
    _Spec("kv.usage_peak", "kv", "KV usage, peak", "%", lambda e: _pct(e.kv_usage_peak), None, SCHEDULER),
    _Spec("kv.time_full", "kv", "time with KV usage at 95% or more", "%",
          lambda e: _pct(e.fraction_time_kv_above_95pct), None, TIME_AVERAGE),
    _Spec("sched.steps", "scheduling", "engine steps that produced a token", "", lambda e: e.steps_with_output,
          "count", WORKLOAD, True),
    _Spec("sched.preemptions", "scheduling", "preemptions", "", lambda e: e.preemptions, "count", KV_SIZE, True),
    _Spec("sched.tokens_per_step", "scheduling", "tokens per step (prompt + output / steps)", "tokens", _per_step,
          "count", WORKLOAD),
    _Spec("sched.budget_fill", "scheduling", "token budget used per step, mean", "%",
          lambda e: _pct(e.budget_fill_mean), None, SCHEDULER),
    _Spec("sched.running_mean", "scheduling", "requests running, time average", "", lambda e: e.running_mean,
          "gauge", TIME_AVERAGE),
    _Spec("sched.running_peak", "scheduling", "requests running, peak", "", lambda e: e.running_peak, None, SCHEDULER),
    _Spec("sched.waiting_peak", "scheduling", "requests waiting, peak", "", lambda e: e.waiting_peak or None, None,
          WORKLOAD),
    _Spec("sched.queue_p99", "scheduling", "queueing time P99", "ms", lambda e: e.queue_time_ms.p99, "bucket",
          STEP_TIME, bucket="queue.p99"),
    _Spec("latency.ttft_median", "latency", "TTFT median, server-side", "ms", lambda e: e.ttft_ms.median, "bucket",
          STEP_TIME, bucket="ttft.median"),
    _Spec("latency.ttft_p99", "latency", "TTFT P99, server-side", "ms", lambda e: e.ttft_ms.p99, "bucket",
          STEP_TIME, bucket="ttft.p99"),
    _Spec("latency.itl_median", "latency", "ITL median, server-side", "ms", lambda e: e.itl_ms.median, "bucket",
          STEP_TIME, bucket="itl.median"),
    _Spec("latency.itl_p99", "latency", "ITL P99, server-side", "ms", lambda e: e.itl_ms.p99, "bucket",
          STEP_TIME, bucket="itl.p99"),
    _Spec("latency.e2el_p99", "latency", "end-to-end latency P99, server-side", "ms", lambda e: e.e2el_ms.p99,
          "bucket", STEP_TIME, bucket="e2el.p99"),
    _Spec("latency.step_mean", "latency", "time per engine step, mean while busy", "ms", lambda e: e.step_ms_mean,
          "count", STEP_TIME),
    _Spec("throughput.requests", "throughput", "request throughput", "req/s", lambda e: e.request_throughput,
          "count", STEP_TIME, rate=True),
    _Spec("throughput.output", "throughput", "output throughput", "tok/s", lambda e: e.output_throughput, "count",
          STEP_TIME, rate=True),
)


def figures(ev: Evidence) -> list[Figure]:
    """Evidence's standard rows as figures, then the source's own figures."""
    out = []
    for spec in ROWS:
        if spec.key in ev.unknown:
            out.append(Figure(key=spec.key, label=spec.label, unit=spec.unit, group=spec.group, kind=spec.kind,
                              tolerance=_tolerance(spec.kind), if_off=spec.if_off))
            continue
        value = spec.value(ev)
        if value is None:
            continue
        low, high = _range(spec, ev, float(value))
        out.append(Figure(key=spec.key, label=spec.label, value=float(value), unit=spec.unit, group=spec.group,
                          exact=spec.exact and low is None, kind=spec.kind, tolerance=_tolerance(spec.kind),
                          if_off=spec.if_off, low=low, high=high))
    return out + list(ev.figures)


def _tolerance(kind: Optional[str]) -> Optional[float]:
    return TOLERANCE[kind] if kind is not None else None


def _range(spec: _Spec, ev: Evidence, value: float) -> tuple[Optional[float], Optional[float]]:
    """The range an observed value is only known to lie in: its percentile's bucket, or a rate over a busy span
    known between two bounds (the value is over the longer one)."""
    if spec.bucket and spec.bucket in ev.bucket_ranges:
        return ev.bucket_ranges[spec.bucket]
    if spec.rate and ev.duration_low_s is not None and ev.duration_s and ev.duration_low_s < ev.duration_s:
        return value, value * ev.duration_s / ev.duration_low_s if ev.duration_low_s > 0 else math.inf
    return None, None


def compare(predicted: Evidence, observed: Evidence, draws: Optional[dict[str, list[float]]] = None,
            reasons: Optional[dict[str, str]] = None, notes: Optional[list[str]] = None) -> Comparison:
    """Rows for every key either side knows, standard rows first. draws: predicted values of the same key from
    several simulations (the row shows their median and range). reasons: group -> a likelier reason than the
    row's own (e.g. 'the GPU was assumed: H100-SXM')."""
    pred = {f.key: f for f in figures(predicted)}
    obs = {f.key: f for f in figures(observed)}
    order = [s.key for s in ROWS] + [k for k in list(obs) + list(pred) if k not in {s.key for s in ROWS}]
    rows: list[Row] = []
    seen: set[str] = set()
    for key in order:
        if key in seen or (key not in pred and key not in obs):
            continue
        seen.add(key)
        rows.append(_row(key, pred.get(key), obs.get(key), (draws or {}).get(key), reasons or {}))
    return Comparison(rows=rows, predicted=predicted.description, observed=observed.description,
                      notes=list(notes or []))


def _row(key: str, p: Optional[Figure], o: Optional[Figure], drawn: Optional[list[float]],
         reasons: dict[str, str]) -> Row:
    meta = o or p
    assert meta is not None
    tolerance = meta.tolerance if o is None or o.tolerance is not None else (p.tolerance if p else None)
    row = Row(key=key, group=meta.group, label=meta.label, unit=meta.unit,
              predicted=p.value if p else None, observed=o.value if o else None,
              exact=bool(o and o.exact), tolerance=tolerance, kind=meta.kind,
              observed_low=o.low if o else None, observed_high=o.high if o else None,
              bound=o.bound if o else "",
              unknown=bool(o and o.value is None), if_off=reasons.get(meta.group) or meta.if_off)
    if drawn:
        row.predicted = float(statistics.median(drawn))
        row.predicted_low, row.predicted_high, row.draws = float(min(drawn)), float(max(drawn)), len(drawn)
    if row.predicted is not None and row.observed is not None:
        if row.observed != 0 and row.observed_low is None:
            row.difference = (row.predicted - row.observed) / abs(row.observed)
        if tolerance is not None:
            row.agrees = agrees(row.predicted, row.observed, tolerance, row.kind, row.observed_low,
                                row.observed_high)
    return row


def agrees(predicted: float, observed: float, tolerance: float, kind: Optional[str],
           low: Optional[float] = None, high: Optional[float] = None) -> bool:
    """Within the kind's tolerance of the observed value, or of the range it is known to lie in."""
    if low is not None and high is not None:
        return low * (1 - tolerance) - 1e-9 <= predicted <= high * (1 + tolerance) + 1e-9
    off = abs(predicted - observed)
    return off <= tolerance * abs(observed) + 1e-9 or (kind == "gauge" and off <= GAUGE_FLOOR)
