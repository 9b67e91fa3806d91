"""Find the vLLM launch in a command line: `vllm serve`, `python -m vllm.entrypoints...`, `docker run`.

Works on tokens that a shell (or Kubernetes) already split. Wrappers in front of the command
(`exec`, `sudo`, `nohup`, `env X=1`, `timeout 60`, shell keywords) are skipped.
"""
from __future__ import annotations

import re
from typing import Optional

from ..invocation import Hint, Invocation
from ..model import Note
from ..tokens import Token
from .images import is_vllm_image, version_hint

_WRAPPERS = {"exec", "sudo", "nohup", "time", "then", "do", "else", "command", "stdbuf", "numactl", "taskset", "!"}
_API_SERVER_MODULES = {"vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server"}
_DOCKER_NO_VALUE = {"--rm", "--privileged", "--init", "--detach", "--interactive", "--tty", "--publish-all",
                    "--read-only", "--no-healthcheck", "--oom-kill-disable", "--sig-proxy", "-P"}
# Options of NVIDIA Dynamo's `python -m dynamo.vllm` wrapper that are not vLLM flags.
_DYNAMO_OWN_FLAGS = {"--is-prefill-worker", "--is-decode-worker", "--endpoint", "--migration-limit",
                     "--connector", "--dyn-tool-call-parser", "--dyn-reasoning-parser"}
_DYNAMO_FLAGS_WITH_VALUE = {"--endpoint", "--migration-limit", "--connector", "--dyn-tool-call-parser",
                            "--dyn-reasoning-parser"}


def find_launch(tokens: list[Token], env: dict[str, str], form: str, label: str,
                file: Optional[str]) -> Optional[Invocation]:
    """The vLLM launch these tokens start, or None if they start something else."""
    tokens = _skip_wrappers(tokens, env)
    if not tokens:
        return None
    program = tokens[0].text.rsplit("/", 1)[-1]
    line = tokens[0].loc.line if tokens[0].loc else None
    if program == "vllm" and len(tokens) > 1 and tokens[1].text == "serve":
        return Invocation(form=form, label=label, tokens=tokens[2:], env=dict(env), line=line)
    if re.fullmatch(r"python[0-9.]*", program):
        return _python_module(tokens, env, form, label, line)
    if program in ("docker", "podman", "nerdctl") and len(tokens) > 1 and tokens[1].text == "run":
        return _docker_run(tokens[2:], env, label, line, file)
    return None


def _skip_wrappers(tokens: list[Token], env: dict[str, str]) -> list[Token]:
    while tokens:
        head = tokens[0].text
        if head in _WRAPPERS:
            tokens = tokens[1:]
        elif head == "env":
            tokens = tokens[1:]
            while tokens and "=" in tokens[0].text and not tokens[0].text.startswith("-"):
                name, _, value = tokens[0].text.partition("=")
                env[name] = value
                tokens = tokens[1:]
        elif head == "timeout" and len(tokens) > 1:
            tokens = tokens[2:]
        else:
            break
    return tokens


def _python_module(tokens: list[Token], env: dict[str, str], form: str, label: str,
                   line: Optional[int]) -> Optional[Invocation]:
    i = 1
    while i < len(tokens) and tokens[i].text != "-m":
        i += 2 if tokens[i].text in ("-X", "-W") else 1
    if i + 1 >= len(tokens):
        return None
    module = tokens[i + 1].text
    rest = tokens[i + 2:]
    if module in _API_SERVER_MODULES:
        return Invocation(form=form, label=label, entry_point="api_server", tokens=rest, env=dict(env), line=line)
    if module == "vllm.entrypoints.cli.main" and rest and rest[0].text == "serve":
        return Invocation(form=form, label=label, tokens=rest[1:], env=dict(env), line=line)
    if module == "dynamo.vllm":
        return _dynamo(rest, env, form, label, line)
    return None


def _dynamo(rest: list[Token], env: dict[str, str], form: str, label: str, line: Optional[int]) -> Invocation:
    kept: list[Token] = []
    dropped: list[str] = []
    skip_next = False
    for tok in rest:
        if skip_next:
            skip_next = False
            continue
        name = tok.text.split("=", 1)[0]
        if name in _DYNAMO_OWN_FLAGS:
            dropped.append(tok.text)
            skip_next = name in _DYNAMO_FLAGS_WITH_VALUE and "=" not in tok.text
            continue
        kept.append(tok)
    inv = Invocation(form=form, label=label, tokens=kept, env=dict(env), line=line)
    inv.notes.append(Note(
        level="info", loc=rest[0].loc if rest else None,
        message="read as NVIDIA Dynamo's `python -m dynamo.vllm` wrapper, which passes vLLM engine flags through"
                + (f"; its own options {', '.join(dropped)} are not vLLM flags and are skipped" if dropped else ""),
    ))
    return inv


def _docker_run(args: list[Token], env: dict[str, str], label: str, line: Optional[int],
                file: Optional[str]) -> Optional[Invocation]:
    container_env: dict[str, str] = {}
    gpus: Optional[Token] = None
    entrypoint: Optional[str] = None
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        name, eq, inline = args[i].text.partition("=")
        takes_value = not eq and name not in _DOCKER_NO_VALUE and not re.fullmatch(r"-[dit]+", name)
        value = inline if eq else (args[i + 1].text if takes_value and i + 1 < len(args) else "")
        if name in ("-e", "--env") and "=" in value:
            key, _, val = value.partition("=")
            container_env[key] = val
        elif name == "--gpus":
            gpus = Token(value, args[i].loc)
        elif name == "--entrypoint":
            entrypoint = value
        i += 2 if takes_value else 1
    if i >= len(args) or not is_vllm_image(args[i].text):
        return None
    image = args[i].text
    rest = args[i + 1:]
    inv: Optional[Invocation]
    if entrypoint or (rest and not rest[0].text.startswith("-") and rest[0].text.rsplit("/", 1)[-1] in
                      ("vllm", "python", "python3")):
        command = ([Token(entrypoint, args[i].loc)] if entrypoint else []) + rest
        inv = find_launch(command, {**env, **container_env}, "docker-run", label, file)
        if inv is None:
            return None
    else:
        # The vllm/vllm-openai image's entrypoint runs the OpenAI server; arguments go straight to it.
        inv = Invocation(form="docker-run", label=label, tokens=rest, env={**env, **container_env}, line=line)
    inv.form = "docker-run"
    inv.image = image
    inv.version = version_hint(image, args[i].loc)
    if gpus is not None:
        count = docker_gpu_count(gpus.text, container_env.get("CUDA_VISIBLE_DEVICES"))
        if count is not None:
            inv.gpu_count = Hint(count, f"docker --gpus {gpus.text}", gpus.loc)
    return inv


def docker_gpu_count(value: str, visible: Optional[str]) -> Optional[int]:
    value = value.strip().strip("'\"")
    if visible:
        return len([d for d in visible.split(",") if d.strip()])
    if value.isdigit():
        return int(value)
    m = re.search(r"device=([0-9,]+)", value)
    if m:
        return len([d for d in m.group(1).split(",") if d])
    return None  # "all": as many as the host has
