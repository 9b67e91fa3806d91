"""The Jinja2 environment for Markdown reports, with escaping for anything that came from a config.

A config is untrusted text: a model name or flag value must not be able to open a link, an HTML
tag or a table cell in the report. Every value that reaches a template goes through `md` (prose)
or `code` (an inline code span); templates never print raw config strings.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import jinja2

from ..resources import data_dir

# Characters that can start emphasis, links, images, code, HTML or a table cell anywhere in a line.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]!|~])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def md(value: Any) -> str:
    """Escape text for Markdown prose and table cells; newlines become spaces."""
    text = " ".join(str(value).split())
    text = "".join(_HTML.get(ch, ch) for ch in text)
    return _MD_SPECIAL.sub(r"\\\1", text)


def code(value: Any) -> str:
    """An inline code span that the value cannot break out of (nor out of a table cell)."""
    text = " ".join(str(value).split()).replace("|", "\u2502")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def number(value: Any, digits: int = 0) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return md(value)


def value_text(value: Any) -> str:
    """A setting's value as an inline code span (None shows as 'unset')."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return code(str(value).lower())
    if isinstance(value, float):
        return code(f"{value:g}")
    return code(value)


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        autoescape=False,  # Markdown, not HTML: escaping is explicit through the filters below
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update({"md": md, "code": code, "number": number, "value": value_text})
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
