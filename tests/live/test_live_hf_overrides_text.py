"""--hf-overrides that are not JSON, asked of the real vLLM 0.18.0 and 0.32.0 (CPU builds, their own parser and
create_engine_config): the answers must still be those recorded (fixtures/differential/hf-overrides-text-vllm-*.json),
which tests/rules/test_check_stops_what_stops_vllm.py replays against `check` (VR124)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from differential import hf_overrides_text  # noqa: E402


@pytest.mark.parametrize("version", ["0.18.0", "0.32.0"])
def test_vllm_still_refuses_hf_overrides_it_cannot_read_as_json(version, request):
    venv = request.getfixturevalue("vllm_" + version.replace(".", "")[:3])
    recorded = json.loads(hf_overrides_text.fixture_path(version).read_text())["rows"]
    now = hf_overrides_text.ask(venv)
    assert [(r["verdict"], r.get("message")) for r in now] == [(r["verdict"], r.get("message")) for r in recorded]
