"""vLLM versions: the release tags we hold facts for, comparison, and version ranges.

Facts (flags, defaults, rules) were read at 41 release tags (see rules/flags/README.md). A user
version between two tags is answered with the nearest checked tag at or below it, and the
report says so; a version older or newer than every tag is answered with the nearest end of the
tables, and the report says so loudly.
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


_UNPINNED = ("latest", "nightly", "main", "dev")


@dataclass(frozen=True)
class VersionChoice:
    """The version the user asked for, and the checked tag whose facts answer for it.

    `span` says where the requested version lies against the checked releases: "inside" (a checked
    tag, or between two), "older" / "newer" (outside the tables: the nearest end answers, loudly),
    "unknown" (no version at all, or a tag such as `latest` or `nightly-<sha>` that names none: the
    newest answers).
    """

    requested: str
    tag: VersionTuple
    exact: bool
    origin: str  # "user", "cli", "comment", "image", "default"
    span: str = "inside"

    @property
    def tag_str(self) -> str:
        return format_version(self.tag)

    @property
    def outside_tables(self) -> bool:
        return self.span in ("older", "newer")

    @property
    def may_postdate_tables(self) -> bool:
        """A release the user named that the tables may not hold: outside them, or `latest` / `nightly-<sha>`."""
        return self.outside_tables or (self.span == "unknown" and self.origin != "default")

    @property
    def requested_tuple(self) -> VersionTuple | None:
        try:
            return parse_version(self.requested)
        except ValueError:
            return None

    def note(self) -> str | None:
        if self.origin == "default":
            return (f"vLLM version not given: using {self.tag_str}, the newest version this tool knows "
                    "(set it with --vllm-version or the vllm-reader comment block)")
        if self.span == "unknown":
            return (f"'{self.requested}' names no vLLM release: using {self.tag_str}, the newest version this tool "
                    "knows (set the release with --vllm-version)")
        if self.span == "older":
            return (f"vLLM {self.requested} is older than the oldest release this tool holds facts for "
                    f"({self.tag_str}): its flags, defaults and rules are read as {self.tag_str}'s, which may differ "
                    f"from what {self.requested} does")
        if self.span == "newer":
            return (f"vLLM {self.requested} is newer than the newest release this tool holds facts for "
                    f"({self.tag_str}): its flags, defaults and rules are read as {self.tag_str}'s; options added "
                    "since are kept unchecked")
        if not self.exact:
            return (f"vLLM {self.requested} is not a checked release: using the facts of {self.tag_str}, "
                    "the nearest checked release at or below it")
        return None


def is_unpinned(text: str) -> bool:
    """`latest`, `nightly`, `nightly-<sha>`, `main`: tags that follow vLLM's development, not a release."""
    low = str(text).strip().lower()
    return low in ("",) + _UNPINNED or low.startswith(tuple(f"{word}-" for word in _UNPINNED))


def choose_version(requested: str | None, origin: str = "user") -> VersionChoice:
    """The checked tag that answers for `requested`. Only text that is no version at all, given by the
    user, is bad input; a version outside the tables is read with the nearest end of them."""
    known = known_versions()
    if requested is None:
        return VersionChoice("latest", known[-1], False, "default", "unknown")
    text = str(requested).strip()
    if is_unpinned(text):
        return VersionChoice(text or "latest", known[-1], False, origin, "unknown")
    try:
        want = parse_version(text)
    except ValueError:
        if origin == "image":
            return VersionChoice(text, known[-1], False, origin, "unknown")
        raise ReaderError(f"'{requested}' is not a vLLM version (expected something like 0.18.0).",
                          key="vllm_version") from None
    if want < known[0]:
        return VersionChoice(text, known[0], False, origin, "older")
    if want > known[-1]:
        return VersionChoice(text, known[-1], False, origin, "newer")
    tag = [v for v in known if v <= want][-1]
    return VersionChoice(text, tag, tag == want, origin)


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
