"""The max_model_len the real vLLM (CPU build, no server) picks and accepts for config.json files with a RoPE scaling:
its answers must still be those recorded in fixtures/differential/rope-lengths-vllm-<version>.json, which
tests/config/test_max_len.py replays against the reader offline."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from differential.rope_lengths import ask, fixture_path  # noqa: E402


@pytest.mark.parametrize("version", ["0.32.0", "0.18.0"])
def test_vllm_still_says_what_was_recorded(version, request):
    venv = request.getfixturevalue("vllm_032" if version == "0.32.0" else "vllm_018")
    recorded = json.loads(fixture_path(version).read_text())["rows"]
    assert ask(venv) == recorded
