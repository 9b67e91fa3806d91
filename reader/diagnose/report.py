"""The diagnosis as data: what the renderers print and the JSON schema describes.

Versioned: `schema_version` changes whenever a field changes meaning or disappears.
"""
from __future__ import annotations

from typing import Any, Optional

from pydantic import BaseModel, Field

from ..calibration.select import CalibrationUse
from ..evidence.compare import Comparison
from ..evidence.model import Evidence
from ..evidence.verdict import Verdict
from .loadcurve import LoadCurve
from .metrics import Metrics
from .whatif import WhatIf

SCHEMA_VERSION = 2


class FindingRef(BaseModel):
    rule: str
    severity: str
    message: str
    fix: Optional[str] = None
    file: Optional[str] = None
    line: Optional[int] = None


class SettingRow(BaseModel):
    setting: str
    value: Any = None
    origin: str
    why: str = ""
    source: str = ""


class CapacitySummary(BaseModel):
    weights_gib: Optional[float] = None
    available_kv_gib: Optional[float] = None
    kv_bytes_per_token: Optional[float] = None
    num_gpu_blocks: Optional[int] = None
    kv_cache_tokens: Optional[int] = None
    max_concurrency_at_max_len: Optional[float] = None
    requests_at_mean_context: Optional[float] = None
    requests_at_p99_context: Optional[float] = None
    startup_error: Optional[str] = None
    estimated_max_model_len: Optional[int] = None
    log_lines: list[str] = Field(default_factory=list)


class ModeRow(BaseModel):
    mode: str
    label: str
    metrics: Metrics


class Series(BaseModel):
    t_s: list[float] = Field(default_factory=list)
    kv_usage_pct: list[float] = Field(default_factory=list)
    running: list[float] = Field(default_factory=list)
    waiting: list[float] = Field(default_factory=list)


class WorkloadSummary(BaseModel):
    description: str
    num_requests: int
    prompt_mean: float
    prompt_p99: float
    output_mean: float
    output_p99: float
    default_used: bool = False


class Diagnosis(BaseModel):
    schema_version: int = SCHEMA_VERSION
    tool: str = "vllm-reader"
    tool_version: str
    source: str
    form: str
    vllm_version: str
    vllm_version_origin: str
    engine: str
    model: Optional[str] = None
    model_given: Optional[str] = None
    gpu: Optional[str] = None
    gpu_count: int
    starts: bool
    verdict: Verdict
    findings: list[FindingRef] = Field(default_factory=list)
    capacity: CapacitySummary = Field(default_factory=CapacitySummary)
    workload: Optional[WorkloadSummary] = None
    slos_ms: dict[str, float] = Field(default_factory=dict)
    baseline: Optional[Metrics] = None
    evidence: Optional[Evidence] = None  # what the baseline simulation saw (the verdict's input)
    # A running server's evidence (its metrics, or its log) and the prediction set beside it, row by row.
    observed: Optional[Evidence] = None
    observed_verdict: Optional[Verdict] = None  # the same scoring rules on what the server showed
    comparison: Optional[Comparison] = None
    series: Optional[Series] = None
    modes: list[ModeRow] = Field(default_factory=list)
    # The workload's shape at rising load: the capacity within the SLOs and the order in which the defaults bind.
    load_curve: Optional[LoadCurve] = None
    whatifs: list[WhatIf] = Field(default_factory=list)
    settings: list[SettingRow] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    calibration: Optional[CalibrationUse] = None  # where the step times come from, and how well that fitted
    notes: list[str] = Field(default_factory=list)

    @property
    def recommendation(self) -> Optional[WhatIf]:
        return next((w for w in self.whatifs if w.recommended), None)
