"""Does vLLM start when --hf-overrides is not JSON? Its parser keeps such a value as text, and ModelConfig takes a
mapping or a callable. Asked of the real vLLM (its CPU build, through tools/differential/driver.py: vLLM's own
parser and create_engine_config, no weights) for the tiny Llama with an unterminated JSON object and with plain text.

    eval "$(bash tools/vllm_env.sh all)"
    PYTHONPATH=.:tools python -m differential.hf_overrides_text 0.32.0 [--record]

prints vLLM's verdicts; --record writes them to fixtures/differential/hf-overrides-text-vllm-<version>.json, which
tests/rules/test_check_stops_what_stops_vllm.py replays against `check` (VR124) offline.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from . import ask_vllm
from .ask_vllm import ROOT, record_main
from .harness import DRIVER, TINY_LLAMA

VALUES = ['{"rope_scaling": {"rope_type": "yarn"', "not json", '{"max_position_embeddings": 2048}']


def ask(venv: Path) -> list[dict]:
    lines = "".join(json.dumps({"id": str(i), "argv": ["--hf-overrides", v]}) + "\n" for i, v in enumerate(VALUES))
    done = subprocess.run([str(venv / "bin" / "python"), str(DRIVER), str(TINY_LLAMA)], input=lines,
                          capture_output=True, text=True, timeout=600, env=dict(os.environ), cwd=str(ROOT))
    answers = {a.pop("id"): a for a in map(json.loads, done.stdout.splitlines()) if "id" in a}
    if len(answers) != len(VALUES):
        raise RuntimeError(f"the vLLM driver answered {len(answers)} of {len(VALUES)}: {done.stderr[-2000:]}")
    return [{"hf_overrides": v, **answers[str(i)]} for i, v in enumerate(VALUES)]


def fixture_path(version: str) -> Path:
    return ask_vllm.fixture_path("hf-overrides-text", version)


def _body(version: str, venv: Path) -> dict:
    return {"vllm": version, "model": "fixtures/live/tiny-llama", "recorded_by": "tools/differential/hf_overrides_text.py",
            "rows": ask(venv)}


if __name__ == "__main__":
    record_main("hf-overrides-text", _body)
