"""Does a rope_scaling given through --hf-overrides lengthen the maximum vLLM derives? Asked of the real vLLM
(its CPU build: EngineArgs.create_model_config(), offline, no server) for Qwen2.5-32B-Instruct's shipped
config.json (32768 positions) at --max-model-len 131072 with a factor-4 override of each rope type below.

    eval "$(bash tools/vllm_env.sh all)"
    PYTHONPATH=.:tools python -m differential.rope_overrides 0.32.0 [--record]

prints vLLM's verdicts; --record writes them to fixtures/differential/rope-overrides-vllm-<version>.json, which
tests/rules/test_check_stops_what_stops_vllm.py replays against `check` (VR402) offline.
"""
from __future__ import annotations

from pathlib import Path

from . import ask_vllm
from .ask_vllm import ROOT, ask_lines, record_main
MODEL = ROOT / "reader" / "catalog" / "models" / "Qwen" / "Qwen2.5-32B-Instruct"
MAX_MODEL_LEN = 131072
ROPE_TYPES = ["yarn", "linear"]

# runs inside the vLLM environment: one line of JSON per rope type
_ASK = """
import json, sys
from vllm.engine.arg_utils import EngineArgs
model, length, types = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for rope_type in types:
    overrides = {"rope_scaling": {"rope_type": rope_type, "factor": 4.0, "original_max_position_embeddings": 32768}}
    try:
        EngineArgs(model=model, hf_overrides=overrides, max_model_len=length,
                   skip_tokenizer_init=True).create_model_config()
        print(json.dumps({"rope_type": rope_type, "verdict": "ok", "message": ""}))
    except Exception as err:
        print(json.dumps({"rope_type": rope_type, "verdict": "refused", "message": " ".join(str(err).split())}))
"""


def ask(venv: Path) -> list[dict]:
    return ask_lines(venv, _ASK, [str(MODEL), str(MAX_MODEL_LEN), *ROPE_TYPES], len(ROPE_TYPES))


def fixture_path(version: str) -> Path:
    return ask_vllm.fixture_path("rope-overrides", version)


def _body(version: str, venv: Path) -> dict:
    return {"vllm": version, "model": "Qwen/Qwen2.5-32B-Instruct (reader/catalog/models, 32768 positions)",
            "max_model_len": MAX_MODEL_LEN, "recorded_by": "tools/differential/rope_overrides.py", "rows": ask(venv)}


if __name__ == "__main__":
    record_main("rope-overrides", _body)
