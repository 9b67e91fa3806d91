"""A GPTQ checkpoint whose settings sit in quantize_config.json, asked of the real vLLM 0.32.0 (CPU build, offline
`LLM(...)`): its answers must still be those recorded (fixtures/differential/quant-file-vllm-0.32.0.json), which
tests/rules/test_check_stops_what_stops_vllm.py replays against `check` (VR421, VR422)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from differential import quant_file  # noqa: E402


def test_vllm_still_loads_a_quantize_config_json_only_under_quantization(vllm_032):
    recorded = json.loads(quant_file.fixture_path("0.32.0").read_text())["rows"]
    now = quant_file.ask(vllm_032)
    assert [(r["quantization"], r["verdict"]) for r in now] == [(r["quantization"], r["verdict"]) for r in recorded]
    assert [r["message"] for r in now] == [r["message"] for r in recorded]
