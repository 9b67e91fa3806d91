"""Fit the step-time model to a deployment's own `vllm bench serve` results.

Each result is replayed through the simulator (its requests, its arrivals, the deployment's scheduler
settings and KV cache), and the step-time model's free coefficients are searched so that the replays'
metrics match the measured ones: the squared log error of output throughput, median TPOT and median
TTFT (weight 1), P99 TPOT, P99 TTFT and mean ITL (weight 1/2), over every file. Median ITL is reported
but not fitted: a busy API server sends several tokens in one chunk, so the client measures ITLs of ~0
that no engine step has.

What a serving benchmark can tell apart are rates and overheads, so those are free:
- effective compute (prefill), effective bandwidth (weight streaming in decode), attention's KV read rate
  (decode over long contexts) and its compute rate (prefill over past context, late chunks of a long
  prompt): on a catalog GPU as efficiencies of its datasheet peaks (bounded by 1); on a device the
  catalog does not know, the compute and bandwidth figures themselves, which then stand in for its
  datasheet;
- host time per step (scheduling, input preparation), per sampled row (sampler, output processing) and
  per request in the server's front end (HTTP, tokenization: one request at a time, before scheduling).
The rest of the roofline's structure (the knee, launch and graph-gap terms, element-wise traffic, the
interconnect) is the base profile's, fitted on measured GPU steps where a benchmark cannot see it. On a
CPU, launch and compute run on the same cores, so their times add (overlap_p = 1) and no CUDA graphs run.
A weak pull towards the starting point keeps coefficients the files cannot distinguish where they were.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from ..catalog.types import GpuSpec
from ..errors import ReaderError
from .bench import BenchResult, metric_names, sim_metric, workload
from .coefficients import StepTimeCoefficients
from .optimize import Free, SearchResult, minimize
from .profile import (CalibrationProfile, Coefficient, DeviceStandIn, FitPoint, FitReport, FittedOn, MetricError,
                      default_profile, source_file)

LOSS_WEIGHTS = {"output_throughput": 1.0, "median_tpot_ms": 1.0, "median_ttft_ms": 1.0, "p99_tpot_ms": 0.5,
                "p99_ttft_ms": 0.5, "mean_itl_ms": 0.5}
PRIOR = 1e-3  # weight of the pull towards the starting point (per coefficient, in log terms)
MAX_ITERATIONS = 600
TOLERANCE = 1e-5
MIN_FILES = 2
# The free coefficients on a catalog GPU (efficiencies of its datasheet) and on a device outside it.
CATALOG_FREE = (("gemm_compute_eff", 0.05, 1.0), ("gemm_memory_eff", 0.05, 1.0), ("kv_read_eff", 0.05, 1.0),
                ("attn_compute_eff", 0.02, 1.0))
DEVICE_FREE = (("device.bf16_tflops", 1e-4, 1e4), ("device.hbm_bandwidth_gbps", 0.1, 1e5),
               ("kv_read_eff", 1e-3, 10.0), ("attn_compute_eff", 1e-3, 10.0))
HOST_FREE = (("host_overhead_s", 1e-6, 0.2, 5e-4), ("per_sampled_row_s", 1e-8, 0.01, 1e-6),
             ("front_end_s", 1e-6, 1.0, 1e-3))
# Where the search starts on a device the catalog does not know (any round figures: the fit moves them).
DEVICE_START = {"gpu": {"device.bf16_tflops": 100.0, "device.hbm_bandwidth_gbps": 1000.0},
                "cpu": {"device.bf16_tflops": 0.1, "device.hbm_bandwidth_gbps": 20.0}}


@dataclass
class Replay:
    """One bench result with the scenario that replays it."""

    result: BenchResult
    scenario: Any  # reader.diagnose.scenario.Scenario


@dataclass
class Setup:
    """What the fit varies and what it holds: the base coefficients, the device, the free coefficients."""

    resolved: Any
    base: StepTimeCoefficients
    device: Optional[DeviceStandIn]  # None: a catalog GPU
    free: list[Free]
    table_tokens: int

    def apply(self, values: dict[str, float]) -> tuple[StepTimeCoefficients, GpuSpec]:
        coefficients = self.base.replace(**{k: v for k, v in values.items() if not k.startswith("device.")})
        if self.device is None:
            return coefficients, self.resolved.require_gpu()
        from .select import standin_gpu

        device = self.device.model_copy(update={k.split(".", 1)[1]: v for k, v in values.items()
                                                if k.startswith("device.")})
        return coefficients, standin_gpu(device)


def setup(r: Any, device: Optional[DeviceStandIn], base: Optional[StepTimeCoefficients] = None) -> Setup:
    base = base or default_profile().coefficients()
    if device is not None:
        # a device outside the catalog: its own figures are fitted, so the efficiencies of them are 1
        base = base.replace(gemm_compute_eff=1.0, gemm_memory_eff=1.0, achievable_matmul_fraction=1.0,
                            achievable_copy_fraction=1.0, kv_read_eff=1.0, attn_compute_eff=1.0)
        if device.kind == "cpu":
            base = base.replace(overlap_p=1.0)
        start = DEVICE_START[device.kind]
        free = [Free(name, lo, hi, start.get(name, 1.0), log=True) for name, lo, hi in DEVICE_FREE]
    else:
        free = [Free(name, lo, hi, min(max(getattr(base, name), lo), hi)) for name, lo, hi in CATALOG_FREE]
    free += [Free(name, lo, hi, start, log=True) for name, lo, hi, start in HOST_FREE]
    budget = r.value("max_num_batched_tokens") or 8192
    return Setup(resolved=r, base=base, device=device, free=free, table_tokens=int(budget) + 1)


def replays(r: Any, results: Sequence[BenchResult]) -> list[Replay]:
    from ..diagnose.scenario import build_scenario

    out = []
    for result in results:
        scenario = build_scenario(r, generated=workload(result))
        if not scenario.starts:
            raise ReaderError(f"the capacity model says vLLM would not start with this config, so {result.label} "
                              f"cannot be replayed: {scenario.capacity.startup_error.message}", file=result.path)
        out.append(Replay(result, scenario))
    return out


def predict(replays_: Sequence[Replay], s: Setup, values: dict[str, float]) -> list[dict[str, float]]:
    """Each replay's simulated metrics under the given coefficient values."""
    from ..pipeline import step_time_model
    from ..sim.api import simulate

    coefficients, gpu = s.apply(values)
    stm = step_time_model(s.resolved, coefficients=coefficients, gpu=gpu, table_tokens=s.table_tokens)
    out = []
    for rp in replays_:
        sim = simulate(rp.scenario.settings, rp.scenario.workload, stm, mode="chunked", seed=rp.scenario.seed,
                       overhead_s=coefficients.host_overhead_s, front_end_s=coefficients.front_end_s)
        out.append({m: v for m in metric_names() if (v := sim_metric(sim, m)) is not None})
    return out


def loss_of(replays_: Sequence[Replay], predicted: Sequence[dict[str, float]]) -> float:
    total, weight = 0.0, 0.0
    for rp, pred in zip(replays_, predicted):
        for metric, w in LOSS_WEIGHTS.items():
            measured = rp.result.metrics.get(metric)
            if not measured or measured <= 0:
                continue
            p = pred.get(metric)
            err = math.log(p / measured) if p and p > 0 else 10.0
            total += w * err * err
            weight += w
    return total / weight if weight else 0.0


def fit(replays_: Sequence[Replay], s: Setup) -> SearchResult:
    starts = {f.name: f for f in s.free}

    def prior(values: dict[str, float]) -> float:
        return PRIOR * sum((math.log(v / starts[k].start) if starts[k].log else (v - starts[k].start)
                            / (starts[k].high - starts[k].low)) ** 2 for k, v in values.items())

    def loss(values: dict[str, float]) -> float:
        return loss_of(replays_, predict(replays_, s, values)) + prior(values)

    return minimize(loss, s.free, MAX_ITERATIONS, TOLERANCE)


def compare(replays_: Sequence[Replay], predicted: Sequence[dict[str, float]]) -> tuple[list[FitPoint],
                                                                                         list[MetricError]]:
    """Every measured metric beside its prediction, and the error per metric over the files."""
    points = []
    for rp, pred in zip(replays_, predicted):
        for metric in metric_names():
            measured, p = rp.result.metrics.get(metric), pred.get(metric)
            if not measured or p is None or measured <= 0:
                continue
            points.append(FitPoint(source=rp.result.label, metric=metric, measured=round(measured, 6),
                                   predicted=round(p, 6), error_pct=round(100 * (p / measured - 1), 2),
                                   in_loss=metric in LOSS_WEIGHTS))
    errors = []
    for metric in metric_names():
        errs = [abs(p.error_pct) for p in points if p.metric == metric]
        if errs:
            errors.append(MetricError(metric=metric, points=len(errs), median_abs_pct=round(float(np.median(errs)), 2),
                                      max_abs_pct=round(max(errs), 2), in_loss=metric in LOSS_WEIGHTS))
    errors.sort(key=lambda e: (not e.in_loss, list(LOSS_WEIGHTS).index(e.metric) if e.in_loss else 0))
    return points, errors
