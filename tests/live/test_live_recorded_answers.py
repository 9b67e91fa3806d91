"""Questions asked of the real vLLM 0.18.0 and 0.32.0 (CPU builds) whose answers are recorded as fixtures that the
offline suite replays against `check` (tests/rules/test_check_stops_what_stops_vllm.py): each must still get the
recorded answer.

- tools/differential/quant_file.py: a GPTQ checkpoint whose settings sit in quantize_config.json, loaded with and
  without --quantization and in bfloat16 / float16 (VR421, VR422, VR414);
- tools/differential/hf_overrides_text.py: --hf-overrides that is not JSON (VR124);
- tools/differential/kv_layouts.py: the KV layout of Gemma 4 and LFM2 shapes (0.32.0 only: 0.18.0 has neither),
  replayed by tests/capacity/test_capacity_kv_layouts.py.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from differential import hf_overrides_text, kv_layouts, quant_file  # noqa: E402

QUESTIONS = {"quant_file": quant_file, "hf_overrides_text": hf_overrides_text, "kv_layouts": kv_layouts}
ASKED = [(q, v) for q in sorted(QUESTIONS) for v in ("0.18.0", "0.32.0") if (q, v) != ("kv_layouts", "0.18.0")]


@pytest.mark.parametrize("question, version", ASKED)
def test_vllm_still_gives_the_recorded_answers(question, version, request):
    tool = QUESTIONS[question]
    venv = request.getfixturevalue("vllm_" + version.replace(".", "")[:3])
    recorded = json.loads(tool.fixture_path(version).read_text())["rows"]
    now = tool.ask(venv)
    assert now == recorded
