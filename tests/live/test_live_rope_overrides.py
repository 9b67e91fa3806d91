"""RoPE scaling asked of the real vLLM (CPU build, no server): its answers must still be those recorded, which the
offline suite replays against the reader.

- a rope_scaling given through --hf-overrides (fixtures/differential/rope-overrides-vllm-<version>.json, replayed by
  tests/rules/test_check_stops_what_stops_vllm.py);
- the max_model_len picked and accepted for config.json files that carry one
  (fixtures/differential/rope-lengths-vllm-<version>.json, replayed by tests/config/test_max_len.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from differential import rope_lengths, rope_overrides  # noqa: E402


@pytest.mark.parametrize("version", ["0.32.0", "0.18.0"])
def test_vllm_still_says_what_was_recorded_of_hf_overrides(version, request):
    venv = request.getfixturevalue("vllm_032" if version == "0.32.0" else "vllm_018")
    recorded = json.loads(rope_overrides.fixture_path(version).read_text())["rows"]
    now = rope_overrides.ask(venv)
    assert [(r["rope_type"], r["verdict"]) for r in now] == [(r["rope_type"], r["verdict"]) for r in recorded]


@pytest.mark.parametrize("version", ["0.32.0", "0.18.0"])
def test_vllm_still_picks_the_lengths_recorded_for_rope_scaled_configs(version, request):
    venv = request.getfixturevalue("vllm_032" if version == "0.32.0" else "vllm_018")
    assert rope_lengths.ask(venv) == json.loads(rope_lengths.fixture_path(version).read_text())["rows"]
