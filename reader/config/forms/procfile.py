"""Procfiles (Heroku, foreman, honcho, Dokku): one `process: command` per line, each run by a shell.
Source: https://devcenter.heroku.com/articles/procfile"""
from __future__ import annotations

import re
from typing import Optional

from ..invocation import Invocation
from .scripts import script_invocations

_LINE = re.compile(r"^([A-Za-z0-9_.-]+):[ \t]*(.+)$")


def procfile(text: str, path: Optional[str], set_vars: dict[str, str]) -> tuple[list[Invocation], str]:
    found: list[Invocation] = []
    processes = 0
    for number, line in enumerate(text.splitlines(), start=1):
        m = _LINE.match(line)
        if not m:
            continue
        processes += 1
        for inv in script_invocations(m.group(2), path, set_vars, "procfile", first_line=number):
            inv.label = f"process '{m.group(1)}' (line {number})"
            found.append(inv)
    return found, f"searched the commands of {processes} process type(s)"
