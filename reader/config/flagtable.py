"""The options `vllm serve` accepts at one release, and where every option string ever existed.

Tables are data (rules/flags/v<X.Y.Z>.json, extracted from each release's source; see
rules/flags/README.md). This module answers three questions: which option does this spelling
mean at this version (exact, alias, `--no-` negation or unambiguous prefix, as argparse does),
what type does it take, and in which versions does an option that this one lacks exist.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional

from ..resources import data_dir
from ..versions import VersionTuple, format_version, known_versions, parse_version


@dataclass(frozen=True)
class OptionMatch:
    canonical: str  # the long option, e.g. "--enable-prefix-caching"
    spec: dict[str, Any]
    negated: bool = False  # matched a "--no-..." spelling
    via_prefix: bool = False  # matched as an unambiguous abbreviation


@dataclass
class FlagTable:
    version: VersionTuple
    options: dict[str, dict[str, Any]]  # canonical long option -> spec
    spellings: dict[str, tuple[str, bool]] = field(default_factory=dict)  # any accepted string -> (canonical, negated)
    by_dest: dict[str, str] = field(default_factory=dict)
    positional: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    parsers: dict[str, Any] = field(default_factory=dict)  # how the release reads values (human-readable ints)

    def __post_init__(self) -> None:
        for canonical, spec in self.options.items():
            self.spellings[canonical] = (canonical, False)
            for alias in spec.get("aliases", []):
                self.spellings[alias] = (canonical, False)
            for neg in spec.get("neg", []):
                self.spellings[neg] = (canonical, True)
            self.by_dest.setdefault(spec["dest"], canonical)

    @property
    def version_str(self) -> str:
        return format_version(self.version)

    def match(self, option: str) -> list[OptionMatch]:
        """All options this spelling can mean: one for a clean match, several when ambiguous, none when unknown."""
        if option in self.spellings:
            canonical, negated = self.spellings[option]
            return [OptionMatch(canonical, self.options[canonical], negated)]
        if not option.startswith("--") or len(option) < 3:
            return []
        # argparse's allow_abbrev: a unique prefix of a long option string is accepted.
        hits = {s: v for s, v in self.spellings.items() if s.startswith("--") and s.startswith(option)}
        targets = {(c, n) for c, n in hits.values()}
        return [OptionMatch(c, self.options[c], n, via_prefix=True) for c, n in sorted(targets)]

    def spec_for_dest(self, dest: str) -> Optional[dict[str, Any]]:
        canonical = self.by_dest.get(dest)
        return self.options[canonical] if canonical else None

    def suggestions(self, option: str, limit: int = 3) -> list[str]:
        return _close_options(option, self.spellings, limit)


@lru_cache(maxsize=None)
def flag_table(version: VersionTuple) -> FlagTable:
    path = data_dir("rules") / "flags" / f"v{format_version(version)}.json"
    data = json.loads(path.read_text())
    version = parse_version(data["version"])
    return FlagTable(
        version=version,
        options=_with_runtime_bounds(data["flags"], version),
        positional=data.get("positional", {}),
        source=data.get("_source", ""),
        parsers=data.get("parsers", {}),
    )


def _with_runtime_bounds(options: dict[str, dict[str, Any]], version: VersionTuple) -> dict[str, dict[str, Any]]:
    """The table's options with the bounds rules/flags/_runtime_bounds.yaml states for this release (a start-up
    failure no config class states), as `kind: runtime` bounds beside the ones read from the source."""
    for entry in _runtime_bounds():
        spec = options.get(entry["option"])
        if spec is None or not _in_range(version, entry["versions"]):
            continue
        bound = {"op": entry["op"], "value": entry["value"], "kind": "runtime", "error": entry["error"],
                 "message": entry["message"], "src": entry["src"]}
        options[entry["option"]] = {**spec, "bounds": [*spec.get("bounds", []), bound]}
    return options


@lru_cache(maxsize=1)
def _runtime_bounds() -> list[dict[str, Any]]:
    import yaml

    path = data_dir("rules") / "flags" / "_runtime_bounds.yaml"
    return yaml.safe_load(path.read_text())["bounds"]


def registry_for(dest: str, version: VersionTuple) -> Optional[dict[str, Any]]:
    """The values vLLM checks `dest` against at start-up at this release, when argparse does not (the option has no
    choices): {values, src, check, vllm_message}, from rules/flags/_registries.json (tools/import_registries.py);
    None when the release's registry was not extracted."""
    entry = _registries().get(dest)
    release = entry["releases"].get(format_version(version)) if entry else None
    spec = flag_table(version).spec_for_dest(dest)
    if release is None or spec is None or spec.get("choices"):
        return None
    return {**release, "vllm_message": entry["vllm_message"], "normalize": entry.get("normalize")}


@lru_cache(maxsize=1)
def _registries() -> dict[str, Any]:
    path = data_dir("rules") / "flags" / "_registries.json"
    return json.loads(path.read_text())["registries"] if path.exists() else {}


def removed_architecture(architectures: tuple[str, ...], version: VersionTuple) -> Optional[tuple[str, str, str]]:
    """(architecture, the last release that served it, where the release's source says so) when this release no
    longer serves one of the model's architectures, from rules/flags/_removed_architectures.json
    (tools/import_removed_architectures.py); None otherwise, and for a release whose table was not extracted."""
    release = _removed_architectures().get(format_version(version))
    for arch in architectures if release else ():
        last = release["architectures"].get(arch)
        if last is not None:
            return arch, last, release["src"]
    return None


@lru_cache(maxsize=1)
def _removed_architectures() -> dict[str, Any]:
    path = data_dir("rules") / "flags" / "_removed_architectures.json"
    return json.loads(path.read_text())["releases"] if path.exists() else {}


def quantization_dtypes(method: str, version: VersionTuple) -> Optional[tuple[list[str], str, str]]:
    """(the model dtypes `method` accepts at this release, where its config class lists them, where vLLM refuses
    the others) from rules/flags/_quant_act_dtypes.json (tools/import_quant_dtypes.py); None for a method whose
    list the release computes rather than writes out, and for a release whose table was not extracted."""
    release = _quant_act_dtypes().get(format_version(version))
    if not release or method not in release["methods"]:
        return None
    return release["methods"][method], release["src"][method], release["check"]


@lru_cache(maxsize=1)
def _quant_act_dtypes() -> dict[str, Any]:
    path = data_dir("rules") / "flags" / "_quant_act_dtypes.json"
    return json.loads(path.read_text())["releases"] if path.exists() else {}


@dataclass(frozen=True)
class OptionHistory:
    option: str
    dest: str
    canonical: str
    ranges: tuple[str, ...]  # "0.6.3..0.17.1", over checked tags

    def describe(self) -> str:
        return ", ".join(r.replace("..", " to ") if r.split("..")[0] != r.split("..")[1] else r.split("..")[0]
                         for r in self.ranges)

    def nearest_version(self, version: VersionTuple) -> VersionTuple:
        """The checked tag nearest to `version` that has this option (to type its value)."""
        tags = [v for v in known_versions() if any(_in_range(v, r) for r in self.ranges)]
        return min(tags, key=lambda v: (abs(_ordinal(v) - _ordinal(version)), v))


def _ordinal(v: VersionTuple) -> int:
    return known_versions().index(v)


def _in_range(v: VersionTuple, text: str) -> bool:
    low, high = text.split("..")
    return parse_version(low) <= v <= parse_version(high)


@lru_cache(maxsize=1)
def _history() -> dict[str, Any]:
    return json.loads((data_dir("rules") / "flags" / "_history.json").read_text())


def option_history(option: str) -> Optional[OptionHistory]:
    """Where an option string exists across all checked releases (exact spelling)."""
    entry = _history()["options"].get(option)
    if entry is None:
        return None
    return OptionHistory(option, entry["dest"], entry["canonical"], tuple(entry["versions"]))


def history_prefix_matches(option: str) -> list[OptionHistory]:
    """Options of any release that this text abbreviates."""
    if not option.startswith("--"):
        return []
    names = [s for s in _history()["options"] if s.startswith(option)]
    found = [option_history(s) for s in names]
    return [h for h in found if h is not None]


def suggestions_any_version(option: str, limit: int = 3) -> list[str]:
    return _close_options(option, _history()["options"], limit)


def _close_options(option: str, spellings, limit: int) -> list[str]:
    longs = [s for s in spellings if s.startswith("--")]
    return difflib.get_close_matches(option.replace("_", "-"), longs, n=limit, cutoff=0.6)
