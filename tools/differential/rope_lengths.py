"""The max_model_len vLLM picks, and the lengths it accepts, for config.json files that carry a RoPE scaling. Asked
of the real vLLM (its CPU build: EngineArgs.create_model_config(), offline, no server) for each model folder in
fixtures/differential/rope-lengths/ (its README says what each is), with no --max-model-len and with two given ones.

    eval "$(bash tools/vllm_env.sh all)"
    PYTHONPATH=.:tools python -m differential.rope_lengths 0.32.0 [--record]

prints vLLM's answers; --record writes them to fixtures/differential/rope-lengths-vllm-<version>.json, which
tests/config/test_max_len.py replays against the reader offline.
"""
from __future__ import annotations

import json
from pathlib import Path

from . import ask_vllm
from .ask_vllm import ROOT, ask_lines, record_main
MODELS = ROOT / "fixtures" / "differential" / "rope-lengths"
GIVEN = [None, 8192, 131072]

# runs inside the vLLM environment: one line of JSON per (model, given length)
_ASK = """
import json, sys
from vllm.engine.arg_utils import EngineArgs
lengths = json.loads(sys.argv[1])
for folder in sys.argv[2:]:
    for given in lengths:
        kw = {} if given is None else {"max_model_len": given}
        try:
            config = EngineArgs(model=folder, skip_tokenizer_init=True, **kw).create_model_config()
            row = {"max_model_len": config.max_model_len}
        except Exception as err:
            row = {"refused": " ".join(str(err).split())[:300]}
        print(json.dumps({"model": folder.rsplit("/", 1)[-1], "given": given, **row}))
"""


def folders() -> list[Path]:
    return sorted(p for p in MODELS.iterdir() if (p / "config.json").is_file())


def ask(venv: Path) -> list[dict]:
    names = [str(p) for p in folders()]
    return ask_lines(venv, _ASK, [json.dumps(GIVEN), *names], len(names) * len(GIVEN))


def fixture_path(version: str) -> Path:
    return ask_vllm.fixture_path("rope-lengths", version)


def _body(version: str, venv: Path) -> dict:
    return {"vllm": version, "models": "fixtures/differential/rope-lengths (its README)",
            "recorded_by": "tools/differential/rope_lengths.py", "rows": ask(venv)}


if __name__ == "__main__":
    record_main("rope-lengths", _body)
