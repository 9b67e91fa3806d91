"""`diagnose CONFIG --log LOG`: the log's measurements beside the diagnosis's prediction, in the diagnosis's one
observed-beside-predicted comparison (reader/evidence/compare.py). The prediction is the config's own (estimated
memory, simulated load); the observation is what the log printed: memory terms at start-up, stats while serving."""
from __future__ import annotations

from typing import Any

from ..capacity.api import compute_capacity
from ..evidence.compare import compare
from ..evidence.model import Evidence
from ..pipeline import capacity_request
from ..logs.evidence import log_evidence, memory_figures
from ..logs.reading import LogReading


def attach_log(diagnosis: Any, resolved: Any, reading: LogReading) -> None:
    """Set the diagnosis's observed Evidence and its comparison from a log."""
    predicted = diagnosis.evidence.model_copy(deep=True) if diagnosis.evidence is not None else Evidence(
        source="simulation", description="no simulation (the configuration does not start)")
    capacity = compute_capacity(capacity_request(resolved, measured=False))
    predicted.figures = list(predicted.figures) + memory_figures(capacity)
    if predicted.kv_cache_tokens is None:
        predicted.kv_cache_tokens = int(capacity.gpu_kv_cache_tokens.value)
    if predicted.num_gpu_blocks is None:
        predicted.num_gpu_blocks = int(capacity.num_gpu_blocks.value)
    observed = log_evidence(reading)
    reasons = {}
    if reading.kv.device == "CPU":
        reasons["memory"] = (
            "the log is of vLLM's CPU backend (KV memory set by VLLM_CPU_KVCACHE_SPACE, 128-token blocks), the "
            f"prediction of {resolved.gpu.id if resolved.gpu else 'a GPU'}")
    elif resolved.gpu_assumed:
        reasons["memory"] = (f"the GPU was not given and {resolved.gpu.id} was assumed: the log's device may be another "
                             "one (give --gpu)")
    notes = [f"{reading.source}: {n}" for n in reading.notes]
    if reading.stats:
        notes.append("the stats lines reflect the load the server had; the simulation runs the workload given here "
                     "(the chat preset unless --workload says otherwise), so load-dependent rows agree only when the "
                     "two loads match")
    comparison = compare(predicted, observed, reasons=reasons, notes=notes)
    for row in comparison.rows:
        if row.key in _not_in_log(reading):
            row.observed, row.difference, row.agrees, row.exact = None, None, None, False
    if diagnosis.comparison is not None:  # --metrics too: its rows stand, the log adds what only it measured
        known = {row.key for row in diagnosis.comparison.rows}
        diagnosis.comparison.rows.extend(r for r in comparison.rows if r.group == "memory" and r.key not in known)
        diagnosis.comparison.notes.extend(n for n in notes if n not in diagnosis.comparison.notes)
        return
    diagnosis.observed = observed
    diagnosis.comparison = comparison
    if reading.stats:
        from .scenario import slos_from
        from ..evidence.verdict import decide

        diagnosis.observed_verdict = decide(observed, slos_from(resolved), None)


def _not_in_log(reading: LogReading) -> set[str]:
    """Rows whose observed value Evidence holds as a count (0 when nothing was seen) but a log cannot give:
    no line counts finished requests, and only V0 warns of preemptions (the first and every 50th after it),
    so a log without warnings says nothing about them under V1, nor under V0 before it served anything."""
    keys = {"load.requests"}
    if not reading.preemptions.warnings and (reading.engine != "v0" or not reading.stats):
        keys.add("sched.preemptions")
    return keys
