"""A rope_scaling given through --hf-overrides, asked of the real vLLM (CPU build, no server): its verdicts must
still be those recorded in fixtures/differential/rope-overrides-vllm-<version>.json, which
tests/rules/test_check_stops_what_stops_vllm.py replays against `check` offline."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from differential.rope_overrides import ask, fixture_path  # noqa: E402


@pytest.mark.parametrize("version", ["0.32.0", "0.18.0"])
def test_vllm_still_says_what_was_recorded(version, request):
    venv = request.getfixturevalue("vllm_032" if version == "0.32.0" else "vllm_018")
    recorded = json.loads(fixture_path(version).read_text())["rows"]
    now = ask(venv)
    assert [(r["rope_type"], r["verdict"]) for r in now] == [(r["rope_type"], r["verdict"]) for r in recorded]
