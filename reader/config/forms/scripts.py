"""Launches in shell text: a script, one command line, the recipe of a Makefile, a Dockerfile's shell form.

Every command the script would run is tried as a launch. Here-documents are read too: a body fed to a
shell (`bash <<EOF`) or written to a file (`cat > start.sh <<EOF`) is searched like the script around it, a
body another program reads (`kubectl apply -f - <<EOF`) goes to `read_other` (the loader's own form
detection), and a body written to a file that a launch names with `--config FILE` supplies that launch's
config entries, as vLLM would read the file.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Optional

from ...errors import ReaderError
from ..invocation import ConfigEntry, Invocation
from ..model import Note, SourceLoc
from ..shell import Heredoc, ShellCommand, run_script
from ..tokens import Token
from ..yamlsafe import load_yaml_documents
from .commands import find_launch, note_wrapper, wrapper_env
from .config_yaml import is_vllm_config

SHELLS = {"bash", "sh", "zsh", "dash", "ash"}
ReadOther = Callable[[str, int], list[Invocation]]  # (text, first line) -> launches, any form


def script_invocations(text: str, path: Optional[str], set_vars: dict[str, str], form: str = "shell",
                       powershell: bool = False, first_line: int = 1,
                       read_other: Optional[ReadOther] = None) -> list[Invocation]:
    env_lines: list[tuple[str, int]] = []
    found: list[Invocation] = []
    written: dict[str, Heredoc] = {}  # files the script writes from here-documents
    for command in run_script(text, path, dict(set_vars), powershell=powershell, env_file_lines=env_lines):
        tokens = [shift(tok, first_line - 1) for tok in command.tokens]
        inv = argv_invocation(tokens, dict(command.env), form, f"line {command.line + first_line - 1}", path,
                              set_vars)
        if inv is not None:
            _config_file(inv, tokens, written, path, first_line)
            note_dropped(inv, command.dropped, SourceLoc(file=path, line=command.line + first_line - 1))
            found.append(inv)
        for doc in command.heredocs:
            found += _heredoc_launches(command, doc, path, set_vars, form, first_line, written, read_other)
    for name, line in env_lines:
        for inv in found:
            inv.notes.append(Note(level="info", loc=SourceLoc(file=path, line=line + first_line - 1), message=(
                f"line {line} is read as an env-file assignment ({name}=<rest of line>): a shell would run the "
                "second word as a command, docker --env-file keeps the whole line")))
    return found


def note_dropped(inv: Invocation, dropped: list[str], loc: SourceLoc) -> None:
    """One note for every `${X:+...}` of an undefined X: what a shell with them unset gives, and how to set them."""
    if not dropped:
        return
    names = [m.group(1) for m in (re.match(r"\$\{(\w+)", text) for text in dropped) if m]
    shown = dropped if len(dropped) <= 3 else dropped[:3] + [f"and {len(dropped) - 3} more"]
    subject = f"{shown[0]} is" if len(dropped) == 1 else f"{', '.join(shown)} are"
    inv.notes.append(Note(level="info", loc=loc, message=(
        f"{subject} read as empty: {', '.join(names) if len(names) <= 3 else 'their variables'} "
        f"{'is' if len(names) == 1 else 'are'} not defined in this file, and a shell with "
        f"{'it' if len(names) == 1 else 'them'} unset adds nothing. Supply {'it' if len(names) == 1 else 'them'} "
        f"with --set {names[0] if names else 'NAME'}=VALUE to read what {'it adds' if len(names) == 1 else 'they add'}")))


def argv_invocation(tokens: list[Token], env: dict[str, str], form: str, label: str, path: Optional[str],
                    set_vars: Optional[dict[str, str]] = None) -> Optional[Invocation]:
    """The launch an argument vector starts, including `sh -c 'script'` (the launch inside the script)."""
    inv = find_launch(list(tokens), dict(env), form, label, path)
    at = next((k for k in range(len(tokens)) if is_shell_c(tokens[k:])), None)
    if inv is not None or at is None:
        return inv
    script = next(tok for tok in tokens[at + 1:] if not tok.text.startswith("-"))
    line = script.loc.line if script.loc and script.loc.line else 1
    outer_env = {**env, **wrapper_env(tokens[:at])}
    inner = script_invocations(script.text, path, {**(set_vars or {}), **outer_env}, form, first_line=line)
    if not inner:
        return None
    inner[0].label = label
    inner[0].env = {**outer_env, **inner[0].env}
    if at:
        note_wrapper(inner[0], tokens[:at])
    return inner[0]


def is_shell_c(tokens: list[Token]) -> bool:
    """`bash -c SCRIPT`, `/bin/sh -lc SCRIPT`, `sh -ec SCRIPT`."""
    return (len(tokens) >= 3 and tokens[0].text.rsplit("/", 1)[-1] in SHELLS
            and any(re.fullmatch(r"-\w*c\w*", tok.text) for tok in tokens[1:3]))


def shift(tok: Token, by: int) -> Token:
    if not by or tok.loc is None or tok.loc.line is None:
        return tok
    return Token(tok.text, SourceLoc(file=tok.loc.file, line=tok.loc.line + by), tok.unresolved, tok.spelling,
                 tok.typed_value)


# ---- here-documents ----------------------------------------------------------------------------

def _heredoc_launches(command: ShellCommand, doc: Heredoc, path: Optional[str], set_vars: dict[str, str], form: str,
                      first_line: int, written: dict[str, Heredoc],
                      read_other: Optional[ReadOther]) -> list[Invocation]:
    words = [tok.text for tok in command.tokens]
    target = command.writes[0] if command.writes else _tee_target(words)
    line = doc.line + first_line - 1
    if target is not None:
        written[target] = doc
        if is_config_text(doc.body):
            return []  # a `vllm serve --config` file: the launch that names it reads it
    program = words[0].rsplit("/", 1)[-1] if words else ""
    if read_other is not None and program not in SHELLS | {"ssh"}:
        return read_other(doc.body, line)  # a manifest for kubectl, a script written to a file, ...
    # An unquoted body is expanded with the script's variables when it is read; a quoted one later, by
    # whatever runs it: the script's variables are the best guess for both.
    variables = {**command.variables, **set_vars}
    return script_invocations(doc.body, path, variables, form, first_line=line, read_other=read_other)


def is_config_text(text: str) -> bool:
    try:
        docs = load_yaml_documents(text, None)
    except ReaderError:
        return False
    return bool(docs) and is_vllm_config(docs[0].data)


def _tee_target(words: list[str]) -> Optional[str]:
    """`tee F` / `tee -a F`: the file a here-document is written to."""
    if not words or words[0].rsplit("/", 1)[-1] != "tee":
        return None
    rest = [w for w in words[1:] if not w.startswith("-")]
    return rest[0] if rest else None


def _config_file(inv: Invocation, tokens: list[Token], written: dict[str, Heredoc], path: Optional[str],
                 first_line: int) -> None:
    """`--config FILE`: the file's keys become the launch's config entries (command-line flags still win)."""
    for i, tok in enumerate(tokens):
        name, eq, value = tok.text.partition("=")
        if name != "--config" or (not eq and i + 1 >= len(tokens)):
            continue
        target = value if eq else tokens[i + 1].text
        doc = written.get(target)
        if doc is not None:
            _add_entries(inv, doc.body, path, doc.line + first_line - 1, f"written by the here-document at line "
                         f"{doc.line + first_line - 1}")
            return
        beside = Path(path).parent / target if path else None
        if beside is not None and beside.is_file() and beside.stat().st_size < 1_000_000:
            _add_entries(inv, beside.read_text(encoding="utf-8", errors="replace"), str(beside), 1,
                         f"found beside {Path(path).name}")
        return


def _add_entries(inv: Invocation, text: str, file: Optional[str], first_line: int, where: str) -> None:
    docs = load_yaml_documents(text, file)
    data = docs[0].data if docs else None
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        line = docs[0].line((str(key),))
        inv.entries.append(ConfigEntry(str(key), value, SourceLoc(file=file, line=(line or 1) + first_line - 1)))
    inv.notes.append(Note(level="info", loc=SourceLoc(file=file, line=first_line), message=(
        f"--config file read ({where}); flags on the command line win over its keys, as in vLLM")))
