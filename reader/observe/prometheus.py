"""A Prometheus server as a source: one range query (HTTP API /api/v1/query_range) for every vLLM series
observe reads, turned into the same snapshots a series of direct scrapes gives.

Prometheus evaluates the query at start, start+step, ..., end; each point holds a series' latest sample at
or before it, so counters and histograms compare as they do between scrapes. The labels Prometheus adds
(job, instance) stay on the samples; `--selector` narrows to one job or instance.
"""
from __future__ import annotations

import json
import re
import urllib.parse
from typing import Any

from ..errors import ReaderError
from .http import get
from .names import series_names
from .samples import Sample, Snapshot

# Prometheus refuses a range query of more than 11,000 points per series.
MAX_POINTS = 11_000
_MATCHER = re.compile(r'^\s*[A-Za-z_][A-Za-z0-9_]*\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*$')


def query(selector: str | None) -> str:
    """The PromQL series selector: every series observe reads, within the user's label matchers."""
    names = "|".join(re.escape(n) for n in series_names())
    matchers = [f'__name__=~"{names}"'] + _matchers(selector)
    return "{" + ",".join(matchers) + "}"


def _matchers(selector: str | None) -> list[str]:
    if not selector:
        return []
    text = selector.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    parts = [p for p in _split(text) if p.strip()]
    for part in parts:
        if not _MATCHER.match(part):
            raise ReaderError(f"'{part.strip()}' is not a label matcher: expected e.g. job=\"vllm\" or "
                              "instance=~\"10.0.0.1:.*\" (comma separated).", key="--selector")
    return [p.strip() for p in parts]


def _split(text: str) -> list[str]:
    """Split on commas outside quoted values."""
    parts, current, quoted, escaped = [], "", False, False
    for ch in text:
        if ch == "," and not quoted:
            parts.append(current)
            current = ""
            continue
        current += ch
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
    parts.append(current)
    return parts


def fetch_range(base: str, start: float, end: float, step: float, selector: str | None, timeout: float) -> dict:
    """The query_range answer as JSON; a Prometheus error is bad input, in Prometheus's own words."""
    if end <= start:
        raise ReaderError("the Prometheus range is empty: its end is not after its start.", key="--range")
    if (end - start) / step > MAX_POINTS:
        raise ReaderError(f"--step {step:g}s gives more than {MAX_POINTS:,} points over this range (Prometheus's "
                          "limit): use a larger --step.", key="--step")
    params = urllib.parse.urlencode({"query": query(selector), "start": f"{start:.3f}", "end": f"{end:.3f}",
                                     "step": f"{step:g}"})
    url = base.rstrip("/") + "/api/v1/query_range?" + params
    text = get(url, timeout, "the Prometheus server", error_body=True)
    return check(text, base)


def check(text: str, base: str) -> dict:
    try:
        payload = json.loads(text)
    except ValueError:
        raise ReaderError(f"{base} did not answer like a Prometheus server (its answer is not JSON).",
                          key="--prometheus") from None
    if not isinstance(payload, dict) or "status" not in payload:
        raise ReaderError(f"{base} did not answer like a Prometheus server.", key="--prometheus")
    if payload["status"] != "success":
        raise ReaderError(f"Prometheus refused the query: {payload.get('errorType', 'error')}: "
                          f"{payload.get('error', 'no reason given')}.", key="--prometheus")
    data = payload.get("data") or {}
    if data.get("resultType") != "matrix":
        raise ReaderError("Prometheus answered the range query with something other than a matrix.",
                          key="--prometheus")
    return payload


def snapshots(payload: dict[str, Any], source: str) -> list[Snapshot]:
    """One snapshot per evaluation time, holding every series that had a value then."""
    by_time: dict[float, list[Sample]] = {}
    for series in payload["data"]["result"]:
        labels = dict(series.get("metric", {}))
        name = labels.pop("__name__", None)
        if name is None:
            continue
        key = tuple(sorted(labels.items()))
        for t, value in series.get("values", []):
            by_time.setdefault(float(t), []).append(Sample(name, key, _number(value)))
    return [Snapshot(time=t, source=source, samples=by_time[t]) for t in sorted(by_time)]


def _number(value: str) -> float:
    return float(value)  # Prometheus writes NaN and +Inf as strings float() reads
