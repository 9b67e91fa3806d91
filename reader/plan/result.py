"""A plan as data: what the renderers print and the JSON schema describes.

Versioned: `schema_version` changes whenever a field changes meaning or disappears.
"""
from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from ..calibration.select import CalibrationUse
from ..diagnose.metrics import Metrics
from .bounds import Bounds
from .launch import Launch
from .space import layout_words

SCHEMA_VERSION = 1
Stage = Literal["search", "capacity", "target"]
Outcome = Literal["planned", "refused_by_rules", "does_not_start", "below_floor", "needs_more_gpus", "slos_missed",
                  "not_cheaper", "skipped"]


class Layout(BaseModel):
    """One replica's hardware: `tp` x `pp` GPUs of one type, the experts of a MoE model split over the tensor
    parallel ranks (vLLM's default) or held whole, one share per rank (ep: --enable-expert-parallel)."""

    gpu: str
    tp: int
    pp: int = 1
    ep: bool = False

    @property
    def layout(self) -> str:
        return layout_words(self.tp, self.pp, self.ep)

    @property
    def label(self) -> str:
        return f"{self.gpu} {self.layout}"


class Candidate(Layout):
    """One replica's configuration: its hardware and the knobs the plan set on it."""

    changes: dict[str, Any] = Field(default_factory=dict)  # knobs set on the shape (the rest: vLLM's defaults)
    settings: dict[str, Any] = Field(default_factory=dict)  # the searched knobs' values as vLLM resolves them

    @property
    def gpus(self) -> int:
        return self.tp * self.pp


class Point(BaseModel):
    """One simulation: a candidate carrying `load` (per replica, in the traffic's unit) as one of `replicas`."""

    candidate: int  # index into Plan.candidates
    replicas: int
    load: float
    stage: Stage
    status: str  # simulated, stopped (a P99 certainly over FAR_MISS x its target), rejected_by_rules, ...
    why_not: Optional[str] = None
    metrics: Optional[Metrics] = None
    meets_slos: Optional[bool] = None
    overload: Optional[float] = None  # offered / completed req/s where the queue grew (rates); None: it keeps up
    margin: Optional[float] = None  # min over the SLOs of target / P99 (>= 1: met)
    output_per_gpu: Optional[float] = None  # output tok/s per GPU of the replica
    pareto: bool = False


class ShapeResult(Layout):
    gpus: int
    outcome: Outcome
    bounds: Optional[Bounds] = None
    reason: str = ""  # its cheapest setting meeting the SLOs, or the bound or cost that rules it out
    min_replicas: Optional[int] = None  # from the rate bound, over its knob settings
    replicas: Optional[int] = None  # fewest replicas meeting the SLOs, over its knob settings
    candidate: Optional[int] = None  # its cheapest setting (vLLM's defaults until one is found)
    cost_per_hour: Optional[float] = None  # of its cheapest setting, where prices are given


class Sizing(BaseModel):
    """How many replicas, and how much one carries."""

    replicas: int
    target_load: float  # per replica, at the target
    sized_load: float  # per replica, with the headroom: what the plan required the SLOs at
    capacity: Optional[float] = None  # the highest per-replica load found to meet the SLOs
    capacity_is_lower_bound: bool = False  # every load tried met the SLOs; the true capacity is higher
    headroom_pct: Optional[float] = None  # capacity x replicas over the target, minus 1
    above_load: Optional[float] = None  # the lowest load found to miss the SLOs
    above: Optional[Metrics] = None  # what a replica does there
    above_overload: Optional[float] = None


class Choice(BaseModel):
    """A plan for one candidate: replicas, GPUs and cost."""

    candidate: int
    replicas: int
    gpus_total: int
    cost_per_hour: Optional[float] = None
    margin: Optional[float] = None
    metrics: Optional[Metrics] = None  # one replica at the sized load


class Winner(Choice):
    at_target: Optional[Metrics] = None  # one replica at the target load (no headroom)
    cost_per_million_output_tokens: Optional[float] = None
    sizing: Sizing
    launch: Launch


class SloGap(BaseModel):
    metric: str  # ttft or itl
    target_ms: float
    best_p99_ms: Optional[float] = None  # the lowest P99 any simulation reached
    floor_ms: Optional[float] = None  # the lowest floor of any shape that starts
    met_somewhere: bool = False


class Closest(BaseModel):
    """Where nothing meets the SLOs: the nearest miss, and what it would take."""

    point: Optional[int] = None  # index into Plan.points
    closest_metric: Optional[str] = None
    gaps: list[SloGap] = Field(default_factory=list)
    needs: list[str] = Field(default_factory=list)


class Traffic(BaseModel):
    kind: str  # rate, clients, batch, trace
    total: float
    unit: str
    headroom: float


class Counts(BaseModel):
    shapes: int = 0
    refused_by_rules: int = 0
    does_not_start: int = 0
    below_floor: int = 0
    needs_more_gpus: int = 0
    simulated: int = 0
    stopped_early: int = 0  # of the simulated: ended once a P99 was certainly over FAR_MISS x its target
    not_simulated: int = 0  # variants refused by the rules or failing to start, found before simulating
    admitting_all: int = 0  # trials left out: a smaller max_num_seqs already admits every request in flight


class Plan(BaseModel):
    schema_version: int = SCHEMA_VERSION
    tool: str = "vllm-reader"
    tool_version: str
    source: str  # the config planned from, or "--model"
    model: str
    vllm_version: str
    workload: str
    traffic: Traffic
    slos_ms: dict[str, float] = Field(default_factory=dict)
    seed: int
    gpus: list[str]
    max_gpus: int
    gpus_per_node: int
    prices: dict[str, float] = Field(default_factory=dict)  # USD per GPU-hour, as given with --price
    pinned: dict[str, Any] = Field(default_factory=dict)  # flags the config fixes, kept in every candidate
    candidates: list[Candidate] = Field(default_factory=list)
    shapes: list[ShapeResult] = Field(default_factory=list)
    points: list[Point] = Field(default_factory=list)
    best_per_gpu: list[Choice] = Field(default_factory=list)
    winner: Optional[Winner] = None
    closest: Optional[Closest] = None
    skipped: list[str] = Field(default_factory=list)  # what the --budget left out
    counts: Counts = Field(default_factory=Counts)
    notes: list[str] = Field(default_factory=list)
    calibration: Optional[CalibrationUse] = None  # the profile given with --calibration (None: the shipped one)
    files: dict[str, str] = Field(default_factory=dict)  # the winner's files, as `plan --write` writes them
