"""Where the shipped data lives.

`rules/` and `templates/` sit at the top of the repository and are copied into the wheel as
`reader/_data/...`; catalogs live inside the package. Look in the installed place first, then the
checkout, so the CLI works both installed and from a source tree.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def data_dir(name: str) -> Path:
    """Path of a top-level data folder ('rules' or 'templates')."""
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"vllm-reader data folder '{name}' is missing from this installation")
