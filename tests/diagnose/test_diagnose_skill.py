"""The skill document is generated from rules/ and templates/, committed, and never stale."""
from __future__ import annotations

import os
from pathlib import Path

from reader.render.skill import SKILL_NAME, generate

ROOT = Path(__file__).resolve().parents[2]


def test_skill_document_is_fresh():
    cwd = os.getcwd()
    os.chdir(ROOT)  # the worked example is named by its path relative to the repository
    try:
        text = generate()
    finally:
        os.chdir(cwd)
    committed = (ROOT / "outputs" / SKILL_NAME).read_text()
    assert committed == text, "outputs/skill-vllm-scheduler-reader.md is stale: run `vllm-reader skill`"


def test_skill_document_covers_what_it_promises():
    text = (ROOT / "outputs" / SKILL_NAME).read_text()
    assert text.startswith("---\nname: skill-vllm-scheduler-reader\n")
    for section in ("## The three defaults", "## The knobs and their trade-offs", "## How vllm-reader decides",
                    "## Rule catalog", "## Worked diagnosis"):
        assert section in text
    from reader.rules_engine.loader import load_rules
    for rule in load_rules().rules:
        assert f"| {rule.id} |" in text
