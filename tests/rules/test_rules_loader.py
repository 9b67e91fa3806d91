"""Loading the rule files: malformed files are clear errors (file, line, rule id), the lock is current."""
from __future__ import annotations

import shutil

import pytest

from _rules_helpers import REPO, RULE_FIXTURES, run_cli
from reader.errors import ReaderError
from reader.rules_engine import generate
from reader.rules_engine import loader
from reader.rules_engine.loader import RuleLoadError, load_rules

# fixture dir -> (file, line, words the message must contain)
MALFORMED = {
    "unknown-operator": ("validation/rules.yaml", 15, ["VR991", "unknown operator 'greater_than'", "when.all[0]"]),
    "unknown-severity": ("validation/rules.yaml", 4, ["VR992", "severity", "'fatal'"]),
    "bad-range": ("validation/rules.yaml", 4, ["VR993", "'0.10.0..0.6.3' ends before it starts"]),
    "not-a-version": ("validation/rules.yaml", 4, ["VR994", "bad version range 'latest'"]),
    "duplicate-id": ("validation/b.yaml", 14, ["duplicate rule id VR995", "a.yaml:4"]),
    "missing-field": ("validation/rules.yaml", 4, ["VR997", "'fix'", "missing required field"]),
    "unknown-field": ("validation/rules.yaml", 4, ["VR998", "'sevrity_override'", "unknown field"]),
    "bad-regex": ("validation/rules.yaml", 4, ["VR999", "bad regular expression"]),
    "bad-id": ("validation/rules.yaml", 4, ["rule R1", "must look like VR123"]),
    "malformed-yaml": ("validation/rules.yaml", 9, ["malformed YAML"]),
    "bad-condition-shape": ("validation/rules.yaml", 4, ["VR981", "'all' must stand alone"]),
    "unknown-override": ("validation/rules.yaml", 4, ["VR982", "'overrides' names VR000"]),
    "wrong-schema": ("validation/rules.yaml", 1, ["'schema'"]),
    "two-operators": ("validation/rules.yaml", 4, ["VR983", "exactly one operator"]),
    "matrix-undetectable": ("compat-matrix.yaml", 12, ["VR984", "'beam_search' cannot be detected"]),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_rule_file_is_a_clear_load_error(name):
    file, line, words = MALFORMED[name]
    with pytest.raises(RuleLoadError) as info:
        load_rules(str(RULE_FIXTURES / name), use_lock=False)
    err = info.value
    assert isinstance(err, ReaderError)
    assert err.file is not None and err.file.endswith(file)
    assert err.line == line
    text = err.render()
    for word in words:
        assert word in text, (word, text)
    assert text.startswith("error: ") and "\n" not in text


def test_every_malformed_case_has_a_fixture():
    assert {p.name for p in RULE_FIXTURES.iterdir() if p.is_dir()} == set(MALFORMED)


def test_malformed_rules_stop_the_cli_with_exit_2(monkeypatch, tmp_path):
    config = tmp_path / "serve.sh"
    config.write_text("vllm serve meta-llama/Llama-3.1-8B\n")
    monkeypatch.setattr(loader, "rules_dir", lambda: RULE_FIXTURES / "unknown-operator")
    load_rules.cache_clear()
    try:
        code, out, err = run_cli(["check", str(config)])
    finally:
        load_rules.cache_clear()
    assert code == 2
    assert "unknown operator 'greater_than'" in err and "rules.yaml:15" in err and "VR991" in err
    assert "Traceback" not in out + err


def test_generated_files_are_current():
    """rules/rules.lock.json and the findings JSON schema match the sources (run
    `python -m reader.rules_engine.generate` after editing a rule or reader/rules_engine/findings.py)."""
    for path, text in generate.outputs().items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: python -m reader.rules_engine.generate"
    assert generate.main(["--check"]) == 0


def test_shipped_rules_load_from_the_lock_and_agree_with_the_yaml():
    fast = load_rules()
    assert fast.from_lock
    slow = load_rules(use_lock=False)
    assert not slow.from_lock
    assert [r.id for r in fast.rules] == [r.id for r in slow.rules]
    for a, b in zip(fast.rules, slow.rules):
        assert a.spec.when == b.spec.when and a.spec.message == b.spec.message
        assert a.ranges == b.ranges and a.theme == b.theme and a.cond == b.cond
        assert a.spec.source_list() == b.spec.source_list()
        assert a.line == b.line and a.line is not None


def test_a_stale_lock_falls_back_to_the_yaml(tmp_path):
    root = tmp_path / "rules"
    shutil.copytree(REPO / "rules", root, ignore=shutil.ignore_patterns("flags"))
    path = root / "validation" / "scheduler.yaml"
    path.write_text(path.read_text().replace("name: batched-tokens-below-max-num-seqs",
                                             "name: batched-tokens-below-max-num-seqs-edited"))
    rules = load_rules(str(root))
    assert not rules.from_lock
    assert rules.get("VR202").spec.name == "batched-tokens-below-max-num-seqs-edited"


def test_rule_lines_point_at_the_rule():
    rule = load_rules().get("VR201")
    lines = (REPO / "rules" / "validation" / "scheduler.yaml").read_text().splitlines()
    assert lines[rule.line - 1].strip() == "- id: VR201"
    generated = load_rules().get("VR602")
    text = (REPO / "rules" / "compat-matrix.yaml").read_text().splitlines()
    assert text[generated.line - 1].strip() == "- id: VR602"


def test_matrix_rules_take_versions_and_sources_from_the_cell():
    rule = load_rules().get("VR602")
    assert rule.generated_from == ("spec_decode", "pipeline_parallel")
    assert rule.versions_text() == "0.6.6 to 0.14.1"
    assert any("spec_decode.md" in s for s in rule.spec.source_list())
    lora = load_rules().get("VR601")
    assert lora.severity == "warning" and "code" in " ".join(lora.spec.notes_list())
    assert load_rules().get("VR603").versions_text() == "0.6.6"  # the cell says no 0.6.3..0.6.6, cut to 0.6.6..
    assert load_rules().get("VR607").versions_text() == "0.6.3 to 0.10.0"  # while --num-scheduler-steps exists
