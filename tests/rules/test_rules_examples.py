"""Every rule's example, read by the real loader, triggers that rule: the best proof the rules work."""
from __future__ import annotations

import pytest

from _rules_helpers import REPO, check_text
from reader.rules_engine.loader import load_rules

RULES = load_rules()


@pytest.mark.parametrize("rule_id", [r.id for r in RULES.rules])
def test_example_triggers_its_rule(rule_id, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # examples name local draft models by their path in the repository, as vLLM reads them
    rule = RULES.get(rule_id)
    ex = rule.spec.example
    report = check_text(tmp_path, ex.config, name=ex.file, version=ex.vllm_version, gpu=ex.gpu, gpus=ex.gpus,
                        model=ex.model)
    path = tmp_path / ex.file
    assert report.configs[0].status == "checked", report.configs[0].error
    mine = [f for f in report.findings if f.rule_id == rule_id]
    assert mine, f"{rule_id} did not fire on its example; fired: {sorted({f.rule_id for f in report.findings})}"
    finding = mine[0]
    assert finding.severity == rule.severity
    assert "unknown" not in finding.message, finding.message  # every placeholder found its fact
    assert finding.locations and finding.locations[0].file == str(path)
    if rule.spec.keys and rule.spec.each is None and ex.file.endswith(".sh"):
        assert finding.locations[0].line, "a rule about flags points at the flag's line"


def test_examples_are_checked_against_an_active_version():
    for rule in RULES.rules:
        version = rule.spec.example.vllm_version
        if version is not None:
            from reader.versions import choose_version

            assert rule.active(choose_version(version).tag), (rule.id, version)
