"""Markdown (READMEs, runbooks, docs): the launches in its fenced code blocks.

Each ``` or ~~~ block is read by its language (`bash`, `console`, `yaml`, `dockerfile`, `json`, ...) or, when
it has none, by its content, through the loader's own form detection; a `console` block's `$ ` prompts mark
its commands and the rest is output. Blocks in languages that do not start a server (python, js, ...) are
skipped: vLLM's offline `LLM(...)` class is not a serving launch.
"""
from __future__ import annotations

import re
from typing import Callable, Optional

from ..invocation import Invocation

ReadBlock = Callable[[str, int, Optional[str]], list[Invocation]]  # (text, first line, kind or None) -> launches

# Any indentation: a block nested in a list item or in an mkdocs-material tab (`=== "8xH100"`, whose content is
# indented by four) is still fenced; vLLM's recipes put every per-GPU launch in such tabs.
_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})\s*([\w+-]*)")
_SHELL = {"sh", "bash", "shell", "zsh", "shell-session", "console", "terminal", "powershell", "ps1", "cmd"}
_KINDS = {"yaml": "yaml", "yml": "yaml", "dockerfile": "dockerfile", "docker": "dockerfile", "json": "json",
          "makefile": "makefile", "make": "makefile", "just": "justfile", "procfile": "procfile"}
_SKIPPED = {"python", "py", "javascript", "js", "typescript", "ts", "go", "rust", "java", "c", "cpp", "html",
            "css", "sql", "diff", "mermaid", "toml", "ini"}


def markdown(text: str, read_block: ReadBlock) -> tuple[list[Invocation], str]:
    found: list[Invocation] = []
    blocks = list(_blocks(text))
    for line, lang, body in blocks:
        if lang in _SKIPPED:
            continue
        if lang in _SHELL:
            body = _commands_of_console(body)
        kind = "shell" if lang in _SHELL else _KINDS.get(lang)
        for inv in read_block(body, line, kind):
            inv.label = f"```{lang or ''} block at line {line - 1}, {inv.label}"
            found.append(inv)
    return found, f"searched {len(blocks)} fenced code block(s)"


def _blocks(text: str):
    """(first line of the body, language, body) of every fenced block."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(2), m.group(3).lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not re.match(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$",
                                                lines[j]):
            body.append(lines[j][len(m.group(1)):] if lines[j].startswith(m.group(1)) else lines[j])
            j += 1
        yield i + 2, lang, "\n".join(body) + "\n"
        i = j + 1


def _commands_of_console(body: str) -> str:
    """With `$ ` prompts, only the prompted lines (and their continuations) are commands; blank out the rest so
    line numbers stay true."""
    lines = body.splitlines()
    if not any(re.match(r"^\s*\$ ", ln) for ln in lines):
        return body
    out, continued = [], False
    for line in lines:
        m = re.match(r"^\s*\$ (.*)$", line)
        if m or continued:
            command = m.group(1) if m else line
            out.append(command)
            continued = command.rstrip().endswith("\\")
        else:
            out.append("")
    return "\n".join(out) + "\n"
