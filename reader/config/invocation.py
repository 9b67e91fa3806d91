"""A vLLM launch found in a file, before its flags are parsed.

Loaders (one per file form) only find launches and say what surrounds them: the argument
tokens, or the key/value entries of a `--config` YAML; the environment; the image; what the
manifest says about GPUs. They know nothing of vLLM's flags: `reader.config.load` parses.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .model import Note, SourceLoc
from .tokens import Token


@dataclass
class ConfigEntry:
    """One `key: value` of a `vllm serve --config` YAML (or a mapping that plays that role)."""

    key: str
    value: Any
    loc: Optional[SourceLoc] = None
    spelling: Optional[str] = None  # how the user wrote it, when the key was translated (e.g. "maxModelLen")


@dataclass
class Hint:
    value: Any
    origin: str  # words: "nvidia.com/gpu limit", "image tag", "GKE accelerator label"
    loc: Optional[SourceLoc] = None
    inferred: bool = False  # read from something other than the value itself (an image's build date): said so


@dataclass
class Invocation:
    form: str
    label: str  # where in the file: "line 8", "container 'vllm' in Deployment/vllm-gemma"
    entry_point: str = "vllm serve"  # or "api_server"
    tokens: list[Token] = field(default_factory=list)  # argv after `vllm serve` / `-m ...api_server`
    entries: list[ConfigEntry] = field(default_factory=list)  # config-file entries, parsed before tokens win
    env: dict[str, str] = field(default_factory=dict)
    image: Optional[str] = None
    model: Optional[Hint] = None  # a model given outside the args (KServe spec.model, Helm modelURL)
    gpu_name: Optional[Hint] = None
    gpu_count: Optional[Hint] = None
    num_nodes: Optional[Hint] = None
    replicas: Optional[Hint] = None  # copies of the launch behind one service (Deployment / LWS replicas, KServe)
    version: Optional[Hint] = None
    workload: Optional[dict[str, Any]] = None  # a benchmark's client parameters, when the file has them
    notes: list[Note] = field(default_factory=list)
    line: Optional[int] = None
    log: Optional[Any] = None  # a vLLM log's reading (reader.logs.reading.LogReading), when the source is a log
