"""Every start-up refusal in vLLM's source for the covered releases (rules/differential/validator-coverage.yaml,
written by tools/import_refusals.py) says how `check` covers it, and what it says holds: the rules it names exist
and are active where the refusal is, the bound or key type it names is in that release's flag table, and a
refusal not modelled gives its reason. Where the releases' sources are unpacked (tools/vllm_sources.sh), the
table must also still list exactly what the source holds."""
from __future__ import annotations

import collections
import os
import re
from pathlib import Path

import pytest
import yaml

from reader.config.flagtable import flag_table
from reader.rules_engine.loader import load_rules
from reader.versions import parse_version

ROOT = Path(__file__).resolve().parents[2]
TABLE = yaml.safe_load((ROOT / "rules" / "differential" / "validator-coverage.yaml").read_text())
REFUSALS = TABLE["refusals"]
RULES = load_rules()
# tools/vllm_sources.sh unpacks them under VLLM_READER_CACHE (default ~/.cache/vllm-reader) and prints the folder;
# .ci/run exports it as VLLM_READER_SRC, and where that is set the sources must be there (no skip).
SOURCES = Path(os.environ.get("VLLM_READER_SRC")
               or Path(os.environ.get("VLLM_READER_CACHE") or Path.home() / ".cache" / "vllm-reader") / "vllm-src")
REQUIRED = bool(os.environ.get("VLLM_READER_SRC"))
STATUSES = {"rule", "bound", "type", "not-modelled"}


def test_the_table_covers_the_oracle_releases_and_the_newest():
    assert TABLE["inventoried"] == ["0.18.0", "0.32.0", "0.33.0"]
    for release in TABLE["inventoried"]:
        assert sum(1 for e in REFUSALS if release in e["at"]) > 100


def test_every_refusal_is_classified():
    unclassified = [e["key"] for e in REFUSALS if e["status"] not in STATUSES]
    assert not unclassified, f"classify these (status rule/bound/type/not-modelled): {unclassified[:5]}"
    assert len({e["key"] for e in REFUSALS}) == len(REFUSALS)


@pytest.mark.parametrize("entry", [e for e in REFUSALS if e["status"] == "rule"], ids=lambda e: e["key"])
def test_a_refusal_covered_by_rules_has_one_active_wherever_vllm_has_it(entry):
    for rule_id in entry["rules"]:
        assert RULES.get(rule_id) is not None, f"{rule_id} does not exist"
    for release in entry["at"]:
        active = [r for r in entry["rules"] if RULES.get(r).active(parse_version(release))]
        assert active, f"none of {entry['rules']} is active at {release}, where vLLM has {entry['where']}"


@pytest.mark.parametrize("entry", [e for e in REFUSALS if e["status"] in ("bound", "type")], ids=lambda e: e["key"])
def test_a_refusal_covered_by_the_flag_tables_is_in_them(entry):
    field = "bounds" if entry["status"] == "bound" else "key_types"
    for release in entry["at"]:
        spec = flag_table(parse_version(release)).options.get(entry["option"])
        assert spec is not None and field in spec, f"{entry['option']} has no {field} at {release}"


def test_every_refusal_not_modelled_says_why():
    for entry in REFUSALS:
        if entry["status"] == "not-modelled":
            assert entry["why"] in TABLE["why"], entry["key"]
            assert len(entry["reason"].split()) >= 2, entry["key"]


def test_every_start_up_error_rule_sourced_in_vllm_config_code_is_in_the_table():
    """The other direction: a rule that says it models a check of vllm/config or EngineArgs is listed."""
    listed = {r for e in REFUSALS if e["status"] == "rule" for r in e["rules"]} | set(TABLE["beyond_sites"])
    assert all(RULES.get(r) is not None for r in TABLE["beyond_sites"])
    for rule in RULES.rules:
        sources = " ".join(rule.spec.source_list())
        modern = any(f"@ v{v}" in sources for v in TABLE["inventoried"])
        if rule.spec.each is None and rule.severity == "error" and modern and ("vllm/config/" in sources or "arg_utils.py" in sources
                                                   or "cli_args.py" in sources):
            assert rule.id in listed, f"{rule.id} cites vLLM's start-up code but no refusal in the table names it"


def test_counts(capsys):
    by_status = collections.Counter(e["status"] for e in REFUSALS)
    print(dict(by_status))
    assert by_status["rule"] >= 90


def test_ci_unpacks_the_sources_of_every_inventoried_release():
    ci = (ROOT / ".ci" / "run").read_text()
    line = next(l for l in ci.splitlines() if "tools/vllm_sources.sh" in l and not l.lstrip().startswith("#"))
    assert re.findall(r"\b\d+\.\d+\.\d+\b", line) == TABLE["inventoried"]
    # exported only when every release was fetched (a failed download skips the check rather than failing CI)
    guard = next(l for l in ci.splitlines() if l.startswith("if ") and ".ready" in l)
    assert re.findall(r"v(\d+\.\d+\.\d+)/\.ready", guard) == TABLE["inventoried"]
    assert ci.index(line) < ci.index('export VLLM_READER_SRC="$src"') < ci.index("python -m pytest")


@pytest.mark.skipif(not REQUIRED and not all((SOURCES / f"v{v}" / ".ready").is_file() for v in TABLE["inventoried"]),
                    reason="the releases' sources are not unpacked (tools/vllm_sources.sh)")
def test_the_table_lists_exactly_what_the_source_holds():
    from refusal_sites import Release

    for release in TABLE["inventoried"]:
        keys = {s.key() for s in Release(SOURCES / f"v{release}" / "vllm").sites()}
        listed = {e["where"] + "|" + e["kind"] + "|" + (e["message"] if e["message"] is not None
                                                        else "if " + e["condition"])
                  for e in REFUSALS if release in e["at"]}
        assert keys == listed, (f"vLLM {release}: the source has {len(keys - listed)} refusals the table lacks and the "
                                f"table {len(listed - keys)} the source lacks: run tools/import_refusals.py")
