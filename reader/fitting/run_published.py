"""`vllm-reader calibrate --published RUNS.csv --gpu GPU`: one GPU type's profile from published serving runs."""
from __future__ import annotations

import math
from typing import Optional

from ..errors import ReaderError
from .fit_published import (WEIGHTS, Case, corrected, fit, free_terms, held, profile_of, report, require_runs,
                            response_delay_s, surrogate, unfitted)
from ..calibration.profile import CalibrationProfile, default_profile
from .published import PublishedRun, read_published, replay, resolve_run

MAX_CONCURRENCY = 64  # beyond it the runs' unknown caps (max_num_seqs, KV cache) decide more than step times
ROUNDS = 3  # search, replay, correct the steady-state account, search again (twice: the first wave moves it)


def from_published(path: str, gpu: Optional[str], name: Optional[str]) -> CalibrationProfile:
    from ..catalog.load import find_gpu

    spec = find_gpu(gpu) if gpu else None
    if spec is None:
        raise ReaderError("--published fits one GPU type: give --gpu with a catalog GPU (e.g. B200).", key="--gpu")
    runs = [r for r in read_published(path, MAX_CONCURRENCY) if r.gpu == spec.id]
    require_runs(runs, spec.id, path)
    base = default_profile()
    cases, skipped = _cases(runs)
    measured_steps = base.fitted_on.device == spec.id
    start = _shipped_values(spec.id)
    free = _started(free_terms(cases, measured_steps), start)
    label = name or f"{spec.id.lower()}-published"

    def judged(values: dict[str, float], result) -> tuple:
        nonlocal cases
        draft = profile_of(label, spec, base, values, free, report([], free, result, []), path, runs)
        cases, points, failed = _replayed(cases, draft)
        return _replay_error(points), draft, points, result, failed

    # the shipped profile is the first candidate: a search that replays worse than where it started keeps it
    candidates = [judged({f.name: start[f.name] for f in free if f.name in start}, None)] if start else []
    values: dict[str, float] = {}
    for _ in range(ROUNDS):
        values, result = fit(cases, base.coefficients().replace(**held(), **values), free, _model_for)
        candidates.append(judged(values, result))
        free = _started(free, values)
    best = min(range(len(candidates)), key=lambda i: candidates[i][0])
    _, draft, points, result, failed = candidates[best]
    kept = ["no round of the search replayed better than the shipped profile it started from: its values are "
            "kept"] if start and best == 0 else []
    fit_report = report(points, free, result, skipped + failed, unfitted(cases, measured_steps))
    return draft.model_copy(update={"fit": fit_report.model_copy(update={"warnings": fit_report.warnings + kept})})


def _shipped_values(gpu_id: str) -> dict[str, float]:
    """The fitted values of the GPU type's shipped published-runs profile, where one exists: a refit starts there."""
    from ..calibration.profile import DEFAULT_PROFILE, read_profile, shipped_profile_path

    path = shipped_profile_path(gpu_id)
    if path == DEFAULT_PROFILE:
        return {}
    return {k: c.value for k, c in read_profile(path).step_time.items() if c.fitted}


def _started(free: list, values: dict[str, float]) -> list:
    return [f.starting_at(values[f.name]) if f.name in values else f for f in free]


def _replay_error(points: list) -> float:
    """What a round is judged by: the full replay's median |error| per metric, weighted as the search weighs them
    (WEIGHTS: TTFT twice TPOT). The surrogate's loss can fall while the replay's errors grow, when the per-run
    corrections go stale."""
    import numpy as np

    if not points:
        return math.inf
    return sum(w * float(np.median([abs(p[k] / m[k] - 1.0) for _, m, p in points])) for k, w in WEIGHTS.items())


def _model_for(case: Case, coefficients):
    from ..pipeline import step_time_model

    return step_time_model(case.resolved, coefficients=coefficients, table_tokens=64)


def _replayed(cases: list[Case], draft: CalibrationProfile) -> tuple[list[Case], list, list[str]]:
    """Every case replayed with the draft profile: the points, and each case's account corrected to its replay."""
    coefficients = draft.coefficients()
    out, points, failed = [], [], []
    for case in cases:
        got = replay(case.run, calibration=draft)
        if got.tpot_ms is None or got.ttft_ms is None:
            failed.append(f"{case.run.label}\t{got.note}")
            out.append(case)
            continue
        replayed = {"mean_tpot_ms": got.tpot_ms, "mean_ttft_ms": got.ttft_ms}
        response_s = response_delay_s(case, coefficients)
        account = surrogate(case, _model_for(case, coefficients), coefficients.host_overhead_s, response_s)
        out.append(corrected(case, account, replayed, response_s))
        points.append((case.run.label, _measured(case.run), replayed))
    return out, points, failed


def _measured(run: PublishedRun) -> dict[str, float]:
    return {"mean_tpot_ms": run.tpot_ms, "mean_ttft_ms": run.ttft_ms}


def _async(resolved, run: PublishedRun) -> bool:
    from ..sim.settings import async_scheduling
    from ..sim.versions import behaviour_for

    return async_scheduling(resolved.value("async_scheduling"), behaviour_for(run.release))


def _cases(runs: list[PublishedRun]) -> tuple[list[Case], list[str]]:
    cases, skipped = [], []
    for run in runs:
        try:
            resolved = resolve_run(run)
        except ReaderError as exc:
            skipped.append(f"{run.label}\t{exc.message}")
            continue
        budget = resolved.value("max_num_batched_tokens") or 8192
        wfmt = _model_for(Case(run=run, resolved=resolved, budget=int(budget)), None).wfmt
        cases.append(Case(run=run, resolved=resolved, budget=int(budget), overlapped=_async(resolved, run),
                          lowbit_compute=wfmt.fp8_compute or wfmt.fp4_compute))
    return cases, skipped
