"""The feature compatibility matrix (rules/compat-matrix.yaml) and the rules generated from it.

The matrix is data: cells of feature x feature and feature x hardware, each with a history of
statuses (yes / no / partial / unknown) over version ranges and the vLLM doc they were read from.
Features and hardware carry a `detect` condition over the fact view, or null when a config cannot
show them (encoder-decoder models, beam search: a request, not a config, asks for those).

A generated rule names a `pair` (and the statuses that fire it, `no` by default). The loader builds
its condition (both features detected), its version ranges (the history entries with those
statuses) and its sources (those entries' docs) from the cell, so the matrix and the rule cannot
drift apart.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from ..versions import VersionTuple, parse_version
from .rulefile import LoadedRule, RuleLoadError, build_rule, read_yaml, rule_line

GENERATED_FIELDS = ("versions", "when", "source")
STATUS_SYMBOL = {"yes": "✅", "no": "❌", "partial": "🟠", "unknown": "❔"}


def load_matrix(path: Path) -> tuple[dict[str, Any], list[LoadedRule]]:
    data = read_yaml(path)
    file = str(path)
    if not isinstance(data, dict) or data.get("schema") != 1:
        raise RuleLoadError("the compatibility matrix must be a mapping with 'schema: 1'.", file=file, line=1)
    for key in ("features", "hardware", "feature_x_feature", "feature_x_hardware"):
        if key not in data:
            raise RuleLoadError(f"the compatibility matrix has no '{key}' section.", file=file, line=1)
    detectable = {**data["features"], **data["hardware"]}
    cells = {tuple(c["pair"]): c for c in data["feature_x_feature"] + data["feature_x_hardware"]
             + data.get("from_other_docs", [])}
    ff_pairs = _ff(data)
    rules = []
    for index, raw in enumerate(data.get("rules", [])):
        try:
            rules.append(_generate(raw, index, file, detectable, cells, ff_pairs))
        except RuleLoadError as err:
            err.line = rule_line(file, index, "rules")
            raise
    return data, rules


def _generate(raw: Any, index: int, file: str, detectable: dict[str, Any], cells: dict[tuple, Any],
              ff_pairs: set[tuple]) -> LoadedRule:
    rule_id = raw.get("id") if isinstance(raw, dict) else None
    label = f"rule {rule_id}" if isinstance(rule_id, str) else "a rule without an id"
    if not isinstance(raw, dict):
        raise RuleLoadError(f"{label}: each rule is a mapping of fields.", file=file)
    raw = dict(raw)
    for key in GENERATED_FIELDS:
        if key in raw:
            raise RuleLoadError(f"{label}: '{key}' comes from the matrix cell; do not write it on a generated rule.",
                                file=file)
    pair = raw.pop("pair", None)
    statuses = raw.pop("statuses", ["no"])
    extra_when = raw.pop("extra_when", None)
    also_source = raw.pop("also_source", [])
    within = raw.pop("within", None)
    if not (isinstance(pair, list) and len(pair) == 2):
        raise RuleLoadError(f"{label}: 'pair' must name two features, e.g. [spec_decode, lora].", file=file)
    cell = cells.get(tuple(pair)) or cells.get(tuple(reversed(pair)))
    if cell is None:
        raise RuleLoadError(f"{label}: the matrix has no cell for {pair}.", file=file)
    for name in pair:
        feature = detectable.get(name)
        if feature is None:
            raise RuleLoadError(f"{label}: '{name}' is not a feature or hardware of the matrix.", file=file)
        if feature.get("detect") is None:
            raise RuleLoadError(f"{label}: '{name}' cannot be detected in a config (detect: null), so no rule can "
                                "fire on it.", file=file)
    entries = [h for h in cell["history"] if h["status"] in statuses]
    if within is not None:
        entries = _clip(entries, within, label, file)
    if not entries:
        raise RuleLoadError(f"{label}: the cell {pair} never has status {statuses}"
                            + (f" within {within}" if within else "") + ".", file=file)
    conds = [detectable[pair[0]]["detect"], detectable[pair[1]]["detect"]]
    if extra_when is not None:
        conds.append(extra_when)
    raw["versions"] = [h["versions"] for h in entries]
    raw["when"] = {"all": conds}
    sources = []
    for h in entries:
        for s in ([h["source"]] if isinstance(h["source"], str) else h["source"]):
            if s not in sources:
                sources.append(s)
    raw["source"] = sources + list(also_source)
    raw.setdefault("keys", list(dict.fromkeys(detectable[pair[0]].get("keys", []) + detectable[pair[1]].get("keys",
                                                                                                            []))))
    return build_rule(raw, file, index, "compat" if tuple(pair) in ff_pairs else "hardware",
                      generated_from=(pair[0], pair[1]))


def _clip(entries: list[dict[str, Any]], within: Any, label: str, file: str) -> list[dict[str, Any]]:
    """The history entries cut to the `within` range (e.g. the releases that still have a flag)."""
    from ..versions import VersionRange, format_version

    try:
        bound = VersionRange.parse(str(within))
    except ValueError:
        raise RuleLoadError(f"{label}: bad 'within' range {within!r}.", file=file) from None
    out = []
    for entry in entries:
        rng = VersionRange.parse(entry["versions"])
        low = max(v for v in (rng.low, bound.low) if v is not None) if (rng.low or bound.low) else None
        high = min(v for v in (rng.high, bound.high) if v is not None) if (rng.high or bound.high) else None
        if low is not None and high is not None and low > high:
            continue
        text = (format_version(low) if low else "") + ".." + (format_version(high) if high else "")
        out.append({**entry, "versions": text})
    return out


def _ff(data: dict[str, Any]) -> set[tuple]:
    pairs = set()
    for c in data["feature_x_feature"] + data.get("from_other_docs", []):
        pairs.add(tuple(c["pair"]))
        pairs.add(tuple(reversed(c["pair"])))
    return pairs


def status_at(cell: dict[str, Any], version: VersionTuple) -> Optional[dict[str, Any]]:
    from ..versions import VersionRange

    for entry in cell["history"]:
        if VersionRange.parse(entry["versions"]).contains(version):
            return entry
    return None


def matrix_table(data: dict[str, Any], version_text: str) -> dict[str, Any]:
    """The matrix at one version: rows, columns and cells, for `vllm-reader rules --matrix`."""
    version = parse_version(version_text)
    features = list(data["features"])
    hardware = list(data["hardware"])
    ff: dict[tuple[str, str], dict[str, Any]] = {}
    for cell in data["feature_x_feature"] + data.get("from_other_docs", []):
        entry = status_at(cell, version)
        if entry is not None:
            a, b = cell["pair"]
            ff[(a, b)] = ff[(b, a)] = entry
    fh: dict[tuple[str, str], dict[str, Any]] = {}
    for cell in data["feature_x_hardware"]:
        entry = status_at(cell, version)
        if entry is not None:
            fh[tuple(cell["pair"])] = entry
    present = [f for f in features if any(k[0] == f for k in ff) or any(k[0] == f for k in fh)]
    hw_present = [h for h in hardware if any(k[1] == h for k in fh)]
    return {"version": version_text, "features": present, "hardware": hw_present, "ff": ff, "fh": fh,
            "labels": {**{k: v.get("label", k) for k, v in data["features"].items()},
                       **{k: v.get("label", k) for k, v in data["hardware"].items()}}}
