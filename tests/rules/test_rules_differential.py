"""`check` agrees with the real vLLM on whether it would start: the verdicts the real vLLM gave on random
configs (recorded by tools/differential/record.py into fixtures/differential/) replayed offline. Every
disagreement must be one listed, with its reason, in rules/differential/known-disagreements.yaml (the CPU
build's own platform checks), and agreement outside those is at least 99.5%. tests/live/test_live_differential.py
checks against the real vLLM itself."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from differential.harness import compare, describe, known_disagreements  # noqa: E402

FIXTURES = sorted((ROOT / "fixtures" / "differential").glob("vllm-*.jsonl"))


def recorded(path: Path):
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    header, rows = lines[0], lines[1:]
    return header, [r["config"] for r in rows], {r["config"]["id"]: r["vllm"] for r in rows}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_check_agrees_with_the_recorded_verdicts_of_vllm(path):
    header, configs, verdicts = recorded(path)
    result = compare(configs, verdicts, header["vllm"])
    unexplained = [describe(r) for r in result["rows"] if not r["known"]]
    assert not unexplained, "disagreements with vLLM not listed in rules/differential/:\n" + "\n".join(unexplained)
    assert result["agreement_outside_known"] >= 0.995
    # the recording exercises both verdicts and both forms
    refused = sum(1 for v in verdicts.values() if v["verdict"] == "refused")
    assert 0.2 * len(configs) < refused < 0.8 * len(configs)
    assert {c["form"] for c in configs} == {"cli", "yaml"}
    # and the refusals that need the model, a draft model's config.json or the environment
    assert sum(1 for c in configs if "model" in c) > 0.2 * len(configs)
    assert sum(1 for c in configs if "@models/" in json.dumps(c["settings"])) >= 10
    assert any("env" in c for c in configs)


def test_the_recordings_prove_refusals_of_every_kind():
    """Rules that fired on configs vLLM refused too, over both recordings: the model-dependent, speculative,
    compilation, parallel and API-server refusals are all among them, not only value bounds."""
    proved: set[str] = set()
    for path in FIXTURES:
        header, configs, verdicts = recorded(path)
        proved |= set(compare(configs, verdicts, header["vllm"])["exercised"])
    for rule_id in ("VR116", "VR119", "VR402", "VR501", "VR505", "VR509", "VR326", "VR330", "VR331", "VR340",
                    "VR701", "VR703", "VR705", "VR504", "VR516", "VR801", "VR807", "bad-input"):
        assert rule_id in proved, rule_id


def test_both_releases_are_recorded():
    assert {p.stem for p in FIXTURES} == {"vllm-0.32.0", "vllm-0.18.0"}


def test_every_listed_disagreement_says_why_and_where():
    for entry in known_disagreements():
        assert entry["reason"].strip() and entry["versions"] and entry["when"], entry["id"]
        assert entry["vllm"] in ("ok", "refused")
