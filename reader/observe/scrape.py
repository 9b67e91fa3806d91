"""One scrape of a server's `/metrics` page: its text, when it was taken, and where from.

Saved scrapes are plain exposition text with one comment line on top saying when and where they were
taken (`# vllm-reader-scrape time=<unix seconds> source=<url>`); Prometheus's parser skips comment
lines, so a saved file is still a valid scrape. A file may hold several scrapes, each after its own
header line, and may be gzip-compressed (*.gz). A file without a header takes its modification time.
"""
from __future__ import annotations

import gzip
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ReaderError
from ..files import write_whole

HEADER = "# vllm-reader-scrape"
SUFFIXES = tuple(ext + gz for ext in (".prom", ".txt", ".metrics") for gz in ("", ".gz"))
_HEADER_RE = re.compile(r"^# vllm-reader-scrape time=(?P<time>[0-9.eE+-]+)(?: source=(?P<source>\S+))?[ \t]*$", re.M)


@dataclass(frozen=True)
class Scrape:
    text: str
    time: float          # unix seconds when it was taken
    source: str          # the URL or file it came from
    time_known: bool = True  # False: the file's modification time stands in


def header(time: float, source: str) -> str:
    return f"{HEADER} time={time:.3f} source={source}\n"


def save(scrapes: list[Scrape], path: Path) -> None:
    """All scrapes in one file, each after its header; gzip-compressed when the name ends in .gz."""
    text = "".join(header(s.time, s.source) + s.text + ("" if s.text.endswith("\n") else "\n") for s in scrapes)
    write_whole(path, text, compress=path.name.endswith(".gz"))


def load_files(paths: list[str]) -> list[Scrape]:
    """Every scrape in the files (a folder stands for its *.prom / *.txt files), oldest first."""
    scrapes: list[Scrape] = []
    for path in _expand(paths):
        scrapes.extend(_read(path))
    return sorted(scrapes, key=lambda s: s.time)


def _expand(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.name.endswith(SUFFIXES))
            if not found:
                raise ReaderError("the folder holds no saved scrapes (*.prom, *.txt or *.metrics files, or the "
                                  "same gzip-compressed).", file=name)
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            raise ReaderError("no such file or folder (expected a saved /metrics scrape, a folder of them, or an "
                              "http(s):// URL).", file=name)
    return out


def _read(path: Path) -> list[Scrape]:
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", errors="replace") as stream:
                text = stream.read()
        else:
            text = path.read_text(errors="replace")
    except (OSError, EOFError) as err:
        raise ReaderError(f"cannot read the file: {getattr(err, 'strerror', None) or err}.", file=str(path)) from None
    marks = list(_HEADER_RE.finditer(text))
    if not marks:
        return [Scrape(text=text, time=os.path.getmtime(path), source=str(path), time_known=False)]
    scrapes = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.end():end].lstrip("\n")
        scrapes.append(Scrape(text=body, time=float(mark.group("time")), source=mark.group("source") or str(path)))
    return scrapes
