"""Version-dependent memory behaviour of vLLM, one table (data/vllm_memory.yaml), keyed by version range."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Iterator

import yaml

from ..errors import ReaderError
from ..versions import VersionRange, VersionTuple, parse_version


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    text = resources.files("reader.capacity").joinpath("data/vllm_memory.yaml").read_text()
    return yaml.safe_load(text)


@dataclass(frozen=True)
class Fact:
    value: Any
    source: str
    verified: bool = True


def behaviour(name: str, version: VersionTuple, engine: str | None = None, family: str | None = None) -> Fact:
    """The value of behaviour `name` at `version` (and engine 'v0'/'v1', or a model family, where it
    depends on it; a row without `family` applies to every family)."""
    for row in _table()["behaviour"][name]:
        if engine is not None and row.get("engine", engine) != engine:
            continue
        if row.get("family", family) != family:
            continue
        if VersionRange.parse(row["versions"]).contains(version):
            return Fact(row["value"], row["source"], bool(row.get("verified", True)))
    raise ReaderError(f"no '{name}' behaviour known for vLLM {version}", key="vllm_version")


_TRIAL: dict[str, float] = {}


def estimate(name: str) -> Fact:
    if name in _TRIAL:
        return Fact(_TRIAL[name], "trial value of a fit (reader/fitting/fit_memory.py)")
    row = _table()["estimates"][name]
    return Fact(row["value"], row["source"])


@contextmanager
def trial_estimates(values: dict[str, float]) -> Iterator[None]:
    """Other values for some estimates while a fit tries them; the table is untouched."""
    saved = dict(_TRIAL)
    _TRIAL.update(values)
    try:
        yield
    finally:
        _TRIAL.clear()
        _TRIAL.update(saved)


def version_tuple(text: str) -> VersionTuple:
    try:
        return parse_version(text)
    except ValueError:
        raise ReaderError(f"'{text}' is not a vLLM version", key="vllm_version") from None
