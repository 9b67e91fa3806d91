"""Container images: is it a vLLM image, and which vLLM release does its tag name.

A tag names a release when it starts with one (`v0.9.2`, `v0.9.2-cu128`, `v0.6.2-distributed`,
`v0.7.3.self.post1`, AWS DLC `0.11.0-gpu-py312-cu128`) or carries one after `vllm_` (ROCm
`rocm6.3.1_vllm_0.8.5_20250521`). Any other tag (`latest`, `nightly-<sha>`, a date, a PR build, a
digest) names none: the version chooser then assumes the newest release it knows and says so.
"""
from __future__ import annotations

import re
from typing import Optional

from ..invocation import Hint
from ..model import SourceLoc

_LEADING_VERSION = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?)(?![\d])")
_EMBEDDED_VERSION = re.compile(r"vllm[_-]v?(\d+\.\d+\.\d+)", re.I)


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
    if not image:
        return None
    tag = image_tag(image)
    m = _LEADING_VERSION.match(tag) or _EMBEDDED_VERSION.search(tag)
    return m.group(1) if m else None


def version_hint(image: Optional[str], loc: Optional[SourceLoc]) -> Optional[Hint]:
    """What a vLLM image says about the version: its release, or its tag when that names none."""
    if not image or not is_vllm_image(image):
        return None
    found = version_from_image(image)
    return Hint(found or image_tag(image), f"image tag of {image}", loc)
