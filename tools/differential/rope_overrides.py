"""Does a rope_scaling given through --hf-overrides lengthen the maximum vLLM derives? Asked of the real vLLM
(its CPU build: EngineArgs.create_model_config(), offline, no server) for Qwen2.5-32B-Instruct's shipped
config.json (32768 positions) at --max-model-len 131072 with a factor-4 override of each rope type below.

    eval "$(bash tools/vllm_env.sh all)"
    PYTHONPATH=.:tools python -m differential.rope_overrides 0.32.0 [--record]

prints vLLM's verdicts; --record writes them to fixtures/differential/rope-overrides-vllm-<version>.json, which
tests/rules/test_check_stops_what_stops_vllm.py replays against `check` (VR402) offline.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([str(venv / "bin" / "python"), "-c", _ASK, str(MODEL), str(MAX_MODEL_LEN), *ROPE_TYPES],
                         capture_output=True, text=True, timeout=600, env=env)
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    if len(rows) != len(ROPE_TYPES):
        raise RuntimeError(f"vLLM answered {len(rows)} of {len(ROPE_TYPES)}: {run.stderr[-2000:]}")
    return rows


def fixture_path(version: str) -> Path:
    return ROOT / "fixtures" / "differential" / f"rope-overrides-vllm-{version}.json"


def main() -> None:
    version, record = sys.argv[1], "--record" in sys.argv
    venv = Path(os.environ["VLLM_READER_VLLM_" + version.replace(".", "_")])
    rows = ask(venv)
    body = {"vllm": version, "model": "Qwen/Qwen2.5-32B-Instruct (reader/catalog/models, 32768 positions)",
            "max_model_len": MAX_MODEL_LEN, "recorded_by": "tools/differential/rope_overrides.py", "rows": rows}
    print(json.dumps(body, indent=1))
    if record:
        fixture_path(version).write_text(json.dumps(body, indent=1) + "\n")


if __name__ == "__main__":
    main()
