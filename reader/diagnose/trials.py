"""Trying changes: each set of flags re-resolved, checked, sized and simulated, in parallel processes.

Shared by the what-ifs and the sweep. The base scenario reaches the workers by fork (a module global
set before the pool starts), so only the changes travel to them.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any, Callable, Literal, Optional

from pydantic import BaseModel

from ..errors import ReaderError
from .metrics import Metrics
from .scenario import Scenario, rebuild

RuleErrors = Callable[[Any], list[str]]


class Trial(BaseModel):
    status: Literal["simulated", "rejected_by_rules", "does_not_start", "invalid"]
    why_not: Optional[str] = None
    metrics: Optional[Metrics] = None


_BASE: Optional[Scenario] = None


def try_changes(base: Scenario, changes: list[dict[str, Any]], rule_errors: RuleErrors,
                workers: Optional[int] = None) -> list[Trial]:
    global _BASE
    _BASE = base
    jobs = [(c, rule_errors) for c in changes]
    workers = workers if workers is not None else min(len(jobs), os.cpu_count() or 1)
    try:
        if workers <= 1 or len(jobs) <= 1:
            return [_trial(job) for job in jobs]
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as pool:
            return list(pool.map(_trial, jobs))
    finally:
        _BASE = None


def _trial(job: tuple[dict[str, Any], RuleErrors]) -> Trial:
    changes, rule_errors = job
    base = _BASE
    assert base is not None
    try:
        scenario = rebuild(base, changes)
    except ReaderError as err:
        return Trial(status="invalid", why_not=err.message)
    errors = rule_errors(scenario.resolved)
    if errors:
        return Trial(status="rejected_by_rules", why_not="; ".join(errors))
    if not scenario.starts:
        return Trial(status="does_not_start", why_not=scenario.capacity.startup_error.message)
    result = scenario.run()
    return Trial(status="simulated", metrics=Metrics.of(result, int(scenario.capacity.gpu_kv_cache_tokens.value)))
