"""Which kind of text a file is, by its content; the file's name only breaks ties.

Kinds: json, markdown, dockerfile, makefile, justfile, procfile, yaml, shell. The checks are ordered from
the most telling sign to the least: a YAML file cannot hold a Makefile's tab-indented recipe, a shell
script does not start with `FROM image`, a Procfile's every line is `name: command`.
"""
from __future__ import annotations

import json
import re
from pathlib import PurePath
from typing import Optional

from ...errors import ReaderError
from ..yamlsafe import load_yaml_documents

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)
_DOCKER_INSTRUCTION = re.compile(
    r"^(FROM|RUN|CMD|ENTRYPOINT|ENV|ARG|COPY|ADD|WORKDIR|EXPOSE|LABEL|USER|VOLUME|HEALTHCHECK|SHELL|STOPSIGNAL|"
    r"ONBUILD|MAINTAINER)\s", re.I)
_MAKE_RULE = re.compile(r"^[^\s:#=][^:=#]*:(?![=:])[^=]*$")
_MAKE_ASSIGNMENT = re.compile(r"^(export\s+|override\s+)?[A-Za-z_][\w.-]*\s*(:{1,3}=|\?=|\+=|!=)")
_JUST_ASSIGNMENT = re.compile(r"^(export\s+)?[A-Za-z_][\w-]*\s*:=")
_JUST_SETTING = re.compile(r"^set\s+[\w-]+")
_PROCFILE_LINE = re.compile(r"^[A-Za-z0-9_.-]+:[ \t]*\S")
_LAUNCH_WORDS = re.compile(r"\bvllm\b|vllm\.entrypoints")


def kind_of(text: str, name: Optional[str] = None) -> str:
    base = PurePath(name).name.lower() if name else ""
    suffix = PurePath(base).suffix
    lines = _meaningful_lines(text)
    if suffix == ".json" or (text.lstrip()[:1] in ("{", "[") and _is_json(text)):
        return "json"
    if suffix in (".md", ".markdown", ".mdx") or (_FENCE.search(text) and not text.lstrip().startswith("#!")):
        return "markdown"
    if base == "dockerfile" or base.startswith("dockerfile.") or base.endswith(".dockerfile") \
            or base == "containerfile" or _looks_like_dockerfile(lines):
        return "dockerfile"
    if base in ("justfile", ".justfile") or suffix == ".just":
        return "justfile"
    if base in ("makefile", "gnumakefile") or suffix == ".mk" or _looks_like_makefile(text):
        return "makefile"
    if ("{{" in text and _has_just_recipe(text) or _looks_like_justfile(lines)) and not structured_yaml(text) \
            and suffix not in (".yaml", ".yml"):
        return "justfile"  # (a YAML file with Go templates, `{{.Name}}`, has the same marks; one named .yaml is YAML)
    if base == "procfile" or base.startswith("procfile.") or _looks_like_procfile(lines):
        return "procfile"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if text.lstrip().startswith("#!"):
        return "shell"
    return "yaml-or-shell"  # a script never parses as a YAML mapping or list; the loader tries


def _meaningful_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _looks_like_dockerfile(lines: list[str]) -> bool:
    """The first instruction is FROM (or ARG before it), and the file has a FROM."""
    if not lines or not re.match(r"^(FROM|ARG)\s", lines[0], re.I):
        return False
    return any(re.match(r"^FROM\s+\S", ln, re.I) for ln in lines) and \
        sum(1 for ln in lines if _DOCKER_INSTRUCTION.match(ln)) * 2 >= len([ln for ln in lines if ln[:1] not in
                                                                           " \t"])


def _looks_like_makefile(text: str) -> bool:
    """A rule line followed by a tab-indented recipe line (YAML forbids tabs there, shell has no rules)."""
    raw = text.splitlines()
    for i, line in enumerate(raw[:-1]):
        if _MAKE_RULE.match(line) and raw[i + 1].startswith("\t"):
            return True
    return False


def _looks_like_justfile(lines: list[str]) -> bool:
    """just's own syntax (`x := value`, `set ...`) beside a recipe header with an indented body."""
    return any(_JUST_ASSIGNMENT.match(ln) or _JUST_SETTING.match(ln) for ln in lines) and \
        _has_just_recipe("\n".join(lines))


def structured_yaml(text: str) -> bool:
    """Does the text parse as YAML holding a mapping or a list (not one plain string)?"""
    try:
        docs = load_yaml_documents(text, None)
    except ReaderError:
        return False
    return any(isinstance(d.data, list) or (isinstance(d.data, dict) and not _command_as_key(d.data)) for d in docs)


def _command_as_key(data: dict) -> bool:
    """`vllm serve m --x '{"k": 1}'` parses as a one-key YAML mapping whose key is the command up to `": "`; no
    YAML config has a key holding ` --option`, so such a mapping is a command line, not structure."""
    return any(isinstance(k, str) and re.search(r"\s--[A-Za-z]", k) for k in data)


def _has_just_recipe(text: str) -> bool:
    raw = text.splitlines()
    return any(re.match(r"^@?[A-Za-z_][\w-]*(\s+[^:=]+)?\s*:(?!=)", ln) and i + 1 < len(raw)
               and raw[i + 1][:1] in (" ", "\t") for i, ln in enumerate(raw))


def _looks_like_procfile(lines: list[str]) -> bool:
    """Every line is `process: command`, unindented, and some command runs vLLM."""
    return bool(lines) and all(_PROCFILE_LINE.match(ln) for ln in lines) and \
        any(_LAUNCH_WORDS.search(ln.split(":", 1)[1]) for ln in lines)
