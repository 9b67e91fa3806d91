"""`check` against the real vLLM on the real configs of fixtures/corpus/: the verdicts vLLM's CPU build gave
(its parser, the `vllm serve` argument checks and EngineArgs.create_engine_config(), with the model's shipped
config.json; recorded by tools/differential/corpus.py into fixtures/differential/corpus-vllm-<version>.jsonl)
replayed against `check` at the same release, config by config. Every disagreement must be listed with its reason
in rules/differential/corpus-disagreements.yaml, and every listed one must still be a disagreement."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from differential.corpus import LISTED, compare, corpus_files, fixture_path  # noqa: E402

VERSIONS = ["0.32.0", "0.18.0"]
KINDS = {"environment", "cpu-build", "check", "memory"}


def recorded(version: str):
    lines = [json.loads(line) for line in fixture_path(version).read_text().splitlines() if line.strip()]
    return lines[0], {r["file"]: r["vllm"] for r in lines[1:]}


@pytest.mark.parametrize("version", VERSIONS)
def test_every_corpus_disagreement_with_vllm_is_listed_with_its_reason(version):
    header, verdicts = recorded(version)
    result = compare(version, verdicts, header["skipped"])
    assert not result["unlisted"], f"disagreements with vLLM {version} not in {LISTED.name}: {result['unlisted']}"
    listed_here = {r["file"] for r in result["rows"] if not r["agree"]}
    import yaml

    stale = [e["file"] for e in yaml.safe_load(LISTED.read_text())["disagreements"]
             if version in e["versions"] and e["file"] not in listed_here]
    assert not stale, f"listed for {version} but now agreeing (remove them): {stale}"
    # the corpus is asked, not skipped: all but those without a launch or a shipped config.json (mostly quantized
    # re-uploads and fine-tunes whose own config.json the catalog does not ship: 39 of 152 at the last recording)
    skipped = len(header["skipped"])
    assert result["asked"] >= 110 and skipped * 3 <= result["asked"] + skipped  # a third at most
    # both verdicts occur, so the comparison can fail either way
    assert {r["vllm"]["verdict"] for r in result["rows"]} == {"ok", "refused"}


def test_the_recordings_cover_the_corpus():
    names = {p.name for p in corpus_files()}
    for version in VERSIONS:
        header, verdicts = recorded(version)
        assert set(verdicts) | set(header["skipped"]) == names


def test_every_listed_corpus_disagreement_says_why():
    import yaml

    for entry in yaml.safe_load(LISTED.read_text())["disagreements"]:
        assert entry["kind"] in KINDS and entry["reason"].strip() and set(entry["versions"]) <= set(VERSIONS), entry
        assert (ROOT / "fixtures" / "corpus" / entry["file"]).is_file(), entry["file"]
