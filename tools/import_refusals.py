"""Refresh rules/differential/validator-coverage.yaml: every start-up refusal of the releases it covers, read
from each release's source by tools/refusal_sites.py, with how `vllm-reader check` covers each.

    bash tools/vllm_sources.sh          # once: unpacks every release's Python source (prints the folder)
    python tools/import_refusals.py [~/.cache/vllm-reader/vllm-src]

For each refusal found at the covered releases (INVENTORIED) the tool writes what the source says (`where`,
`kind`, `message`, `condition`, `at`: file:line per covered release, `found`: every release, of all those in
rules/flags/, whose source has the same refusal) and keeps what a person wrote (`status`, `rules`, `option`,
`why`, `reason`). A refusal new to the table gets `status: todo`; one the source no longer has is dropped (and
named). tests/rules/test_rules_coverage.py refuses a table with a `todo`, and, where the sources are unpacked,
one that no longer matches them.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from import_flags import tag_runs
from refusal_sites import Release

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "rules" / "differential" / "validator-coverage.yaml"
# the releases whose every refusal the table classifies: the two the differential test runs, and the newest
INVENTORIED = ["0.18.0", "0.32.0", "0.33.0"]
GENERATED = ("where", "kind", "message", "condition", "at", "found")
KEPT = ("status", "rules", "option", "why", "reason")
HEADER = """\
# Every start-up refusal of vLLM 0.18.0, 0.32.0 and 0.33.0 for a `vllm serve` configuration, and how
# `vllm-reader check` covers it. One entry per refusal: a `raise` or failed `assert` reachable from the serve
# argument checks, EngineArgs.__post_init__ / from_cli_args / create_engine_config() and the config classes
# they build (tools/refusal_sites.py says how reaching is followed).
#
# Written by tools/import_refusals.py from each release's source: key, where, kind, message (vLLM's text,
# `{...}` where it fills in a value), condition (the tests that lead to it), at (file:line per covered
# release), found (every checked release whose source has the same refusal). Written by hand:
#   status: rule          rules: [VR...]  the rules that report it (their versions cover `found`)
#   status: bound         option: --flag  a bound tools/import_flags.py extracted into rules/flags/ (VR116)
#   status: not-modelled  why: <one of WHY below>, reason: a sentence
#   status: type          option: --flag  a key type tools/import_flags.py extracted into rules/flags/ (VR119)
# `beyond_sites` names the rules that model a refusal which is no `raise` of vLLM's (a pydantic bound or type on a
# value vLLM derives, a bare KeyError), with why.
# tests/rules/test_rules_coverage.py keeps this table, the rules and the flag tables in step.
"""


def _tags() -> list[str]:
    return json.loads((ROOT / "rules" / "flags" / "_history.json").read_text())["tags"]


def inventory(sources: Path) -> dict[str, dict[str, Any]]:
    """key -> what the source says about the refusal (GENERATED fields)."""
    tags = _tags()
    missing = [t for t in tags if not (sources / f"v{t}" / "vllm" / "__init__.py").is_file()]
    if missing:
        sys.exit(f"no source for {', '.join(missing)} under {sources}: run tools/vllm_sources.sh first")
    present: dict[str, list[bool]] = {}
    sites: dict[str, dict[str, Any]] = {}
    for i, tag in enumerate(tags):
        for site in Release(sources / f"v{tag}" / "vllm").sites():
            key = site.key()
            present.setdefault(key, [False] * len(tags))[i] = True
            if tag in INVENTORIED:
                entry = sites.setdefault(key, {"where": site.where, "kind": site.kind, "message": site.message,
                                               "condition": site.condition, "at": {}})
                entry["at"].setdefault(tag, []).append(f"{site.file}:{site.line}")
    for key, entry in sites.items():
        entry["at"] = {tag: ", ".join(places) for tag, places in entry["at"].items()}
        entry["found"] = ", ".join(tag_runs(present[key], tags, collapse=True))
    return sites


def merge(sites: dict[str, dict[str, Any]], table: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The table with the source's fields refreshed and the hand-written ones kept; the keys dropped."""
    old = {entry["key"]: entry for entry in table.get("refusals", [])}
    refusals = []
    for key in sorted(sites, key=lambda k: (sites[k]["where"], k)):
        entry = {"key": key, **{f: sites[key][f] for f in GENERATED}}
        kept = {f: old[key][f] for f in KEPT if key in old and f in old[key]}
        entry.update(kept or {"status": "todo"})
        refusals.append(entry)
    dropped = sorted(set(old) - set(sites))
    return {"schema": 1, "inventoried": INVENTORIED, "why": table.get("why", {}),
            "beyond_sites": table.get("beyond_sites", {}), "refusals": refusals}, dropped


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sources = Path(args[0]) if args else Path.home() / ".cache" / "vllm-reader" / "vllm-src"
    table = yaml.safe_load(TABLE.read_text()) if TABLE.is_file() else {}
    merged, dropped = merge(inventory(sources), table)
    TABLE.write_text(HEADER + yaml.safe_dump(merged, sort_keys=False, width=120, allow_unicode=True))
    todo = sum(1 for e in merged["refusals"] if e["status"] == "todo")
    print(f"wrote {TABLE}: {len(merged['refusals'])} refusals ({todo} to classify)")
    for key in dropped:
        print("  no longer in the source:", key)


if __name__ == "__main__":
    main()
