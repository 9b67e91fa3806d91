"""A GPTQ checkpoint whose settings sit in quantize_config.json, asked of the real vLLM 0.18.0 and 0.32.0 (CPU builds,
offline `LLM(...)`): their answers must still be those recorded (fixtures/differential/quant-file-vllm-*.json), which
tests/rules/test_check_stops_what_stops_vllm.py replays against `check` (VR421, VR422, VR414)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from differential import quant_file  # noqa: E402


@pytest.mark.parametrize("version", ["0.18.0", "0.32.0"])
def test_vllm_still_loads_a_quantize_config_json_only_under_quantization(version, request):
    venv = request.getfixturevalue("vllm_" + version.replace(".", "")[:3])
    recorded = json.loads(quant_file.fixture_path(version).read_text())["rows"]
    now = quant_file.ask(venv)
    assert [(r["quantization"], r["verdict"]) for r in now] == [(r["quantization"], r["verdict"]) for r in recorded]
    assert [r["message"] for r in now] == [r["message"] for r in recorded]
