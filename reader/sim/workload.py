"""Workloads: when requests arrive, how long their prompts and outputs are, what they share.

A `WorkloadSpec` (YAML/JSON, or a named preset with overrides) is turned into a `Workload`: one
row per request with its arrival time, prompt and output length, shared-prefix group and
priority. Arrivals follow `vllm bench serve`: Poisson or gamma inter-arrival times at a rate
(`burstiness` is the gamma shape, 1 = Poisson), optionally capped at `concurrency` requests in
flight (`--max-concurrency`: a request is sent when it has arrived *and* a slot is free, and its
latency is measured from then), or a closed loop (`process: closed`: all requests are ready at
t=0 and `concurrency` of them are in flight at any time). Trace files give the rows directly.

Presets (parameters are typical shapes, not measurements; override any field):

- chat: lognormal prompts (median 600, sigma 0.8, 16..8000) and outputs (median 250, sigma 0.7,
  8..2000), 30% of each prompt shared within 8 system-prompt groups, Poisson 5 req/s, 1000 requests.
- rag (long-context RAG): lognormal prompts (median 6000, sigma 0.4, 1000..30000), outputs
  (median 200, sigma 0.5, 16..1000), 5% shared within 4 groups, Poisson 1 req/s, 500 requests.
- summarization (batch summarization): normal prompts (mean 3000, sd 800, 500..8000) and outputs
  (mean 300, sd 80, 50..800), all requests at t=0 ("burst"), 1000 requests.
- code (code completion): lognormal prompts (median 1500, sigma 0.6, 64..8000), outputs (median
  60, sigma 0.8, 4..512), 50% shared within 16 repository groups, Poisson 10 req/s, 2000 requests.
"""
from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import ReaderError
from .settings import validate_model


class LengthSpec(BaseModel):
    """A token-length distribution; a bare integer means `fixed`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    dist: Literal["fixed", "uniform", "normal", "lognormal", "empirical"]
    value: int | None = Field(default=None, ge=1)
    low: int | None = Field(default=None, ge=1)
    high: int | None = Field(default=None, ge=1)
    mean: float | None = Field(default=None, gt=0)
    std: float | None = Field(default=None, ge=0)
    median: float | None = Field(default=None, gt=0)
    sigma: float | None = Field(default=None, ge=0)
    values: list[int] | None = None
    weights: list[float] | None = None
    min: int = Field(default=1, ge=1)
    max: int | None = Field(default=None, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, int) and not isinstance(data, bool):
            return {"dist": "fixed", "value": data}
        return data

    @model_validator(mode="after")
    def _check(self) -> "LengthSpec":
        need = {"fixed": ("value",), "uniform": ("low", "high"), "normal": ("mean", "std"),
                "lognormal": ("median", "sigma"), "empirical": ("values",)}[self.dist]
        missing = [k for k in need if getattr(self, k) is None]
        if missing:
            raise ValueError(f"dist '{self.dist}' needs {', '.join(missing)}")
        if self.dist == "uniform" and self.low > self.high:
            raise ValueError("uniform needs low <= high")
        if self.dist == "empirical":
            if not self.values or any(v < 1 for v in self.values):
                raise ValueError("empirical needs a non-empty list of positive values")
            if self.weights is not None and (len(self.weights) != len(self.values) or sum(self.weights) <= 0
                                             or any(w < 0 for w in self.weights)):
                raise ValueError("weights must be non-negative, one per value, not all zero")
        if self.max is not None and self.max < self.min:
            raise ValueError("max must be >= min")
        return self

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.dist == "fixed":
            x = np.full(n, float(self.value))
        elif self.dist == "uniform":
            x = rng.integers(self.low, self.high + 1, size=n).astype(float)
        elif self.dist == "normal":
            x = rng.normal(self.mean, self.std, size=n)
        elif self.dist == "lognormal":
            x = rng.lognormal(math.log(self.median), self.sigma, size=n)
        else:
            p = None
            if self.weights is not None:
                w = np.asarray(self.weights, dtype=float)
                p = w / w.sum()
            x = rng.choice(np.asarray(self.values, dtype=float), size=n, p=p)
        x = np.rint(x)
        return np.clip(x, self.min, self.max if self.max is not None else None).astype(np.int64)


class ArrivalSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    process: Literal["poisson", "gamma", "closed", "burst"] = "poisson"
    rate: float | None = Field(default=None, gt=0)          # requests per second
    burstiness: float = Field(default=1.0, gt=0)            # gamma shape (vllm bench --burstiness)
    concurrency: int | None = Field(default=None, ge=1)     # in flight at most (closed loop / --max-concurrency)

    @model_validator(mode="after")
    def _check(self) -> "ArrivalSpec":
        if self.process in ("poisson", "gamma") and self.rate is None:
            raise ValueError(f"process '{self.process}' needs a rate (requests per second)")
        if self.process == "closed" and self.concurrency is None:
            raise ValueError("process 'closed' needs a concurrency")
        return self


class PrefixSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    fraction: float = Field(ge=0.0, le=1.0)   # share of each prompt that is its group's common prefix
    groups: int = Field(default=1, ge=1)


class WorkloadSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    preset: str | None = None
    num_requests: int = Field(default=1000, ge=1)
    seed: int = 0
    arrival: ArrivalSpec = ArrivalSpec(process="burst")
    prompt_len: LengthSpec | None = None
    output_len: LengthSpec | None = None
    shared_prefix: PrefixSpec | None = None
    # JSONL or CSV file, relative to the workload file; num_requests, if given, keeps the first N
    trace: str | None = None
    # whose load this is: one replica's (as simulated), or the whole service's, split between its replicas
    scope: Literal["replica", "service"] = "replica"

    @model_validator(mode="after")
    def _check(self) -> "WorkloadSpec":
        if self.trace is None and (self.prompt_len is None or self.output_len is None):
            raise ValueError("a workload needs prompt_len and output_len (or a trace file)")
        return self


PRESETS: dict[str, dict[str, Any]] = {
    "chat": {
        "num_requests": 1000,
        "arrival": {"process": "poisson", "rate": 5.0},
        "prompt_len": {"dist": "lognormal", "median": 600.0, "sigma": 0.8, "min": 16, "max": 8000},
        "output_len": {"dist": "lognormal", "median": 250.0, "sigma": 0.7, "min": 8, "max": 2000},
        "shared_prefix": {"fraction": 0.3, "groups": 8},
    },
    "rag": {
        "num_requests": 500,
        "arrival": {"process": "poisson", "rate": 1.0},
        "prompt_len": {"dist": "lognormal", "median": 6000.0, "sigma": 0.4, "min": 1000, "max": 30000},
        "output_len": {"dist": "lognormal", "median": 200.0, "sigma": 0.5, "min": 16, "max": 1000},
        "shared_prefix": {"fraction": 0.05, "groups": 4},
    },
    "summarization": {
        "num_requests": 1000,
        "arrival": {"process": "burst"},
        "prompt_len": {"dist": "normal", "mean": 3000.0, "std": 800.0, "min": 500, "max": 8000},
        "output_len": {"dist": "normal", "mean": 300.0, "std": 80.0, "min": 50, "max": 800},
    },
    "code": {
        "num_requests": 2000,
        "arrival": {"process": "poisson", "rate": 10.0},
        "prompt_len": {"dist": "lognormal", "median": 1500.0, "sigma": 0.6, "min": 64, "max": 8000},
        "output_len": {"dist": "lognormal", "median": 60.0, "sigma": 0.8, "min": 4, "max": 512},
        "shared_prefix": {"fraction": 0.5, "groups": 16},
    },
}
PRESET_ALIASES = {"long-context-rag": "rag", "long_context_rag": "rag", "batch-summarization": "summarization",
                  "batch_summarization": "summarization", "code-completion": "code", "code_completion": "code"}


@dataclass
class Workload:
    """Concrete requests, one row each, ordered by arrival."""

    arrival: np.ndarray        # seconds
    prompt_len: np.ndarray
    output_len: np.ndarray
    prefix_group: np.ndarray   # -1: no shared prefix
    prefix_len: np.ndarray     # tokens of the prompt that come from the group's common prefix
    priority: np.ndarray
    max_concurrency: int | None
    description: str = ""

    @property
    def num_requests(self) -> int:
        return int(self.arrival.size)

    def head(self, n: int) -> "Workload":
        """The first n requests (by arrival)."""
        return Workload(self.arrival[:n], self.prompt_len[:n], self.output_len[:n], self.prefix_group[:n],
                        self.prefix_len[:n], self.priority[:n], self.max_concurrency,
                        description=f"{self.description} (first {n})")

    @property
    def longest_request(self) -> int:
        return int((self.prompt_len + self.output_len).max())

    @property
    def offered_rate(self) -> float | None:
        """Open-loop arrivals per second as drawn (a Poisson draw of a few hundred strays from its nominal rate by
        several percent); None for a closed loop or a burst, which offer no rate."""
        if self.max_concurrency is not None or self.arrival.size < 2:
            return None
        span = float(self.arrival[-1] - self.arrival[0])
        return (self.arrival.size - 1) / span if span > 0 else None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_workload(source: str | os.PathLike | dict[str, Any] | WorkloadSpec) -> WorkloadSpec:
    """A workload from a YAML/JSON file, a trace file (.jsonl/.csv), a dict, or a preset name
    ('chat', 'rag', 'summarization', 'code')."""
    if isinstance(source, WorkloadSpec):
        return source
    file = None
    base_dir = None
    if isinstance(source, (str, os.PathLike)):
        text = str(source)
        name = PRESET_ALIASES.get(text, text)
        if name in PRESETS and not os.path.exists(text):
            data: Any = {"preset": name}
        elif text.endswith((".jsonl", ".csv")):
            data = {"trace": os.path.abspath(text)}
        else:
            file = text
            base_dir = os.path.dirname(os.path.abspath(text))
            data = _read_mapping(text)
    else:
        data = source
    if not isinstance(data, dict):
        raise ReaderError("a workload is a mapping of keys (num_requests, arrival, prompt_len, ...).", file=file)
    preset = data.get("preset")
    if preset is not None:
        key = PRESET_ALIASES.get(str(preset), str(preset))
        if key not in PRESETS:
            raise ReaderError(f"unknown workload preset '{preset}' (known: {', '.join(PRESETS)}).",
                              file=file, key="preset")
        data = _merge(PRESETS[key], data)
        data["preset"] = key
    spec = validate_model(WorkloadSpec, data, file=file)
    if spec.trace and base_dir and not os.path.isabs(spec.trace):
        spec = spec.model_copy(update={"trace": os.path.join(base_dir, spec.trace)})
    return spec


def _read_mapping(path: str) -> Any:
    try:
        with open(path) as f:
            text = f.read()
    except OSError as err:
        raise ReaderError(f"cannot read the workload file: {err.strerror}.", file=path) from None
    try:
        return json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        mark = getattr(err, "problem_mark", None)
        line = getattr(err, "lineno", None) or (mark.line + 1 if mark is not None else None)
        raise ReaderError(f"not valid {'JSON' if path.endswith('.json') else 'YAML'}.", file=path, line=line) from None


def generate(spec: WorkloadSpec, seed: int | None = None) -> Workload:
    """Draw the requests of a workload (deterministic for a seed; default: the spec's own)."""
    if spec.trace:
        wl = read_trace(spec.trace, max_concurrency=spec.arrival.concurrency)
        if "num_requests" in spec.model_fields_set and spec.num_requests < wl.num_requests:
            wl = wl.head(spec.num_requests)
        return wl
    rng = np.random.default_rng(spec.seed if seed is None else seed)
    n = spec.num_requests
    arrival = _arrivals(spec.arrival, n, rng)
    prompt = spec.prompt_len.sample(rng, n)
    output = spec.output_len.sample(rng, n)
    group = np.full(n, -1, dtype=np.int64)
    plen = np.zeros(n, dtype=np.int64)
    if spec.shared_prefix is not None and spec.shared_prefix.fraction > 0:
        group = rng.integers(0, spec.shared_prefix.groups, size=n).astype(np.int64)
        plen = np.floor(prompt * spec.shared_prefix.fraction).astype(np.int64)
    conc = spec.arrival.concurrency
    return Workload(arrival, prompt, output, group, plen, np.zeros(n, dtype=np.int64), conc,
                    description=describe(spec))


def _arrivals(a: ArrivalSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    if a.process in ("closed", "burst"):
        return np.zeros(n)
    if a.process == "poisson":
        gaps = rng.exponential(1.0 / a.rate, size=n)
    else:
        gaps = rng.gamma(a.burstiness, 1.0 / (a.rate * a.burstiness), size=n)
    gaps[0] = 0.0  # the first request is sent at once, as vllm bench does
    return np.cumsum(gaps)


def describe(spec: WorkloadSpec) -> str:
    a = spec.arrival
    if a.process == "closed":
        arr = f"closed loop, {a.concurrency} in flight"
    elif a.process == "burst":
        arr = "all at t=0" + (f", at most {a.concurrency} in flight" if a.concurrency else "")
    else:
        arr = f"{a.process} {a.rate:g} req/s" + (f", at most {a.concurrency} in flight" if a.concurrency else "")
    name = f"preset {spec.preset}: " if spec.preset else ""
    return f"{name}{spec.num_requests} requests, {arr}"


# ---- trace files --------------------------------------------------------------------------------
_TRACE_FIELDS = ("arrival_time", "prompt_len", "output_len", "prefix_group", "prefix_len", "priority")


def read_trace(path: str, max_concurrency: int | None = None) -> Workload:
    """A JSONL or CSV trace: arrival_time (s), prompt_len, output_len, optional prefix_group,
    prefix_len (tokens shared within the group; default the whole prompt), priority."""
    rows: list[tuple[int, dict[str, Any]]] = []
    try:
        with open(path, newline="") as f:
            if path.endswith(".csv"):
                reader = csv.DictReader(f)
                if not reader.fieldnames:
                    raise ReaderError("empty CSV trace.", file=path)
                for i, row in enumerate(reader, start=2):
                    rows.append((i, {k.strip(): v for k, v in row.items() if k and v not in (None, "")}))
            else:
                for i, line in enumerate(f, start=1):
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                    except json.JSONDecodeError as err:
                        raise ReaderError(f"not valid JSON ({err.msg}).", file=path, line=i) from None
                    if not isinstance(obj, dict):
                        raise ReaderError("each line must be a JSON object.", file=path, line=i)
                    rows.append((i, obj))
    except OSError as err:
        raise ReaderError(f"cannot read the trace file: {err.strerror}.", file=path) from None
    if not rows:
        raise ReaderError("the trace has no requests.", file=path)
    n = len(rows)
    arrival = np.zeros(n)
    prompt = np.zeros(n, dtype=np.int64)
    output = np.zeros(n, dtype=np.int64)
    group = np.full(n, -1, dtype=np.int64)
    plen = np.zeros(n, dtype=np.int64)
    prio = np.zeros(n, dtype=np.int64)
    groups: dict[str, int] = {}
    for j, (line, row) in enumerate(rows):
        unknown = sorted(set(row) - set(_TRACE_FIELDS))
        if unknown:
            raise ReaderError(f"unknown field '{unknown[0]}' (fields: {', '.join(_TRACE_FIELDS)}).",
                              file=path, line=line, key=unknown[0])
        arrival[j] = _num(row, "arrival_time", float, path, line, low=0.0)
        prompt[j] = _num(row, "prompt_len", int, path, line, low=1)
        output[j] = _num(row, "output_len", int, path, line, low=1)
        prio[j] = _num(row, "priority", int, path, line, default=0)
        if "prefix_group" in row:
            g = str(row["prefix_group"])
            group[j] = groups.setdefault(g, len(groups))
            plen[j] = min(_num(row, "prefix_len", int, path, line, low=0, default=int(prompt[j])), int(prompt[j]))
    order = np.argsort(arrival, kind="stable")
    return Workload(arrival[order], prompt[order], output[order], group[order], plen[order], prio[order],
                    max_concurrency, description=f"trace {os.path.basename(path)}: {n} requests")


def _num(row: dict[str, Any], key: str, kind, path: str, line: int, *, low=None, default=None):
    if key not in row:
        if default is not None:
            return default
        raise ReaderError(f"missing '{key}'.", file=path, line=line, key=key)
    raw = row[key]
    try:
        if kind is int:
            value = float(raw)
            if not value.is_integer():
                raise ValueError
            value = int(value)
        else:
            value = float(raw)
        if isinstance(raw, bool) or not math.isfinite(value):
            raise ValueError
    except (TypeError, ValueError):
        raise ReaderError(f"'{key}' must be {'an integer' if kind is int else 'a number'} (got {raw!r}).",
                          file=path, line=line, key=key) from None
    if low is not None and value < low:
        raise ReaderError(f"'{key}' must be >= {low} (got {raw!r}).", file=path, line=line, key=key)
    return value
