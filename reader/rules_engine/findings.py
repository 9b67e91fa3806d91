"""What `vllm-reader check` finds, as data: the models behind `--format json` (schema_version 1).

reader/render/schemas/findings.schema.json is generated from `CheckReport` by
`python -m reader.rules_engine.generate`; a test keeps the two in step. Adding an optional field
keeps schema_version 1; renaming or removing one, or changing a meaning, bumps it.

The models are built lazily (defer_build) and filled with model_construct by the engine: `check`
runs on every commit, and building seven pydantic schemas at start-up costs more than the check.
The JSON output is validated against the generated schema in the tests instead.
"""
from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

SeverityName = Literal["error", "warning", "info"]


class Location(BaseModel):
    """Where in the user's file the finding is: the offending key's line when the loader knows it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    file: str = Field(description="The config file as given on the command line.")
    line: Optional[int] = Field(default=None, ge=1, description="1-based line of the key, when known.")
    key: Optional[str] = Field(default=None, description="vLLM setting (argparse dest) the line holds.")


class Finding(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    rule_id: str = Field(description="Stable rule id, e.g. VR201 (`vllm-reader explain VR201`).")
    name: str = Field(description="Short slug of the rule.")
    severity: SeverityName = Field(description="error: vLLM would refuse to start; warning: it starts but ignores, "
                                   "overrides or deprecates something; info: worth knowing.")
    theme: str
    config: str = Field(description="The config file the finding is about.")
    message: str = Field(description="What is wrong, with this config's values.")
    vllm_message: Optional[str] = Field(default=None, description="The message vLLM itself prints for this "
                                        "version, verbatim where one exists ({x} marks values vLLM fills in).")
    fix: str
    source: list[str] = Field(description="Where in vLLM (file and lines @ tag, or doc) the rule comes from.")
    locations: list[Location] = Field(description="Most specific first; the file alone when no line is known.")
    facts: dict[str, Any] = Field(default_factory=dict, description="The facts the rule read, with their values.")


class Skipped(BaseModel):
    """A rule that could not be decided because facts it needs are missing (e.g. the model is unknown)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    rule_id: str
    name: str
    config: str
    missing: list[str]


class ReadingNote(BaseModel):
    """How the config was read, where it is not a finding: the release assumed, the other launches in the file,
    an option prefix read as the full name, a deprecated form the release still accepts. The notes `diagnose` lists
    under "Notes on reading the config", less those a finding (VR904-VR906) or the model line already says."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    message: str
    file: Optional[str] = Field(default=None, description="The file the note is about, when it is about one place.")
    line: Optional[int] = Field(default=None, ge=1, description="1-based line, when known.")
    key: Optional[str] = Field(default=None, description="The option as written, when the note is about one.")


class ConfigResult(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    config: str
    status: Literal["checked", "bad-input"]
    vllm_version: Optional[str] = Field(default=None, description="The checked release whose facts were used.")
    vllm_version_origin: Optional[str] = Field(default=None, description="cli, comment, image or none (newest).")
    engine: Optional[Literal["v0", "v1"]] = None
    form: Optional[str] = None
    rules_evaluated: int = 0
    model: Optional[str] = Field(default=None, description="The model the checks ran on (its Hugging Face id, or "
                                 "the local path), when one was found.")
    model_source: Optional[str] = Field(default=None, description="Where the model's config.json came from: 'model "
                                        "shape from: <source> (<where>)', or why it was found nowhere.")
    error: Optional[str] = Field(default=None, description="For bad input: the one-paragraph message.")
    notes: list[ReadingNote] = Field(default_factory=list, description="How the config was read (not findings).")


class Summary(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    errors: int
    warnings: int
    infos: int
    configs: int
    bad_input: int
    fail_on: Literal["error", "warning", "never"]
    exit_code: Literal[0, 1, 2]


class ToolInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: Literal["vllm-reader"] = "vllm-reader"
    version: str


class CheckReport(BaseModel):
    """The whole `check --format json` document."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: Literal[1] = SCHEMA_VERSION
    tool: ToolInfo
    vllm_version: Optional[str] = Field(default=None, description="The release checked against when every config "
                                        "used the same one, else null (see configs[].vllm_version).")
    configs: list[ConfigResult]
    findings: list[Finding]
    skipped: list[Skipped] = Field(default_factory=list)
    summary: Summary
