"""A report in the format asked for: Markdown, its JSON (the pydantic model as is), or SARIF 2.1.0."""
from __future__ import annotations

import json
from typing import Any, Callable

from pydantic import BaseModel

from ..errors import ReaderError

FORMATS = ("markdown", "json", "sarif")


def render_as(fmt: str, report: BaseModel, markdown: Callable[[Any], str], sarif: Callable[[Any], dict]) -> str:
    if fmt == "markdown":
        return markdown(report)
    if fmt == "json":
        return json.dumps(report.model_dump(mode="json"), indent=2) + "\n"
    if fmt == "sarif":
        return json.dumps(sarif(report), indent=2) + "\n"
    raise ReaderError(f"unknown format '{fmt}': expected one of {', '.join(FORMATS)}.", key="--format")
