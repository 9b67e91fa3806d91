"""Trying changes: each set of flags re-resolved, checked, sized and simulated, in parallel processes.

Shared by the what-ifs, the sweep and the plan (whose changes also move the GPU type and count and
the traffic one replica sees). The base scenario reaches local workers by fork (a module global set
before the pool starts), so only the changes travel to them; with `ray` (an address, or "auto") the
same trials run as tasks on an existing Ray cluster (`ray_trials.py`), their results in the same order.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any, Callable, Iterable, Literal, Optional

from pydantic import BaseModel

from ..errors import ReaderError
from ..evidence.from_sim import from_simulation
from ..evidence.model import Evidence
from .metrics import Metrics
from .scenario import Change, Scenario, rebuild

RuleErrors = Callable[[Any], list[str]]
Status = Literal["simulated", "rejected_by_rules", "does_not_start", "invalid", "no_effect", "stopped"]


class Trial(BaseModel):
    status: Status
    why_not: Optional[str] = None
    metrics: Optional[Metrics] = None
    evidence: Optional[Evidence] = None  # what limited the simulated run, step by step


_BASE: Optional[Scenario] = None


def try_changes(base: Scenario, changes: "list[dict[str, Any]] | list[Change]", rule_errors: RuleErrors,
                workers: Optional[int] = None, skip_no_effect: bool = False, ray: Optional[str] = None,
                done: Optional[Callable[[int, int], None]] = None) -> list[Trial]:
    """One Trial per set of changes. skip_no_effect: a change that leaves the simulation's inputs as
    they were is reported as "no_effect" instead of simulated again (the what-ifs, which already
    hold the base's result; a sweep wants every point measured). done(trials finished, trials) is called
    as each finishes (in order; not on Ray)."""
    global _BASE
    if ray is not None and changes:
        from .ray_trials import on_ray

        return on_ray(ray, base, list(changes), rule_errors, skip_no_effect)
    _BASE = base
    jobs = [(c, rule_errors, skip_no_effect) for c in changes]
    workers = workers if workers is not None else min(len(jobs), os.cpu_count() or 1)
    try:
        if workers <= 1 or len(jobs) <= 1:
            return _counted((_trial(job) for job in jobs), len(jobs), done)
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as pool:
            return _counted(pool.map(_trial, jobs), len(jobs), done)
    finally:
        _BASE = None


def _counted(trials: Iterable[Trial], total: int, done: Optional[Callable[[int, int], None]]) -> list[Trial]:
    out = []
    for trial in trials:
        out.append(trial)
        if done is not None:
            done(len(out), total)
    return out


def _trial(job: tuple["dict[str, Any] | Change", RuleErrors, bool]) -> Trial:
    assert _BASE is not None
    return run_trial(_BASE, *job)


def run_trial(base: Scenario, changes: "dict[str, Any] | Change", rule_errors: RuleErrors,
              skip_no_effect: bool = False) -> Trial:
    scenario, refused = prepare(base, changes, rule_errors)
    if refused is not None:
        return refused
    if skip_no_effect and same_simulation(base, scenario):
        return Trial(status="no_effect", why_not="the KV blocks, scheduler settings and step times come out the same "
                                                 "(every request of the workload fits either way)")
    stop = changes.stop_beyond_ms if isinstance(changes, Change) else None
    result = scenario.run(stop_beyond_ms=stop)
    if result.stopped is not None:
        return Trial(status="stopped", why_not=result.stopped)
    return Trial(status="simulated", metrics=Metrics.of(result, int(scenario.capacity.gpu_kv_cache_tokens.value)),
                 evidence=from_simulation(result))


def prepare(base: Scenario, changes: "dict[str, Any] | Change", rule_errors: RuleErrors
            ) -> tuple[Optional[Scenario], Optional[Trial]]:
    """The changed scenario, ready to simulate; or the Trial that says why it cannot be (the change is
    invalid, vLLM's rules refuse it, or it would not start)."""
    try:
        scenario = rebuild(base, changes)
    except ReaderError as err:
        return None, Trial(status="invalid", why_not=err.message)
    errors = rule_errors(scenario.resolved)
    if errors:
        return scenario, Trial(status="rejected_by_rules", why_not="; ".join(errors))
    if not scenario.starts:
        return scenario, Trial(status="does_not_start", why_not=scenario.capacity.startup_error.message)
    return scenario, None


def same_simulation(a: Scenario, b: Scenario) -> bool:
    """Whether simulating b must give a's result: the same scheduler settings, step-time model and host times.
    max_model_len only matters to requests longer than it (stopped or refused), so two values that
    both hold the workload's longest request count as equal."""
    if a.settings is None or b.settings is None or a.step_time.key != b.step_time.key:
        return False
    if a.host_times != b.host_times:  # e.g. --api-server-count: the front end's share of the work
        return False
    longest = a.workload.longest_request + 1 + _lookahead(a)
    sa, sb = a.settings.model_dump(), b.settings.model_dump()
    if all(s["max_model_len"] is not None and s["max_model_len"] >= longest for s in (sa, sb)):
        sa["max_model_len"] = sb["max_model_len"] = None
    return sa == sb


def _lookahead(s: Scenario) -> int:
    spec = s.settings.speculative if s.settings is not None else None
    return spec.num_speculative_tokens + 1 if spec is not None else 0
