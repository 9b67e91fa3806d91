"""The rule catalog: enough rules, every rule complete, `explain` and `rules` work for every id."""
from __future__ import annotations

import json
import re

import pytest

from _rules_helpers import run_cli
from reader.rules_engine.loader import load_rules

RULES = load_rules()
IDS = [r.id for r in RULES.rules]


def test_at_least_40_distinct_rules():
    assert len(set(IDS)) == len(IDS)
    assert len(set(IDS)) >= 40


def test_rule_ids_and_names_are_unique_and_well_formed():
    names = [r.spec.name for r in RULES.rules]
    assert len(set(names)) == len(names)
    for rule in RULES.rules:
        assert re.fullmatch(r"VR\d{3}", rule.id)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.spec.name)


@pytest.mark.parametrize("rule_id", IDS)
def test_every_rule_is_complete(rule_id):
    rule = RULES.get(rule_id)
    spec = rule.spec
    assert spec.severity in ("error", "warning", "info")
    assert rule.ranges, "no version range"
    assert spec.source_list() and all(s.strip() for s in spec.source_list())
    assert spec.fix.strip() and spec.why.strip() and spec.message.strip()
    assert spec.example.config.strip()
    assert rule.theme in ("flags", "scheduler", "speculative", "memory", "parallelism", "hardware", "compat", "input")


def test_id_ranges_follow_themes():
    prefix = {"flags": "VR1", "scheduler": "VR2", "speculative": "VR3", "memory": "VR4", "parallelism": "VR5",
              "compat": "VR6", "hardware": "VR6", "input": "VR9"}
    for rule in RULES.rules:
        assert rule.id.startswith(prefix[rule.theme]), (rule.id, rule.theme)


def test_counts_by_severity_and_theme_cover_the_issue():
    themes = {r.theme for r in RULES.rules}
    assert {"flags", "scheduler", "speculative", "memory", "parallelism", "compat", "input"} <= themes
    severities = {r.severity for r in RULES.rules}
    assert severities == {"error", "warning", "info"}


@pytest.mark.parametrize("rule_id", IDS)
def test_explain_works_for_every_rule(rule_id):
    code, out, err = run_cli(["explain", rule_id.lower()])
    assert code == 0, err
    for heading in ("What it checks:", "Why it matters:", "vLLM versions:", "Example", "Fix:", "Source:"):
        assert heading in out, heading
    assert out.startswith(rule_id)
    assert "->" in out, "the example's finding is shown"


def test_explain_by_name_and_json():
    code, out, _ = run_cli(["explain", "swap-space-removed", "--format", "json", "--no-run-example"])
    assert code == 0
    data = json.loads(out)
    assert data["id"] == "VR102" and data["severity"] == "error"
    assert data["versions"] == "0.18.0 and later"
    assert data["source"] and data["fix"] and data["why"] and data["example"]["config"]


def test_explain_markdown():
    code, out, _ = run_cli(["explain", "VR501", "--format", "markdown"])
    assert code == 0
    assert out.startswith("# VR501") and "## Fix" in out and "## Source" in out


def test_explain_unknown_rule_suggests_and_exits_2():
    code, out, err = run_cli(["explain", "VR2O1"])
    assert code == 2
    assert "Did you mean 'VR201'" in err
    assert "Traceback" not in err + out


def test_rules_catalog_filters_by_version():
    code, out, _ = run_cli(["rules", "--vllm-version", "0.6.3", "--format", "json"])
    assert code == 0
    data = json.loads(out)
    ids = {r["id"] for r in data["rules"]}
    assert "VR301" in ids and "VR102" not in ids
    assert data["count"] == len(ids) == len(RULES.active((0, 6, 3)))
    code, out, _ = run_cli(["rules"])
    assert code == 0 and f"{len(IDS)} rules" in out.splitlines()[0]


def test_rules_catalog_markdown_and_filters():
    code, out, _ = run_cli(["rules", "--format", "markdown", "--theme", "speculative", "--severity", "error"])
    assert code == 0
    assert "| VR301 | error |" in out and "VR102" not in out


def test_rules_matrix_per_version():
    code, out, _ = run_cli(["rules", "--matrix", "--vllm-version", "0.18.0", "--format", "json"])
    assert code == 0
    cells = {tuple(c["pair"]): c for c in json.loads(out)["cells"]}
    sd_cp = cells.get(("spec_decode", "chunked_prefill")) or cells[("chunked_prefill", "spec_decode")]
    assert sd_cp["status"] == "yes"
    code, out, _ = run_cli(["rules", "--matrix", "--vllm-version", "0.6.3", "--format", "json"])
    cells = {tuple(sorted(c["pair"])): c for c in json.loads(out)["cells"]}
    assert cells[("chunked_prefill", "spec_decode")]["status"] == "no"
    code, out, _ = run_cli(["rules", "--matrix"])
    assert code == 0 and "VR601" in out
    code, out, _ = run_cli(["rules", "--matrix", "--format", "markdown", "--vllm-version", "0.11.2"])
    assert code == 0 and "❌" in out and "VR602" in out
