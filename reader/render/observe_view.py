"""Render an observe report: Markdown (Jinja2), JSON (versioned schema) and SARIF 2.1.0."""
from __future__ import annotations

import math
import time
from typing import Any

from .. import __version__
from ..evidence.compare import figures
from ..evidence.model import Evidence
from ..evidence.verdict import DEFAULT_NAMES
from ..observe.names import BY_KEY
from ..observe.report import ObserveReport
from .evidence_view import quantity, view_helpers
from .formats import render_as
from .markdown import md, render
from .report import ms

def render_observation(r: ObserveReport, fmt: str = "markdown") -> str:
    return render_as(fmt, r, markdown, sarif)


def verdict_paragraph(r: ObserveReport) -> str:
    if r.verdict is None and r.traffic:
        names = ", ".join(f"`{r.names_used.get(k, k)}`" for k in r.unread)
        return (f"**No verdict: the window holds only part of what one needs.** The server did serve traffic "
                f"(its token counters grew), but {names} {'is' if len(r.unread) == 1 else 'are'} not in both the "
                f"first and the last of the {r.snapshots} {md(r.unit)} (a page cut short?): what they count is "
                "unknown here, not zero. Scrape it again and keep whole pages.")
    if r.verdict is None:
        return (f"**No verdict: there was no traffic in the window.** The server finished no request and ran no "
                f"engine step in {r.snapshots} {md(r.unit)} over {quantity(r.window_s, 's')}: observe it "
                "while it serves (a longer --window, or --until-idle while a load runs).")
    v = r.verdict
    text = f"**Verdict: {md(v.default)}.** {md(r.model_name or 'the server')}: {md(v.headline.rstrip('.'))}."
    failed = [c for c in v.slo if not c.met]
    if failed:
        text += " Misses its " + " and ".join(f"{c.metric.upper()} P99 target ({c.target_ms:.0f} ms, observed "
                                             f"{ms(c.p99_ms)})" for c in failed) + "."
    return text


def markdown(r: ObserveReport) -> str:
    older = [(BY_KEY[k].what, name) for k, name in r.names_used.items() if name != BY_KEY[k].names[0]]
    arrivals = ", ".join(f"{i.arrived:.0f}" for i in r.load.intervals[:40])
    if len(r.load.intervals) > 40:
        arrivals += f", ... ({len(r.load.intervals)} intervals)"
    return render("observe.md.j2", r=r, names=DEFAULT_NAMES, verdict_paragraph=verdict_paragraph(r),
                  figures=figures(r.evidence), older_names=older, arrivals=arrivals, ms=ms,
                  length_buckets=length_buckets, **view_helpers())


def length_buckets(ev: Evidence, key: str) -> str:
    """A length histogram's percentiles as the buckets they lie in (256-token prompts lie in 200-500: an
    interpolated 350 would be a length no request had)."""
    ranges = [ev.bucket_ranges.get(f"{key}.{name}") for name in ("median", "p90", "p99")]
    return ", ".join("unknown" if b is None else f"{quantity(b[0])} to {quantity(b[1], 'tokens')}"
                     if not math.isinf(b[1]) else f"above {quantity(b[0], 'tokens')}" for b in ranges)


_RULES = {
    "OB100": "no traffic in the observed window",
    "OB200": "a latency SLO is missed",
    "OB300": "the limiting default, as observed",
}


def sarif(r: ObserveReport) -> dict[str, Any]:
    results = []
    if r.verdict is None:
        results.append(_result("OB100", "note", verdict_paragraph(r).replace("**", ""), r.source))
    else:
        for c in r.verdict.slo:
            if not c.met:
                results.append(_result("OB200", "warning", f"{c.metric.upper()} P99 observed {ms(c.p99_ms)} exceeds "
                                       f"the {c.target_ms:.0f} ms target", r.source))
        results.append(_result("OB300", "note", f"{r.verdict.default}: {r.verdict.headline}", r.source))
    used = {res["ruleId"] for res in results}
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "vllm-reader", "version": __version__,
                                      "informationUri": "https://github.com/vllm-reader/vllm-reader",
                                      "rules": [{"id": k, "shortDescription": {"text": v}}
                                                for k, v in _RULES.items() if k in used]}},
                  "results": results,
                  "invocations": [{"executionSuccessful": True,
                                   "endTimeUtc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}],
    }


def _result(rule: str, level: str, text: str, uri: str) -> dict[str, Any]:
    return {"ruleId": rule, "level": level, "message": {"text": text},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}]}
