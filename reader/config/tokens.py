"""A command-line token that remembers where it came from."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .model import SourceLoc

# $(VAR) is Kubernetes' dependent-variable syntax; ${VAR}, ${VAR:-x} and $VAR are the shell's.
PLACEHOLDER_RE = re.compile(r"\$\((?P<k8s>[A-Za-z_][A-Za-z0-9_]*)\)|\$\{#?(?P<brace>[A-Za-z_][A-Za-z0-9_]*)[^}]*\}"
                            r"|\$(?P<bare>[A-Za-z_][A-Za-z0-9_]*)|\$\(\((?P<arith>[^)]*)\)\)")


@dataclass(frozen=True)
class Token:
    text: str
    loc: Optional[SourceLoc] = None
    unresolved: tuple[str, ...] = ()  # placeholder texts the loader could not expand
    spelling: Optional[str] = None  # the user's own spelling when the token was synthesised (YAML key)
    typed_value: object = field(default=None, compare=False)  # a YAML scalar/list/dict behind the text

    @property
    def is_placeholder_only(self) -> bool:
        return bool(self.unresolved) and self.text.strip() in self.unresolved


def placeholder_name(text: str) -> str:
    m = PLACEHOLDER_RE.search(text)
    if not m:
        return text
    if m.group("arith") is not None:  # shell arithmetic: the variable to supply is the first one it names
        named = re.search(r"[A-Za-z_][A-Za-z0-9_]*", m.group("arith"))
        return named.group(0) if named else text
    return m.group("k8s") or m.group("brace") or m.group("bare") or text
