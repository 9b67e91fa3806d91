"""The rule file format, as strict pydantic models (see rules/README.md for the prose version).

A rule file is YAML:

    schema: 1
    theme: scheduler            # default theme of the rules below
    rules:
      - id: VR201
        name: batched-tokens-below-max-model-len
        severity: error         # error: vLLM refuses to start; warning: it starts but ignores,
                                # overrides or deprecates something; info: worth knowing
        versions: "0.6.3.."     # or a list of ranges
        when: {all: [...]}      # the condition (reader/rules_engine/conditions.py)
        message: "..."          # our one line, {fact} placeholders filled by plain substitution
        vllm_message: "..."     # vLLM's own text, verbatim where one exists
        fix: "..."
        why: "..."
        example: {config: "vllm serve ...", vllm_version: "0.18.0"}
        source: "vllm/config/scheduler.py 252-263 @ v0.18.0"
        keys: [max_num_batched_tokens, max_model_len]
"""
from __future__ import annotations

import re
from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

Severity = Literal["error", "warning", "info"]
Theme = Literal["flags", "scheduler", "speculative", "memory", "parallelism", "hardware", "compat", "input", "compilation",
                "frontend"]

RULE_ID = re.compile(r"^VR\d{3}$")
RULE_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
EACH = re.compile(r"^(?:[a-z_]+\.\*|loader-note:(?:warning|info)|resolver-note:(?:warning|info))$")


class Example(BaseModel):
    """A minimal config that triggers the rule, read by the real loader in the tests and shown by `explain`."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    config: str = Field(min_length=1)
    file: str = Field(default="example.sh", pattern=r"^[A-Za-z0-9_.\-]+\.(sh|yaml|yml|json)$")
    vllm_version: Optional[str] = None
    gpu: Optional[str] = None
    gpus: Optional[int] = None
    model: Optional[str] = None


class RuleSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    id: str
    name: str
    severity: Severity
    theme: Optional[Theme] = None
    versions: Union[str, list[str]]
    engine: Optional[Literal["v0", "v1"]] = None
    each: Optional[str] = None
    when: Optional[dict] = None
    message: str = Field(min_length=1)
    vllm_message: Union[None, str, dict[str, str]] = None
    fix: str = Field(min_length=1)
    why: str = Field(min_length=1)
    example: Example
    source: Union[str, list[str]]
    keys: list[str] = Field(default_factory=list)
    notes: Union[None, str, list[str]] = None
    overrides: list[str] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not RULE_ID.match(v):
            raise ValueError(f"rule id {v!r} must look like VR123")
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not RULE_NAME.match(v):
            raise ValueError(f"rule name {v!r} must be a lower-case slug like 'batched-tokens-below-max-len'")
        return v

    @field_validator("each")
    @classmethod
    def _each(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not EACH.match(v):
            raise ValueError(f"'each' must be a fact prefix like 'absent.*', 'loader-note:warning' or "
                             f"'resolver-note:warning', not {v!r}")
        return v

    @field_validator("source")
    @classmethod
    def _source(cls, v: Union[str, list[str]]) -> Union[str, list[str]]:
        items = [v] if isinstance(v, str) else v
        if not items or any(not s.strip() for s in items):
            raise ValueError("source must name at least one file (path and lines @ tag) or doc URL")
        return v

    def source_list(self) -> list[str]:
        return [self.source] if isinstance(self.source, str) else list(self.source)

    def notes_list(self) -> list[str]:
        if self.notes is None:
            return []
        return [self.notes] if isinstance(self.notes, str) else list(self.notes)


class RuleFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    schema_: Literal[1] = Field(alias="schema")
    theme: Optional[Theme] = None
    description: Optional[str] = None
    rules: list[dict] = Field(min_length=1)
