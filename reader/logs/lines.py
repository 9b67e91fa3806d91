"""A vLLM log as records: each line stripped of what wraps it, keeping what vLLM itself printed.

Real logs arrive wrapped: `kubectl logs --timestamps`, docker compose service columns, systemd's
journal, Ray's `(Actor pid=.., ip=..)` tags and `[repeated 3x across cluster]` suffixes, CI
timestamps, TorchServe's MODEL_LOG prefix, k9s panes, Markdown quotes, ANSI colours (real or in
caret notation), and vLLM's own `(EngineCore_DP0 pid=1) INFO 05-12 08:01:39 [file.py:271]` header.
A line GitHub or a terminal wrapped mid-word is joined back onto the record it belongs to.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Optional

_ANSI = re.compile(r"(?:\x1b|\^\[)\[[0-9;?]*[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

# Wrappers that other tools put in front of a line, tried in order until none matches.
_OUTER = [
    re.compile(r"^(?:>\s?|▎\s?|│\s?|\|\s)"),  # Markdown quote, pasted quote bars, k9s pane border
    re.compile(r"^\S{3,4} {1,2}\d{1,2} \d\d:\d\d:\d\d \S+ [\w.\-/]+\[\d+\]: "),  # systemd journal
    re.compile(r"^\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?\s+"
               r"(?:\[(?:INFO|WARN|WARNING|ERROR|DEBUG) ?\] \S+ MODEL_LOG -\s?)?"),  # kubectl/CI/TorchServe
    re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \| [^|]+ \| "),  # log-aggregator columns
    re.compile(r"^[A-Za-z0-9][\w.\-/]*\s+\| "),  # docker compose service column
    re.compile(r"^\[rank\d+\]:\s?"),  # torch's per-rank prefix
]
_PROCESS = re.compile(r"^\(([A-Za-z_][\w\-.:]*)((?: [\w\-]+=[^,)\s]+,?)*)\)\s?")
_STAGE = re.compile(r"^\[Stage-\d+\] ")
_HEADER = re.compile(
    r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|[A-Z]{1,7})? ?"
    r"(?P<stamp>\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d+)? "
    r"(?:\[(?P<where>[^\]\s]+:\d+)\]|(?P<old_where>[\w./\-]+:\d+)\])\s?")
_WHERE_ONLY = re.compile(r"^\[(?P<where>[\w./\-]+\.py:\d+)\]\s")
_RAY_REPEAT = re.compile(r"\s*\[repeated \d+x across cluster\]\s*$")
_TRAILING_BORDER = re.compile(r"\s*│\s*$")
# A fragment of a key=value list or a mid-word cut: what a wrapped continuation starts with.
_FRAGMENT = re.compile(r"^\s?(?:,|[A-Za-z_\-][\w\-./]*(?:=|, ))")
_KEY_VALUES = re.compile(r"(?:\w+=[^,]*, ){3}")
_ERROR_TAIL = re.compile(r"^\s*(?:Based on the available memory|Try increasing|Decrease GPU memory|Value error, "
                         r"|Assertion failed, )")
_LOWER_START = re.compile(r"^\s?[a-z0-9(]")
_EXCEPTION = re.compile(r"^\s*[\w.]*(?:Error|Exception)\b:?")


@dataclass
class LogLine:
    """One record of the log: where it came from and what vLLM printed."""

    number: int  # 1-based line in the input where the record starts
    raw: str
    text: str  # the message, without any prefix
    process: Optional[str] = None  # innermost process tag, e.g. "EngineCore_DP0 pid=7110"
    processes: list[str] = field(default_factory=list)  # every tag, outermost first (Ray actor, engine)
    level: Optional[str] = None
    stamp: Optional[str] = None  # vLLM's "MM-DD HH:MM:SS"
    where: Optional[str] = None  # vLLM's "file.py:line"
    lines: int = 1  # physical lines joined into this record

    @property
    def has_header(self) -> bool:
        return self.stamp is not None or self.where is not None

    @property
    def role(self) -> Optional[str]:
        """The process name without its pid: 'APIServer', 'EngineCore_DP0', 'Worker_TP1'."""
        return self.process.split(" ", 1)[0] if self.process else None


def strip_ansi(text: str) -> str:
    return _CONTROL.sub("", _ANSI.sub("", text))


def parse_line(raw: str, number: int) -> LogLine:
    text = _TRAILING_BORDER.sub("", strip_ansi(raw).rstrip("\r\n")).lstrip(" \t")
    text = _strip_outer(text)
    processes: list[str] = []
    while True:
        m = _PROCESS.match(text)
        if not m:
            break
        processes.append((m.group(1) + m.group(2).replace(",", "").rstrip()).strip())
        text = _strip_outer(text[m.end():].lstrip())
    text = _STAGE.sub("", text)
    line = LogLine(number=number, raw=raw, text=text, processes=processes,
                   process=processes[-1] if processes else None)
    header = _HEADER.match(text)
    if header:
        line.level = _level(header.group("level"))
        line.stamp = header.group("stamp")
        line.where = header.group("where") or header.group("old_where")
        text = text[header.end():]
    else:
        only = _WHERE_ONLY.match(text)
        if only:
            line.where = only.group("where")
            text = text[only.end():]
    line.text = _RAY_REPEAT.sub("", text).rstrip()
    return line


def _strip_outer(text: str) -> str:
    changed = True
    while changed:
        changed = False
        for pattern in _OUTER:
            m = pattern.match(text)
            if m and m.end() > 0:
                text = text[m.end():].lstrip(" \t") if pattern is not _OUTER[0] else text[m.end():]
                changed = True
    return text


def _level(text: Optional[str]) -> Optional[str]:
    if not text:
        return None
    for full in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        if full.endswith(text) or full.startswith(text):
            return full  # a paste cut inside the level ("O 04-11 ...") still says which one
    return text


def records(text: str) -> Iterator[LogLine]:
    """The log's records, in order; a physical line that continues the previous record is joined to it."""
    current: Optional[LogLine] = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = parse_line(raw, number)
        if current is not None and _continues(current, line):
            spaced = raw[:1] in (" ", "\t") or current.text.rstrip()[-1:] in ",;:." or line.text[:1].isupper()
            glue = " " if spaced and not line.text.startswith(" ") else ""
            current.text = current.text.rstrip("\n") + glue + line.text
            current.raw += "\n" + raw
            current.lines += 1
            continue
        if current is not None:
            yield current
        current = line
    if current is not None:
        yield current


def _continues(current: LogLine, line: LogLine) -> bool:
    """A physical line is the wrapped tail of the record before it (a GitHub or terminal line break)."""
    if line.has_header or not line.text.strip() or not current.text:
        return False
    if line.processes and current.processes and line.processes != current.processes:
        return False
    if _EXCEPTION.match(line.text):
        return False  # a traceback's "raise ValueError(" is followed by the error itself, not by its tail
    if _EXCEPTION.match(current.text):  # an error message wrapped over several lines
        return bool(_ERROR_TAIL.match(line.text)) or (
            not current.text.rstrip().endswith(".") and bool(_LOWER_START.match(line.text)))
    if not (current.has_header or _KEY_VALUES.search(current.text)):
        return False  # e.g. a traceback's source line, which may well end in an open bracket
    if _unbalanced(current.text):
        return True
    return bool(_FRAGMENT.match(line.text)) and _looks_cut(current.text)


def _looks_cut(text: str) -> bool:
    """The record ends mid-list: its last item has no closing punctuation vLLM would print."""
    tail = text.rstrip()
    return bool(tail) and tail[-1] not in ".)}]!?:" and ("=" in tail[-80:] or "," in tail[-80:])


def _unbalanced(text: str) -> bool:
    """More brackets opened than closed; quotes count only where a literal can start (not "model's")."""
    depth = 0
    quote: Optional[str] = None
    before = ""
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in "'\"" and before in ("", "=", "(", "[", "{", " "):
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        before = ch
    return depth > 0
