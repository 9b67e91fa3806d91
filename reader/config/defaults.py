"""The per-version defaults table (rules/defaults.yaml), read once."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

import yaml

from ..errors import ReaderError
from ..resources import data_dir
from ..versions import VersionRange, VersionTuple


@lru_cache(maxsize=1)
def defaults_table() -> dict[str, Any]:
    path = data_dir("rules") / "defaults.yaml"
    try:
        data = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as err:
        raise ReaderError(f"the shipped defaults table is malformed: {err}", file=str(path)) from None
    if not isinstance(data, dict) or data.get("schema") != 1:
        raise ReaderError("the shipped defaults table has an unknown schema", file=str(path))
    return data


def entry_for(entries: list[dict[str, Any]], version: VersionTuple) -> Optional[dict[str, Any]]:
    """The first entry whose `versions` range holds this version."""
    for entry in entries:
        if VersionRange.parse(entry["versions"]).contains(version):
            return entry
    return None


def scalar_default(name: str, version: VersionTuple) -> Optional[dict[str, Any]]:
    entries = defaults_table()["scalars"].get(name)
    return entry_for(entries, version) if entries else None


def section(name: str, version: VersionTuple) -> Optional[dict[str, Any]]:
    return entry_for(defaults_table()[name], version)


def adjustment_applies(name: str, version: VersionTuple) -> tuple[bool, str]:
    entry = defaults_table()["batch_adjustments"][name]
    return VersionRange.parse(entry["versions"]).contains(version), entry["source"]
