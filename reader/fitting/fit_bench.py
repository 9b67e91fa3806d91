"""Fit the step-time model to a deployment's own `vllm bench serve` results.

Each load is replayed through the simulator (its requests, its arrivals, the deployment's scheduler
settings and KV cache), and the step-time model's free coefficients are searched so that the replays'
metrics match the measured ones: the log error of output throughput, median TPOT and median TTFT
(weight 1), P99 TPOT, P99 TTFT and mean ITL (weight 1/2; latencies over the requests the client received
as a stream, see bench.py), over every load, squared while small and growing
only logarithmically beyond about 25% (a robust loss: benchmarks on a busy machine have outliers). Repeated runs of
one load (the same requests at the same rate and cap) are replayed once and compared through their median. Median ITL is reported
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
A weak pull towards the starting point keeps coefficients the files cannot distinguish where they were; the
profile says which distinctions the fitted loads could not make (coverage.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..capacity.coefficients import StepTimeCoefficients
from ..catalog.types import GpuSpec
from ..errors import ReaderError
from .bench import BenchResult, metric_names, sim_metric, workload
from .coverage import (coverage_warnings, front_end_warnings, open_loop_warnings, repeated_prompt_warnings,
                       saturating)
from .delivery import delivery_warnings
from .optimize import Free, SearchResult, line_search, minimize
from ..calibration.profile import (CalibrationProfile, Coefficient, DeviceStandIn, FitPoint, FitReport, FittedOn, MetricError,
                      default_profile, source_file)

Progress = Callable[[str, int, int], None]  # (stage, replays so far, replays running): render/progress.py
LOSS_WEIGHTS = {"output_throughput": 1.0, "median_tpot_ms": 1.0, "median_ttft_ms": 1.0, "p99_tpot_ms": 0.5,
                "p99_ttft_ms": 0.5, "mean_itl_ms": 0.5}
ROBUST_SCALE = 0.25  # log error (~25%) beyond which a point's pull stops growing quadratically
PRIOR = 1e-4  # weight of the pull towards the starting point (per coefficient, in log terms)
MAX_ITERATIONS = 600
# The search stops when its simplex's losses agree within 0.2% (plus a floor for near-perfect fits): the
# last digits of a loss this noisy are not worth the replays (see benchmarks/bench_calibrate.py).
TOLERANCE, RELATIVE_TOLERANCE = 1e-7, 2e-3
RESTARTS = 1
SCALE_RANGE, SCALE_EVALUATIONS = math.log(30.0), 14  # the overall speed is first searched within 30x either way
MIN_LOADS = 2
# Fixed at 1 on a device outside the catalog, whose own compute and bandwidth figures are fitted instead.
DEVICE_UNITY = ("gemm_compute_eff", "gemm_memory_eff", "achievable_matmul_fraction", "achievable_copy_fraction")
# The free coefficients on a catalog GPU (efficiencies of its datasheet) and on a device outside it.
CATALOG_FREE = (("gemm_compute_eff", 0.05, 1.0), ("gemm_memory_eff", 0.05, 1.0), ("kv_read_eff", 0.05, 1.0),
                ("attn_compute_eff", 0.02, 1.0))
DEVICE_FREE = (("device.bf16_tflops", 1e-4, 1e4), ("device.hbm_bandwidth_gbps", 0.1, 1e5),
               ("kv_read_eff", 1e-3, 10.0), ("attn_compute_eff", 1e-3, 10.0))
# Starting values large enough to matter: a search starting where a term is negligible sees a flat loss along it.
HOST_FREE = (("host_overhead_s", 1e-6, 0.2, 1e-3), ("per_sampled_row_s", 1e-8, 0.01, 3e-5),
             ("front_end_s", 1e-6, 1.0, 2e-3))
# Fitted only where a fitted load kept the server full (coverage.saturating): elsewhere nothing pins it.
FRONT_END_TOKEN = ("front_end_token_s", 1e-7, 0.01, 1e-4)
# An idle engine's wake-up on the CPU build of vLLM 0.32.0, measured in issue 12 (README, "What the model still
# misses on F": lone arrivals after 10 ms or more idle 16-18 ms to their first token, back-to-back ones 13.7 ms).
# Held, not fitted: only lone open-loop arrivals show it, and their TTFTs move as much with the front end's time.
CPU_IDLE_WAKE_S = 0.0035
# Where the search starts on a device the catalog does not know (any round figures: the fit moves them).
DEVICE_START = {"gpu": {"device.bf16_tflops": 100.0, "device.hbm_bandwidth_gbps": 1000.0},
                "cpu": {"device.bf16_tflops": 0.1, "device.hbm_bandwidth_gbps": 20.0}}


@dataclass
class Replay:
    """One load (the results of every run of it) with the scenario that replays it."""

    results: list[BenchResult]
    scenario: Any  # reader.diagnose.scenario.Scenario

    @property
    def label(self) -> str:
        first = self.results[0].label
        return first if len(self.results) == 1 else f"{first} (median of {len(self.results)} runs)"

    def measured(self, metric: str) -> Optional[float]:
        """The metric over the runs: their median (repeated runs of one load differ on a busy machine)."""
        values = [r.fit_metrics[metric] for r in self.results if metric in r.fit_metrics]
        return float(np.median(values)) if values else None


def load_key(result: BenchResult) -> tuple:
    """Two results with equal keys ran the same requests the same way (a repeated run of one load)."""
    return (result.request_rate, result.burstiness, result.max_concurrency, result.completed,
            result.total_input_tokens, result.total_output_tokens, result.input_lens, result.output_lens)


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
        from ..calibration.select import standin_gpu

        device = self.device.model_copy(update={k.split(".", 1)[1]: v for k, v in values.items()
                                                if k.startswith("device.")})
        return coefficients, standin_gpu(device)


def setup(r: Any, device: Optional[DeviceStandIn], base: Optional[StepTimeCoefficients] = None,
          fitted: Sequence[BenchResult] = ()) -> Setup:
    """What the fit varies; the front end's cost per streamed token only when a `fitted` result can show it."""
    base = base or default_profile().coefficients()
    if device is not None:
        # a device outside the catalog: its own figures are fitted, so the efficiencies of them are 1
        base = base.replace(**{name: 1.0 for name in DEVICE_UNITY + ("kv_read_eff", "attn_compute_eff")})
        if device.kind == "cpu":
            base = base.replace(overlap_p=1.0, idle_wake_s=CPU_IDLE_WAKE_S)
        start = DEVICE_START[device.kind]
        free = [Free(name, lo, hi, start.get(name, 1.0), log=True) for name, lo, hi in DEVICE_FREE]
    else:
        free = [Free(name, lo, hi, min(max(getattr(base, name), lo), hi)) for name, lo, hi in CATALOG_FREE]
    host = HOST_FREE + ((FRONT_END_TOKEN,) if any(saturating(x, _max_num_seqs(r)) for x in fitted) else ())
    free += [Free(name, lo, hi, start, log=True) for name, lo, hi, start in host]
    budget = r.value("max_num_batched_tokens") or 8192
    return Setup(resolved=r, base=base, device=device, free=free, table_tokens=int(budget) + 1)


def _max_num_seqs(r: Any) -> int:
    return int(r.value("max_num_seqs") or 256)


def replays(r: Any, results: Sequence[BenchResult]) -> list[Replay]:
    """One replay per load: repeated runs of the same load are grouped and compared through their median."""
    from ..diagnose.scenario import build_scenario

    groups: dict[tuple, list[BenchResult]] = {}
    for result in results:
        groups.setdefault(load_key(result), []).append(result)
    out = []
    for runs in groups.values():
        scenario = build_scenario(r, generated=workload(runs[0]))
        if not scenario.starts:
            raise ReaderError(f"the capacity model says vLLM would not start with this config, so {runs[0].label} "
                              f"cannot be replayed: {scenario.capacity.startup_error.message}", file=runs[0].path)
        out.append(Replay(runs, scenario))
    return out


def predict(replays_: Sequence[Replay], s: Setup, values: dict[str, float]) -> list[dict[str, float]]:
    """Each replay's simulated metrics under the given coefficient values."""
    from ..pipeline import step_time_model
    from ..sim.api import simulate

    coefficients, gpu = s.apply(values)
    stm = step_time_model(s.resolved, coefficients=coefficients, gpu=gpu, table_tokens=s.table_tokens)
    out = []
    for rp in replays_:
        # the scenario under the trial's step-time model: its host times are the ones a diagnosis replays with
        sc = replace(rp.scenario, step_time=stm)
        sim = simulate(sc.settings, sc.workload, stm, mode="chunked", seed=sc.seed, max_points=2, **sc.host_times)
        out.append({m: v for m in metric_names() if (v := sim_metric(sim, m)) is not None})
    return out


_WORK: Optional[tuple] = None  # (replays, setup) inherited by the forked workers of a ParallelPredict


def _predict_part(job: tuple[list[int], dict[str, float]]) -> list[dict[str, float]]:
    indices, values = job
    assert _WORK is not None
    replays_, s = _WORK
    return predict([replays_[i] for i in indices], s, values)


class ParallelPredict:
    """predict() with the replays shared out over worker processes (forked once, holding the replays), for a
    search that asks for thousands of replays; one process where there is one core or little to share."""

    def __init__(self, replays_: Sequence[Replay], s: Setup, workers: Optional[int] = None) -> None:
        import os

        self.replays, self.setup = list(replays_), s
        workers = workers if workers is not None else min(os.cpu_count() or 1, len(self.replays) // 2)
        self.pool = None
        if workers > 1:
            global _WORK
            from concurrent.futures import ProcessPoolExecutor
            from multiprocessing import get_context

            _WORK = (self.replays, s)  # the workers fork on first use and inherit it; cleared on exit
            self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork"))
        # the costliest replays first, dealt round-robin: the parts take about as long as each other
        cost = sorted(range(len(self.replays)), key=lambda i: -int(self.replays[i].scenario.workload.output_len.sum()))
        self.parts = [cost[k::workers] for k in range(workers)] if workers > 1 else [cost]

    def __call__(self, values: dict[str, float]) -> list[dict[str, float]]:
        if self.pool is None:
            return predict(self.replays, self.setup, values)
        out: list[dict[str, float]] = [{} for _ in self.replays]
        for part, result in zip(self.parts, self.pool.map(_predict_part, [(p, values) for p in self.parts])):
            for i, metrics in zip(part, result):
                out[i] = metrics
        return out

    def __enter__(self) -> "ParallelPredict":
        return self

    def __exit__(self, *exc: object) -> None:
        global _WORK
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            _WORK = None


def robust(err: float) -> float:
    """err^2 for small errors, growing only logarithmically beyond ~ROBUST_SCALE (Cauchy loss): one absurd
    measurement (a client that received a whole stream in one read reports a TPOT of microseconds; a run the
    machine's other work pushed past saturation reports seconds of queueing) cannot outweigh the rest."""
    return ROBUST_SCALE ** 2 * math.log1p((err / ROBUST_SCALE) ** 2)


def loss_of(replays_: Sequence[Replay], predicted: Sequence[dict[str, float]]) -> float:
    total, weight = 0.0, 0.0
    for rp, pred in zip(replays_, predicted):
        for metric, w in LOSS_WEIGHTS.items():
            measured = rp.measured(metric)
            if not measured or measured <= 0:
                continue
            p = pred.get(metric)
            err = math.log(p / measured) if p and p > 0 else 10.0
            total += w * robust(err)
            weight += w
    return total / weight if weight else 0.0


def fit(replays_: Sequence[Replay], s: Setup, progress: Optional[Progress] = None) -> SearchResult:
    """First the overall speed (every time coefficient k times longer, every rate k times slower: one line
    search), then every coefficient from there: a simplex started at the wrong speed by a factor of ten
    can settle on a wrong balance between them. progress(stage, replays so far, 0) after each evaluation."""
    stage = ["speed"]
    replayed = [0]

    with ParallelPredict(replays_, s) as run:
        def measured_loss(values: dict[str, float]) -> float:
            loss = loss_of(replays_, run(values))
            replayed[0] += len(replays_)
            if progress is not None:
                progress(stage[0], replayed[0], 0)
            return loss

        start = {f.name: f.start for f in s.free}
        k = math.exp(line_search(lambda x: measured_loss(_slower(s.free, start, math.exp(x))), -SCALE_RANGE,
                                 SCALE_RANGE, SCALE_EVALUATIONS))
        free = [replace(f, start=v) for f, v in zip(s.free, _slower(s.free, start, k).values())]
        stage[0] = "fit"
        starts = {f.name: f for f in free}

        def prior(values: dict[str, float]) -> float:
            return PRIOR * sum((math.log(v / starts[k].start) if starts[k].log else (v - starts[k].start)
                                / (starts[k].high - starts[k].low)) ** 2 for k, v in values.items())

        return minimize(lambda v: measured_loss(v) + prior(v), free, MAX_ITERATIONS, TOLERANCE, RELATIVE_TOLERANCE,
                        RESTARTS)


def _slower(free: Sequence[Free], values: dict[str, float], k: float) -> dict[str, float]:
    """The values with every time (a name ending in _s) k times longer and every rate k times slower."""
    out = {}
    for f in free:
        v = values[f.name] * k if f.name.endswith("_s") else values[f.name] / k
        out[f.name] = min(max(v, f.low), f.high)
    return out


def compare(replays_: Sequence[Replay], predicted: Sequence[dict[str, float]]) -> tuple[list[FitPoint],
                                                                                         list[MetricError]]:
    """Every measured metric beside its prediction, and the error per metric over the files."""
    points = []
    for rp, pred in zip(replays_, predicted):
        for metric in metric_names():
            measured, p = rp.measured(metric), pred.get(metric)
            if not measured or p is None or measured <= 0:
                continue
            points.append(FitPoint(source=rp.label, metric=metric, measured=round(measured, 6),
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


def model_names(r: Any) -> dict[str, str]:
    """Every name the deployment answers to, with where it comes from: what clients and `vllm bench serve
    --model` send is the served name (each of --served-model-name's), else the model path; a path's last
    folder is accepted too, as a result saved against a copy of the model elsewhere names it."""
    names = {n: "--served-model-name" for n in r.deployment.served_names}
    for path, how in ((r.deployment.model, "the model path"), (r.model.id if r.model else None, "the model's id")):
        if path:
            names.setdefault(str(path), how)
            names.setdefault(str(path).rstrip("/").rsplit("/", 1)[-1], f"the last folder of {how}")
    return names


def check_model(r: Any, results: Sequence[BenchResult]) -> Optional[str]:
    """Refuse results measured on another model than the config serves; say which of its names they used."""
    names = model_names(r)
    folded = {n.lower(): n for n in reversed(list(names))}  # the first spelling wins a case-insensitive tie
    matched = {}
    for result in results:
        got = result.model_id
        if not got:
            continue
        name = folded.get(got.lower()) or folded.get(got.rstrip("/").rsplit("/", 1)[-1].lower())
        if name is None:
            listed = ", ".join(f"'{n}' ({how})" for n, how in names.items())
            raise ReaderError(f"this benchmark ran against model '{got}', and the config answers to {listed}: its "
                              "results say nothing about this deployment (if it does serve them, name it with "
                              "--served-model-name).", file=result.path, key="model_id")
        matched[got] = f"'{got}', {names[name]}" + ("" if got == name else f" '{name}'")
    if not matched:
        return None
    return "the benchmarks ran against " + "; ".join(sorted(matched.values())) + "."


def fitted_on(r: Any, config: str) -> FittedOn:
    from ..calibration.select import shape_of, target_of

    t = target_of(r)
    return FittedOn(device=t.device, device_in_catalog=r.require_gpu().vendor != "other", model=t.model,
                    model_shape=shape_of(r.require_model()), tensor_parallel_size=t.tensor_parallel_size,
                    pipeline_parallel_size=t.pipeline_parallel_size, dtype=t.dtype, quantization=t.quantization,
                    kv_cache_dtype=t.kv_cache_dtype or "auto", enforce_eager=bool(t.enforce_eager),
                    vllm_version=r.version, config=config)


def coefficients_of(s: Setup, values: dict[str, float], files: str) -> dict[str, Coefficient]:
    base = default_profile()
    free = {f.name: f for f in s.free}
    coefficients, _ = s.apply(values)
    out = {}
    for name, value in coefficients.as_dict().items():
        if name in free:
            f = free[name]
            how = f"fitted to {files} by vllm-reader calibrate (bounds {f.low:g}..{f.high:g})"
        elif s.device is not None and name in DEVICE_UNITY:
            how = "1: the device's own figures are fitted (its device section), so efficiencies of them are 1"
        elif s.device is not None and s.device.kind == "cpu" and name == "overlap_p":
            how = "1: on a CPU, launch and compute share the cores, so their times add"
        elif s.device is not None and s.device.kind == "cpu" and name == "idle_wake_s":
            how = ("measured on the CPU build of vLLM 0.32.0 (issue 12: first tokens of requests reaching an engine "
                   "idle for 10 ms or more, against back-to-back ones); held, not fitted")
        else:
            how = f"from the shipped profile {base.name}: {base.step_time[name].source}"
        out[name] = Coefficient(value=float(f"{value:.6g}"), source=how, fitted=name in free)
    return out


def device_of(s: Setup, values: dict[str, float], files: str) -> Optional[DeviceStandIn]:
    if s.device is None:
        return None
    fitted = s.device.model_copy(update={k.split(".", 1)[1]: float(f"{v:.6g}") for k, v in values.items()
                                         if k.startswith("device.")})
    return fitted.model_copy(update={"source": f"effective figures fitted to {files} by vllm-reader calibrate; "
                                               f"memory: {s.device.source}"})


def calibrate_bench(r: Any, config: str, fit_files: Sequence[str], held_out_files: Sequence[str],
                    device: Optional[DeviceStandIn], name: str, command: str,
                    progress: Optional[Progress] = None) -> CalibrationProfile:
    """The whole bench fit: read, check, replay, fit, and return the profile (nothing is written here)."""
    from .bench import read_bench

    results = [read_bench(f) for f in fit_files]
    held = [read_bench(f) for f in held_out_files]
    model_match = check_model(r, results + held)
    fit_replays, held_replays = replays(r, results), replays(r, held)
    if len(fit_replays) < MIN_LOADS:
        raise ReaderError(f"too few bench results to fit: {len(fit_replays)} distinct load(s) given, at least "
                          f"{MIN_LOADS} needed (each load pins down different coefficients; give results at a few "
                          "concurrencies or rates, short and long prompts).", key="--bench")
    s = setup(r, device, fitted=results)
    search = fit(fit_replays, s, progress)
    if not search.converged:
        raise ReaderError(f"the fit did not converge in {search.iterations} iterations (the results disagree with "
                          "each other more than any set of coefficients explains); no profile was written. Check "
                          "that every file is from this deployment and that the machine was not busy with "
                          "other work while the benchmark ran.", key="--bench")
    values = {k: float(f"{v:.6g}") for k, v in search.values.items()}  # as the profile stores them
    points, errors = compare(fit_replays, predict(fit_replays, s, values))
    if held_replays:
        hp, he = compare(held_replays, predict(held_replays, s, values))
        points += [p.model_copy(update={"held_out": True}) for p in hp]
        errors += [e.model_copy(update={"held_out": True}) for e in he]
    files = f"{len(results)} bench result{'s' if len(results) != 1 else ''}"
    report = FitReport(evidence="bench", method=("bounded Nelder-Mead on the robust (Cauchy) log error of "
                                                 + ", ".join(f"{m} (weight {w:g})" for m, w in LOSS_WEIGHTS.items())
                                                 + " over every replayed result"),
                       free=[f.name for f in s.free], iterations=search.iterations, converged=search.converged,
                       loss=round(search.loss, 6), errors=errors, points=points,
                       warnings=(delivery_warnings(results + held) + coverage_warnings(results)
                                 + front_end_warnings(results, _max_num_seqs(r))
                                 + open_loop_warnings(results, _max_num_seqs(r))
                                 + repeated_prompt_warnings(results + held, bool(r.value("enable_prefix_caching")))),
                       model_match=model_match)
    sources = [source_file(res.path, "bench", res.describe()) for res in results]
    sources += [source_file(res.path, "bench", res.describe() + " (held out: predicted, not fitted)") for res in held]
    return CalibrationProfile(name=name, fitted_on=fitted_on(r, config), device=device_of(s, values, files),
                              step_time=coefficients_of(s, values, files), fit=report, sources=sources,
                              created_by=command)
