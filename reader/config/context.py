"""The context a config file does not carry, from CLI options or a `# vllm-reader:` comment block.

vLLM turns every key of a `--config` YAML into a flag, so an extra key would break the file for
vLLM. A comment does not, in YAML and in shell scripts alike, so the extension lives in one:

    # vllm-reader:
    #   vllm_version: 0.18.0
    #   gpu: H100-SXM
    #   gpu_count: 1
    #   workload: {preset: chat, rate: 4, num_requests: 500}
    #   slo: {ttft_p99_ms: 2000, itl_p99_ms: 50}
    #   set: {MODEL_ID: meta-llama/Llama-3.1-8B-Instruct}
    #   calibration: h200-profile.yaml   # relative to this file

A one-line form works too: `# vllm-reader: {gpu: L4, gpu_count: 1}`.
"""
from __future__ import annotations

import re
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ReaderError, validation_words
from .yamlsafe import load_yaml_documents

_HEADER = re.compile(r"^(?P<indent>\s*)(?:#|//|REM\s)\s*vllm-reader\s*:\s*(?P<inline>.*)$", re.I)
_COMMENT = re.compile(r"^\s*#(?P<body>.*)$")


class SLO(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ttft_p99_ms: Optional[float] = Field(default=None, gt=0)
    itl_p99_ms: Optional[float] = Field(default=None, gt=0)


class LoadOptions(BaseModel):
    """Everything the user can say besides the config file, from the CLI or the comment block."""

    model_config = ConfigDict(extra="forbid")

    vllm_version: Optional[str] = None
    gpu: Optional[str] = None
    gpu_count: Optional[int] = Field(default=None, gt=0)
    model: Optional[str] = None  # catalog id or local config.json for a model given as a local path
    workload: Optional[Any] = None  # a path or an inline mapping
    usage_context: Optional[str] = None  # "serve" (default) or "llm"
    slo: SLO = Field(default_factory=SLO)
    set: dict[str, str] = Field(default_factory=dict)
    pick: Optional[int] = Field(default=None, gt=0)
    calibration: Optional[str] = None  # a calibration profile (YAML) from `vllm-reader calibrate`
    # the release the evidence given beside the config names (a calibration profile, a log), and which
    release: Optional[str] = None
    release_from: Optional[Literal["profile", "log"]] = None


class CommentBlock(BaseModel):
    options: LoadOptions
    line: int


def parse_comment_block(text: str, file: Optional[str]) -> Optional[CommentBlock]:
    lines = text.splitlines()
    for index, raw in enumerate(lines):
        m = _HEADER.match(raw)
        if not m:
            continue
        inline = m.group("inline").strip()
        body = inline if inline else _indented_comment_lines(lines, index)
        data = _parse_body(body, file, index + 1)
        return CommentBlock(options=_validate(data, file, index + 1), line=index + 1)
    return None


def _indented_comment_lines(lines: list[str], header_index: int) -> str:
    header_body = _COMMENT.match(lines[header_index])
    header_depth = _depth(header_body.group("body")) if header_body else 0
    collected: list[str] = []
    for raw in lines[header_index + 1:]:
        m = _COMMENT.match(raw)
        if not m or not m.group("body").strip():
            break
        body = m.group("body")
        if _depth(body) <= header_depth:
            break
        collected.append(body)
    if not collected:
        return ""
    strip = min(_depth(b) for b in collected)
    return "\n".join(b[strip:] for b in collected)


def _depth(body: str) -> int:
    return len(body) - len(body.lstrip(" "))


def _parse_body(body: str, file: Optional[str], line: int) -> dict[str, Any]:
    if not body.strip():
        raise ReaderError("the '# vllm-reader:' comment block is empty; put its keys on indented comment lines "
                          "below it, or inline as '# vllm-reader: {gpu: H100-SXM}'.", file=file, line=line)
    try:
        docs = load_yaml_documents(body, file)
    except ReaderError as err:
        raise ReaderError(f"in the '# vllm-reader:' comment block: {err.message}", file=file, line=line) from None
    data = docs[0].data if docs else None
    if not isinstance(data, dict):
        raise ReaderError("the '# vllm-reader:' comment block must be a mapping of keys ("
                          + ", ".join(LoadOptions.model_fields) + ").", file=file, line=line)
    return data


def _validate(data: dict[str, Any], file: Optional[str], line: int) -> LoadOptions:
    data = dict(data)
    if "vllm_version" in data:
        data["vllm_version"] = str(data["vllm_version"])
    if isinstance(data.get("set"), dict):
        data["set"] = {str(k): str(v) for k, v in data["set"].items()}
    try:
        return LoadOptions.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        message = validation_words(first)
        if first["type"] == "extra_forbidden":
            message = "unknown key; the block accepts " + ", ".join(LoadOptions.model_fields)
        raise ReaderError(f"in the '# vllm-reader:' comment block: {message}.", file=file, line=line,
                          key=key) from None


def merge_options(cli: LoadOptions, block: Optional[CommentBlock]) -> tuple[LoadOptions, dict[str, str]]:
    """CLI options win over the comment block. Returns the merged options and where each came from."""
    if block is None:
        return cli, {k: "cli" for k, v in cli.model_dump(exclude_defaults=True).items()}
    merged = block.options.model_dump()
    origins = {k: "comment" for k in block.options.model_dump(exclude_defaults=True)}
    for key, value in cli.model_dump(exclude_defaults=True).items():
        if key == "set":
            merged["set"] = {**merged.get("set", {}), **value}
        elif key == "slo":
            merged["slo"] = {**merged.get("slo", {}), **{k: v for k, v in value.items() if v is not None}}
        else:
            merged[key] = value
        origins[key] = "cli"
    return LoadOptions.model_validate(merged), origins
