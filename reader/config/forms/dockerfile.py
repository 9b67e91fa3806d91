"""Dockerfiles: the command the final stage's container runs, as Docker builds it.

ENTRYPOINT and CMD in exec form (`["vllm", "serve", ...]`) or shell form (run by `/bin/sh -c`). An exec
ENTRYPOINT receives CMD as arguments; a shell ENTRYPOINT ignores CMD; without an ENTRYPOINT the base image's
applies, and the vLLM images' entrypoint is the OpenAI server, so CMD's items are its arguments. Stages
inherit from the stage they are built FROM (ENV, ENTRYPOINT, CMD); ENTRYPOINT in a stage resets the CMD it
inherited. ARG and ENV values expand in FROM and ENV; only ENV reaches the running container, and exec form
expands nothing at all: `CMD ["--model", "$MODEL"]` hands vLLM the text `$MODEL`.
Source: https://docs.docker.com/reference/dockerfile/ (CMD, ENTRYPOINT, "Understand how CMD and ENTRYPOINT
interact", ENV, ARG, environment replacement).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional, Union

from ..invocation import Invocation
from ..model import Note, SourceLoc
from ..shell import Expander
from ..tokens import Token
from .images import is_vllm_image, version_hint
from .scripts import argv_invocation, is_shell_c

Command = Union[list[str], str]  # exec form, or shell form


@dataclass
class Instruction:
    keyword: str
    args: str
    line: int


@dataclass
class Stage:
    image: str
    line: int
    name: Optional[str] = None
    env: dict[str, str] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)
    entrypoint: Optional[tuple[Command, int]] = None
    cmd: Optional[tuple[Command, int]] = None


def dockerfile(text: str, path: Optional[str], set_vars: dict[str, str]) -> tuple[list[Invocation], str]:
    stages = _stages(_instructions(text), set_vars)
    if not stages:
        return [], "it has no FROM"
    final = stages[-1]
    base = _base_image(final, stages)
    searched = (f"searched the final stage's ENTRYPOINT and CMD (built FROM {final.image}"
                + (f", base image {base}" if base != final.image else "") + ")")
    inv = _launch(final, base, path, set_vars)
    if inv is None:
        return [], searched
    inv.form, inv.image = "dockerfile", base
    inv.version = version_hint(base, SourceLoc(file=path, line=final.line))
    inv.env = {**final.env, **inv.env}
    return [inv], searched


# ---- reading the instructions ---------------------------------------------------------------

def _instructions(text: str) -> list[Instruction]:
    escape = "`" if re.search(r"^#\s*escape\s*=\s*`", text, re.M | re.I) else "\\"
    out: list[Instruction] = []
    buffer, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not buffer and (not stripped or stripped.startswith("#")):
            continue
        if buffer and stripped.startswith("#"):
            continue  # a comment inside a continued instruction is dropped
        if not buffer:
            start = number
        if stripped.endswith(escape):
            buffer += stripped[:-1] + " "
            continue
        buffer += stripped
        keyword, _, args = buffer.partition(" ")
        out.append(Instruction(keyword.upper(), args.strip(), start))
        buffer = ""
    if buffer:
        keyword, _, args = buffer.partition(" ")
        out.append(Instruction(keyword.upper(), args.strip(), start))
    return out


def _stages(instructions: list[Instruction], set_vars: dict[str, str]) -> list[Stage]:
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for ins in instructions:
        if ins.keyword == "ARG" and not stages:
            global_args.update(_arg(ins.args, set_vars, global_args))
        elif ins.keyword == "FROM":
            stages.append(_from(ins, stages, {**global_args, **set_vars}))
        elif not stages:
            continue
        elif ins.keyword == "ARG":
            stages[-1].args.update(_arg(ins.args, set_vars, {**global_args, **stages[-1].args}))
        elif ins.keyword == "ENV":
            scope = {**global_args, **stages[-1].args, **stages[-1].env}
            stages[-1].env.update(_env(ins.args, scope))
        elif ins.keyword == "ENTRYPOINT":
            stages[-1].entrypoint = (_command(ins.args), ins.line)
            stages[-1].cmd = None  # Docker: setting ENTRYPOINT resets a CMD inherited from the base
        elif ins.keyword == "CMD":
            stages[-1].cmd = (_command(ins.args), ins.line)
    return stages


def _from(ins: Instruction, stages: list[Stage], variables: dict[str, str]) -> Stage:
    words = [w for w in ins.args.split() if not w.startswith("--")]
    image = Expander(variables).expand_text(words[0])[0] if words else ""
    name = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
    parent = next((s for s in reversed(stages) if s.name and s.name == image), None)
    stage = Stage(image=image, line=ins.line, name=name)
    if parent is not None:  # FROM an earlier stage: start from what it set
        stage.env, stage.entrypoint, stage.cmd = dict(parent.env), parent.entrypoint, parent.cmd
    return stage


def _base_image(stage: Stage, stages: list[Stage]) -> str:
    """The external image a stage builds on, through FROM chains of named stages."""
    image = stage.image
    for earlier in reversed(stages):
        if earlier.name and earlier.name == image:
            image = earlier.image
    return image


def _arg(args: str, set_vars: dict[str, str], scope: dict[str, str]) -> dict[str, str]:
    out = {}
    for word in args.split():
        name, eq, default = word.partition("=")
        if name in set_vars:
            out[name] = set_vars[name]
        elif eq:
            out[name] = Expander(scope).expand_text(default.strip("\"'"))[0]
    return out


def _env(args: str, scope: dict[str, str]) -> dict[str, str]:
    """`ENV A=1 B="two words"` or the old `ENV A value with spaces`."""
    expander = Expander(scope)
    if re.match(r"^[A-Za-z_]\w*=", args):
        pairs = re.findall(r"([A-Za-z_]\w*)=(\"(?:[^\"\\]|\\.)*\"|'[^']*'|\S*)", args)
        out = {}
        for name, value in pairs:
            value = value[1:-1] if value[:1] in ("'", '"') else value
            out[name] = expander.expand_text(value)[0]
            expander.variables[name] = out[name]
        return out
    name, _, value = args.partition(" ")
    return {name: expander.expand_text(value.strip())[0]}


def _command(args: str) -> Command:
    if args.startswith("["):
        try:
            value = json.loads(args)
        except json.JSONDecodeError:
            return args  # not valid JSON: Docker runs it in shell form
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
    return args


# ---- the launch -------------------------------------------------------------------------------

def _launch(stage: Stage, base: str, path: Optional[str], set_vars: dict[str, str]) -> Optional[Invocation]:
    entry, cmd = stage.entrypoint, stage.cmd
    if entry is None and cmd is None:
        return None
    if entry is not None:
        argv = _argv(entry, path) + (_argv(cmd, path) if cmd is not None and isinstance(entry[0], list) else [])
        label = f"ENTRYPOINT (line {entry[1]})"
    else:
        argv = _argv(cmd, path)
        label = f"CMD (line {cmd[1]})"
    env = {**stage.env, **set_vars}
    inv = argv_invocation(argv, dict(env), "dockerfile", label, path, env)
    if inv is None and entry is None and is_vllm_image(base) and isinstance(cmd[0], list):
        # No ENTRYPOINT of our own: the vLLM image's entrypoint (the OpenAI server) gets CMD as its arguments.
        inv = Invocation(form="dockerfile", label=label, tokens=argv, env=dict(stage.env), line=cmd[1])
    if inv is not None:
        _exec_form_notes(inv, argv)
    return inv


def _argv(command: tuple[Command, int], path: Optional[str]) -> list[Token]:
    value, line = command
    loc = SourceLoc(file=path, line=line)
    if isinstance(value, str):
        return [Token("/bin/sh", loc), Token("-c", loc), Token(value, loc)]
    # Exec form: no shell, so `$VAR` reaches the program as written.
    return [Token(item, loc, tuple(re.findall(r"\$\{?[A-Za-z_]\w*\}?", item))) for item in value]


def _exec_form_notes(inv: Invocation, argv: list[Token]) -> None:
    literal = sorted({u for tok in argv for u in tok.unresolved})
    if literal and not is_shell_c(argv):  # `["/bin/sh", "-c", "..."]`: the shell it runs does expand
        inv.notes.append(Note(level="warning", loc=argv[0].loc, message=(
            f"the exec form (JSON list) does not expand {', '.join(literal)}: vLLM receives the text as written. "
            "Use the shell form, or write the value itself")))
