"""A diagnosis as SARIF 2.1.0: the rule findings, a start-up failure, SLO misses and the verdict."""
from __future__ import annotations

from typing import Any

from .. import __version__
from ..diagnose.report import Diagnosis
from .evidence_view import observed, quantity

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
# Which setting each verdict is about, to point at its line.
_VERDICT_KEYS = {"kv_memory": "gpu_memory_utilization", "admission": "max_num_seqs",
                 "budget_small": "max_num_batched_tokens", "budget_large": "max_num_batched_tokens"}


def sarif(d: Diagnosis) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for f in d.findings:
        rules.setdefault(f.rule, {"id": f.rule, "shortDescription": {"text": f.message[:120]}})
        results.append(_result(f.rule, _LEVEL.get(f.severity, "note"), f.message + (f" Fix: {f.fix}" if f.fix else ""),
                               f.file or d.source, f.line))
    if d.capacity.startup_error:
        rules.setdefault("DX100", {"id": "DX100", "shortDescription": {"text": "vLLM would fail at start-up (memory)"}})
        results.append(_result("DX100", "error", d.capacity.startup_error, d.source, None))
    for check in d.verdict.slo:
        if not check.met:
            rules.setdefault("DX200", {"id": "DX200", "shortDescription": {"text": "a latency SLO is missed"}})
            results.append(_result("DX200", "warning", f"{check.metric.upper()} P99 simulated {check.p99_ms:.1f} ms "
                                   f"exceeds the {check.target_ms:.0f} ms target", d.source, None))
    if d.comparison is not None:
        for row in d.comparison.disagreements:
            rules.setdefault("DX400", {"id": "DX400", "shortDescription": {
                "text": "the prediction is off from what the running server showed"}})
            results.append(_result("DX400", "note", f"{row.label}: predicted {quantity(row.predicted, row.unit)}, "
                                   f"observed {observed(row)}. Likely: {row.if_off}.", d.source, None))
    rules.setdefault("DX300", {"id": "DX300", "shortDescription": {"text": "the limiting default"}})
    line = _line_of(d, _VERDICT_KEYS.get(d.verdict.limit))
    results.append(_result("DX300", "note", f"{d.verdict.default}: {d.verdict.headline}", d.source, line))
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "vllm-reader", "version": __version__,
                                      "informationUri": "https://github.com/vllm-reader/vllm-reader",
                                      "rules": list(rules.values())}},
                  "results": results}],
    }


def _line_of(d: Diagnosis, key: Any) -> Any:
    return None if key is None else next((f.line for f in d.findings if f.line and key in f.message), None)


def _result(rule: str, level: str, text: str, file: str, line: Any) -> dict[str, Any]:
    region = {"startLine": int(line)} if line else None
    physical: dict[str, Any] = {"artifactLocation": {"uri": file}}
    if region:
        physical["region"] = region
    return {"ruleId": rule, "level": level, "message": {"text": text}, "locations": [{"physicalLocation": physical}]}
