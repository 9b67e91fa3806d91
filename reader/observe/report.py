"""observe's report as data: what the server did in the window, and the default that limited it.

Versioned like the diagnosis: `schema_version` changes whenever a field changes meaning or disappears.
"""
from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, Field

from .. import __version__
from ..evidence.model import Evidence
from ..evidence.verdict import Verdict, decide
from .evidence import Observation, ObservedLoad, Settings, observe
from .series import window
from .sources import Collected

SCHEMA_VERSION = 1


class ObserveReport(BaseModel):
    schema_version: int = SCHEMA_VERSION
    tool: str = "vllm-reader"
    tool_version: str = __version__
    source: str
    unit: str
    model_name: Optional[str] = None
    engines: int = 1
    snapshots: int
    window_s: float
    busy_s: float
    traffic: bool
    verdict: Optional[Verdict] = None      # None: no traffic in the window, nothing to judge
    evidence: Evidence
    load: ObservedLoad
    settings: Settings = Field(default_factory=Settings)
    slos_ms: dict[str, float] = Field(default_factory=dict)
    names_used: dict[str, str] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)
    unread: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def observation(collected: Collected, settings: Settings, served_model: Optional[str] = None) -> Observation:
    obs = observe(window(collected.snapshots, served_model), settings, collected.source, collected.unit)
    obs.evidence.notes = collected.notes + obs.evidence.notes
    return obs


def build_report(collected: Collected, settings: Settings, slos_ms: dict[str, float],
                 served_model: Optional[str] = None) -> ObserveReport:
    obs = observation(collected, settings, served_model)
    # The compute ridge needs the GPU and the model, which metrics do not name: no bound is claimed.
    verdict = decide(obs.evidence, slos_ms, None) if obs.traffic and not obs.unjudged else None
    return ObserveReport(source=obs.source, unit=collected.unit, model_name=obs.model_name, engines=obs.engines,
                         snapshots=obs.snapshots, window_s=obs.window_s, busy_s=obs.busy_s, traffic=obs.traffic,
                         verdict=verdict, evidence=obs.evidence, load=obs.load, settings=settings,
                         slos_ms=dict(slos_ms), names_used=obs.names_used, missing=obs.missing, unread=obs.unread,
                         notes=list(obs.evidence.notes))
