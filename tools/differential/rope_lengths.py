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
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    names = [str(p) for p in folders()]
    run = subprocess.run([str(venv / "bin" / "python"), "-c", _ASK, json.dumps(GIVEN), *names],
                         capture_output=True, text=True, timeout=600, env=env)
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    if len(rows) != len(names) * len(GIVEN):
        raise RuntimeError(f"vLLM answered {len(rows)} of {len(names) * len(GIVEN)}: {run.stderr[-2000:]}")
    return rows


def fixture_path(version: str) -> Path:
    return ROOT / "fixtures" / "differential" / f"rope-lengths-vllm-{version}.json"


def main() -> None:
    version, record = sys.argv[1], "--record" in sys.argv
    venv = Path(os.environ["VLLM_READER_VLLM_" + version.replace(".", "_")])
    body = {"vllm": version, "models": "fixtures/differential/rope-lengths (its README)",
            "recorded_by": "tools/differential/rope_lengths.py", "rows": ask(venv)}
    print(json.dumps(body, indent=1))
    if record:
        fixture_path(version).write_text(json.dumps(body, indent=1) + "\n")


if __name__ == "__main__":
    main()
