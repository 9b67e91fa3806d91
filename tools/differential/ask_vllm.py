"""Ask the real vLLM (a CPU build's environment) a question offline, one JSON line per answer, and record the answers
as a fixture: shared by rope_overrides.py and rope_lengths.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]


TCMALLOC = ("/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
            "/lib/x86_64-linux-gnu/libtcmalloc.so.4", "/usr/lib64/libtcmalloc_minimal.so.4")


def cpu_env(venv: Path) -> dict:
    """What the release's CPU worker insists on: 0.18.0 refuses to start an engine unless LD_PRELOAD names
    libtcmalloc and libiomp (vllm/v1/worker/cpu_worker.py init_device, check_preloaded_libs @ v0.18.0); 0.32.0
    only warns."""
    workers = list(venv.glob("lib/python3*/site-packages/vllm/v1/worker/cpu_worker.py"))
    if not workers or 'check_preloaded_libs("libtcmalloc")' not in workers[0].read_text():
        return {}
    tcmalloc = next((p for p in TCMALLOC if Path(p).is_file()), None)
    iomp = venv / "lib" / "libiomp5.so"
    if tcmalloc is None or not iomp.is_file():
        raise RuntimeError("this vLLM release's CPU worker needs libtcmalloc and libiomp5 preloaded: install "
                           "libgoogle-perftools4 (tools/cpu_libs.sh does, in CI)")
    return {"LD_PRELOAD": f"{tcmalloc}:{iomp}"}


def ask_lines(venv: Path, script: str, args: list[str], expected: int) -> list[dict]:
    """Run `script` with `args` in the vLLM environment at `venv`; its JSON lines, exactly `expected` of them."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **cpu_env(venv)}
    run = subprocess.run([str(venv / "bin" / "python"), "-c", script, *args],
                         capture_output=True, text=True, timeout=600, env=env)
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    if len(rows) != expected:
        raise RuntimeError(f"vLLM answered {len(rows)} of {expected}: {run.stderr[-2000:]}")
    return rows


def fixture_path(name: str, version: str) -> Path:
    return ROOT / "fixtures" / "differential" / f"{name}-vllm-{version}.json"


def record_main(name: str, body: Callable[[str, Path], dict]) -> None:
    """`python -m differential.<tool> VERSION [--record]`: print the answers; --record writes the fixture."""
    version, record = sys.argv[1], "--record" in sys.argv
    venv = Path(os.environ["VLLM_READER_VLLM_" + version.replace(".", "_")])
    text = json.dumps(body(version, venv), indent=1)
    print(text)
    if record:
        fixture_path(name, version).write_text(text + "\n")
