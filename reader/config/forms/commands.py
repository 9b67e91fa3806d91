"""Find the vLLM launch in a command line: `vllm serve`, `python -m vllm.entrypoints...`, `docker run`.

Works on tokens that a shell (or Kubernetes) already split. Whatever runs vLLM for the user (`uv run`,
`nohup`, `env X=1`, `srun ...`, `kubectl exec POD --`) is read as a wrapper and said in a reading note.
"""
from __future__ import annotations

import re
from typing import Optional

from ..invocation import Hint, Invocation
from ..model import Note
from ..shell import Expander
from ..tokens import Token, placeholder_name
from .images import is_vllm_image, version_hint

# Shell grammar in front of a command: not worth a note when it is all that precedes vLLM.
_SHELL_GRAMMAR = {"then", "do", "else", "elif", "!", "{", "(", "exec", "command"}
# Programs that name vLLM without running it: `echo vllm serve ...` is text, not a launch.
_MENTIONS = {"echo", "printf", "grep", "egrep", "pgrep", "pkill", "kill", "killall", "which", "type", "pip", "pip3",
             "cat", "tee", "ps", "man", "sed", "awk", "git", "curl", "wget", "ls", "test", "[", "read", "alias"}
_DOCKERS = {"docker", "podman", "nerdctl"}
_PYTHON = re.compile(r"python[0-9.]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.S)
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
    """The vLLM launch these tokens start, or None if they start something else.

    The vLLM program word may come after any wrapper (`uv run`, `conda run -n ENV`, `srun ...`, `kubectl exec
    POD --`): every word is tried as the program, and the words before the first that is one are the wrapper's.
    Trying each word, rather than knowing each wrapper's options, keeps an option's value (`taskset -c 0-7`,
    `conda run -n vllm`) from being read as the program: only `vllm serve`, `-m vllm.entrypoints...` or
    `docker run` start a launch.
    """
    last = 1 if tokens and _program(tokens[0]) in _MENTIONS else len(tokens)
    for start in range(last):
        inv, wrapper = _launch_at(tokens, start, env, form, label, file)
        if inv is not None:
            note_wrapper(inv, wrapper)
            return inv
        if _is_docker_run(tokens[start:]):
            return None  # `docker run` read its own command and found no launch in it
    return None


def _launch_at(tokens: list[Token], start: int, env: dict[str, str], form: str, label: str,
               file: Optional[str]) -> tuple[Optional[Invocation], list[Token]]:
    """The launch whose program word is tokens[start], with the wrapper words before it."""
    word = tokens[start].text
    wrapper = tokens[:start]
    env = {**env, **wrapper_env(wrapper)}
    rest = _expanded(tokens[start + 1:], env, wrapper)
    line = tokens[start].loc.line if tokens[start].loc else None
    if _VLLM_PROGRAM.fullmatch(_program(tokens[start])) and rest:
        if rest[0].text == "--" and len(rest) > 1:
            rest = rest[1:]  # `uv tool run 'vllm>=0.10' -- serve ...`: the separator before the tool's arguments
        if rest[0].text == "serve":
            return Invocation(form=form, label=label, tokens=rest[1:], env=env, line=line), wrapper
    if word == "-m" and rest:
        interpreter = next((i for i in range(start - 1, -1, -1) if _PYTHON.fullmatch(_program(tokens[i]))), start)
        return _module(rest, env, form, label, line), tokens[:interpreter]
    if _is_docker_run(tokens[start:]):
        return _docker_run(rest[1:], env, label, line, file), wrapper
    return None, wrapper


def _is_docker_run(tokens: list[Token]) -> bool:
    return len(tokens) > 1 and _program(tokens[0]) in _DOCKERS and tokens[1].text == "run"


# The vllm executable, or the package spec `uvx` / `uv tool run` / `pipx run` install it from and run it by:
# `vllm>=0.10`, `vllm==0.9.2`, `vllm@0.10.0`, `vllm[audio]` (uv's docs: "uv tool run", "Requesting specific versions").
_VLLM_PROGRAM = re.compile(r"vllm(\[[\w,-]*\])?((==|>=|<=|~=|!=|>|<|@)[\w.*+!,<>=~-]+)?")


def _program(tok: Token) -> str:
    return tok.text.rsplit("/", 1)[-1]


def wrapper_env(wrapper: list[Token]) -> dict[str, str]:
    """`env A=B`, `docker exec -e A=B`: assignments among a wrapper's words set the launch's environment."""
    found: dict[str, str] = {}
    for tok in wrapper:
        m = _ASSIGNMENT.fullmatch(tok.text)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def _expanded(tokens: list[Token], env: dict[str, str], wrapper: list[Token]) -> list[Token]:
    """Placeholders a wrapper's `env A=B` defines are expanded with it, as `A=B cmd` is by the shell reader."""
    assigned = wrapper_env(wrapper)
    if not assigned:
        return tokens
    expander = Expander(env)
    out: list[Token] = []
    for tok in tokens:
        if not any(placeholder_name(u) in assigned for u in tok.unresolved):
            out.append(tok)
            continue
        text, missing = expander.expand_text(tok.text)
        out.append(Token(text, tok.loc, tuple(missing), tok.spelling, tok.typed_value))
    return out


def note_wrapper(inv: Invocation, wrapper: list[Token]) -> None:
    words = [tok.text for tok in wrapper]
    if not [w for w in words if w not in _SHELL_GRAMMAR]:
        return
    text = " ".join(words)
    text = text if len(text) <= 80 else text[:77] + "..."
    inv.notes.append(Note(level="info", loc=wrapper[0].loc, message=(
        f"vLLM is launched through the wrapper `{text}`; its words are the wrapper's, not vLLM's arguments")))


def _module(rest: list[Token], env: dict[str, str], form: str, label: str,
            line: Optional[int]) -> Optional[Invocation]:
    """`-m MODULE ARGS...`: the launch when MODULE is one of vLLM's servers (or a wrapper that passes its flags)."""
    module, args = rest[0].text, rest[1:]
    if module in _API_SERVER_MODULES:
        return Invocation(form=form, label=label, entry_point="api_server", tokens=args, env=dict(env), line=line)
    if module == "vllm.entrypoints.cli.main" and args and args[0].text == "serve":
        return Invocation(form=form, label=label, tokens=args[1:], env=dict(env), line=line)
    if module == "dynamo.vllm":
        return _dynamo(args, env, form, label, line)
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
    if i >= len(args):
        return None
    image = args[i].text
    inv = _container_launch(image, entrypoint, args[i:], {**env, **container_env}, label, line, file)
    if inv is None:
        return None
    inv.form = "docker-run"
    inv.image = image
    inv.version = version_hint(image, args[i].loc)
    if gpus is not None:
        count = docker_gpu_count(gpus.text, container_env.get("CUDA_VISIBLE_DEVICES"))
        if count is not None:
            inv.gpu_count = Hint(count, f"docker --gpus {gpus.text}", gpus.loc)
    return inv


def _container_launch(image: str, entrypoint: Optional[str], args: list[Token], env: dict[str, str], label: str,
                      line: Optional[int], file: Optional[str]) -> Optional[Invocation]:
    """What `docker run IMAGE ARGS` runs: vLLM's image takes serve arguments; any image may run a vLLM command."""
    rest = args[1:]
    names_program = bool(rest) and not rest[0].text.startswith("-")
    if is_vllm_image(image) and not entrypoint and not (names_program and _program(rest[0]) in ("vllm", "python",
                                                                                                 "python3")):
        # The vllm/vllm-openai image's entrypoint runs the OpenAI server; arguments go straight to it.
        return Invocation(form="docker-run", label=label, tokens=rest, env=env, line=line)
    command = ([Token(entrypoint, args[0].loc)] if entrypoint else []) + rest
    return find_launch(command, env, "docker-run", label, file) if command else None


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
