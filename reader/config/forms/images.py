"""Container images: is it a vLLM image, and which vLLM release does its tag name.

A tag names a release when it starts with one (`v0.9.2`, `v0.9.2-cu128`, `v0.6.2-distributed`,
`v0.7.3.self.post1`, AWS DLC `0.11.0-gpu-py312-cu128`) or carries one after `vllm_` (ROCm
`rocm6.3.1_vllm_0.8.5_20250521`). A tag that starts with a build date (Vertex AI Model Garden's
`20250312_0916_RC01`) is read as the newest checked release published by that day (release_dates.yaml), and the
report says it was inferred. Any other tag (`latest`, `nightly-<sha>`, a PR build, a digest, a date past the
dated releases) names none: the version chooser then assumes the newest release it knows and says so.
"""
from __future__ import annotations

import datetime
import re
from functools import lru_cache
from pathlib import Path
from typing import Optional

import yaml

from ..invocation import Hint
from ..model import SourceLoc

_LEADING_VERSION = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?)(?![\d])")
_EMBEDDED_VERSION = re.compile(r"vllm[_-]v?(\d+\.\d+\.\d+)", re.I)
_BUILD_DATE = re.compile(r"^(20\d{2})(\d{2})(\d{2})(?![\d])")
# Images built on vLLM whose tags number another project's releases: lmcache/vllm-openai:v0.3.7 is LMCache 0.3.7
# on some vLLM (LMCache's Docker docs, docs.lmcache.ai/getting_started/installation.html; the production-stack
# tutorials pin these tags), so its tag says nothing of the vLLM release.
_TAGGED_BY_ANOTHER_PROJECT = ("lmcache/vllm-openai",)


def is_vllm_image(image: str) -> bool:
    return "vllm" in image.lower()


def image_tag(image: str) -> str:
    """The tag of an image reference; 'latest' when it has none (as docker pulls it)."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return f"@{digest}" if digest else "latest"


def version_from_image(image: Optional[str]) -> Optional[str]:
    """The release an image tag names ('0.9.2'), or None when the tag names none."""
    if not image or _repository(image) in _TAGGED_BY_ANOTHER_PROJECT:
        return None
    tag = image_tag(image)
    m = _LEADING_VERSION.match(tag) or _EMBEDDED_VERSION.search(tag)
    return m.group(1) if m else None


def _repository(image: str) -> str:
    name = image.partition("@")[0]
    if ":" in name.rsplit("/", 1)[-1]:
        name = name.rsplit(":", 1)[0]
    return name.removeprefix("docker.io/").lower()


@lru_cache(maxsize=1)
def _release_dates() -> tuple[tuple[datetime.date, str], ...]:
    table = yaml.safe_load((Path(__file__).parent / "release_dates.yaml").read_text(encoding="utf-8"))
    return tuple(sorted((day, tag.lstrip("v")) for tag, day in table["releases"].items()))


def release_at(day: datetime.date) -> Optional[tuple[str, datetime.date, datetime.date]]:
    """(release, its date, the next dated release's date) for the newest dated release out by `day`; None when
    `day` is before the first or on or after the last (a release since may be missing from the table)."""
    dates = _release_dates()
    for (published, tag), (following, _) in zip(dates, dates[1:]):
        if published <= day < following:
            return tag, published, following
    return None


def release_from_build_date(tag: str) -> Optional[tuple[str, str]]:
    """(release, why) for a tag that starts with a build date the dated releases bracket, else None."""
    m = _BUILD_DATE.match(tag)
    if not m:
        return None
    try:
        day = datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None
    found = release_at(day)
    if found is None:
        return None
    release, published, following = found
    return release, (f"built {day.isoformat()}: vLLM {release} (published {published.isoformat()}) was the newest "
                     f"checked release then, the next came {following.isoformat()}")


def version_hint(image: Optional[str], loc: Optional[SourceLoc]) -> Optional[Hint]:
    """What a vLLM image says about the version: its release, the release of its build date, or its tag when
    that names none."""
    if not image or not is_vllm_image(image):
        return None
    if _repository(image) in _TAGGED_BY_ANOTHER_PROJECT:  # named whole, so that no release is read from it
        return Hint(f"{_repository(image)}:{image_tag(image)}", f"image tag of {image}, which numbers that image's "
                    "own releases", loc)
    found = version_from_image(image)
    if found is None:
        dated = release_from_build_date(image_tag(image))
        if dated is not None:
            return Hint(dated[0], f"image tag of {image}, {dated[1]}", loc, inferred=True)
    return Hint(found or image_tag(image), f"image tag of {image}", loc)
