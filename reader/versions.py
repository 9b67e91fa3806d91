"""vLLM versions: the release tags we hold facts for, comparison, and version ranges.

Facts (flags, defaults, rules) were read at 41 release tags (see rules/flags/README.md). A user
version between two tags is answered with the nearest checked tag at or below it, and the
report says so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .errors import ReaderError
from .resources import data_dir

VersionTuple = tuple[int, int, int]

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str) -> VersionTuple:
    """'v0.8.5.post1' -> (0, 8, 5). Raises ValueError on text that is not a version."""
    m = _VERSION_RE.match(str(text).strip())
    if not m:
        raise ValueError(f"not a vLLM version: {text!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def format_version(v: VersionTuple) -> str:
    return f"{v[0]}.{v[1]}.{v[2]}"


@lru_cache(maxsize=1)
def known_versions() -> tuple[VersionTuple, ...]:
    """Release tags with a flag table under rules/flags/, oldest first."""
    found = []
    for path in data_dir("rules").joinpath("flags").glob("v*.json"):
        found.append(parse_version(path.stem))
    return tuple(sorted(found))


def newest_version() -> VersionTuple:
    return known_versions()[-1]


@dataclass(frozen=True)
class VersionChoice:
    """The version the user asked for, and the checked tag whose facts answer for it."""

    requested: str
    tag: VersionTuple
    exact: bool
    origin: str  # "user", "image", "default"

    @property
    def tag_str(self) -> str:
        return format_version(self.tag)

    def note(self) -> str | None:
        if self.origin == "default":
            return (f"vLLM version not given: using {self.tag_str}, the newest version this tool knows "
                    "(set it with --vllm-version or the vllm-reader comment block)")
        if not self.exact:
            return (f"vLLM {self.requested} is not a checked release: using the facts of {self.tag_str}, "
                    "the nearest checked release at or below it")
        return None


def choose_version(requested: str | None, origin: str = "user") -> VersionChoice:
    known = known_versions()
    if requested is None or str(requested).strip().lower() in ("", "latest", "nightly", "main"):
        return VersionChoice(str(requested or "latest"), known[-1], requested is not None, "default"
                             if requested is None else origin)
    try:
        want = parse_version(requested)
    except ValueError:
        raise ReaderError(f"'{requested}' is not a vLLM version (expected something like 0.18.0).",
                          key="vllm_version") from None
    if want < known[0]:
        raise ReaderError(
            f"vLLM {requested} is older than the oldest release this tool knows ({format_version(known[0])}).",
            key="vllm_version")
    if want > known[-1]:
        return VersionChoice(str(requested), known[-1], False, origin)
    at_or_below = [v for v in known if v <= want]
    tag = at_or_below[-1]
    return VersionChoice(str(requested), tag, tag == want, origin)


@dataclass(frozen=True)
class VersionRange:
    """Inclusive range of versions; either end may be open. Written 'A..B', 'A..', '..B' or 'A'."""

    low: VersionTuple | None
    high: VersionTuple | None

    @classmethod
    def parse(cls, text: str) -> "VersionRange":
        text = str(text).strip()
        if ".." in text:
            low, high = (part.strip() for part in text.split("..", 1))
            return cls(parse_version(low) if low else None, parse_version(high) if high else None)
        if text.startswith(">="):
            return cls(parse_version(text[2:]), None)
        if text.startswith("<="):
            return cls(None, parse_version(text[2:]))
        v = parse_version(text)
        return cls(v, v)

    def contains(self, v: VersionTuple) -> bool:
        return (self.low is None or v >= self.low) and (self.high is None or v <= self.high)

    def __str__(self) -> str:
        low = format_version(self.low) if self.low else ""
        high = format_version(self.high) if self.high else ""
        if self.low == self.high and self.low:
            return low
        return f"{low}..{high}"
