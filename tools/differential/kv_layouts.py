"""How does vLLM lay out the KV cache of models whose layers are not alike? Asked of the real vLLM (its CPU build,
offline `LLM(...)` with dummy weights, 1 GiB of KV space, max_model_len 2048, block size 128, prefix caching on)
for the tiny models in fixtures/differential/kv-models/: Gemma 4 shapes (full-attention layers with their own head
size or KV heads, KV shared by the last layers, per-layer inputs) and LFM2 shapes (short-convolution layers beside
attention). For each: the blocks, the KV-cache groups (layers, block size, page) and the maximum concurrency vLLM
derives (get_max_concurrency_for_kv_cache_config).

    eval "$(bash tools/vllm_env.sh all)"
    PYTHONPATH=.:tools python -m differential.kv_layouts 0.32.0 [--record]

prints vLLM's answers; --record writes them to fixtures/differential/kv-layouts-vllm-<version>.json, which
tests/capacity/test_capacity_kv_layouts.py replays against reader/capacity/kv.py offline.
"""
from __future__ import annotations

from pathlib import Path

from . import ask_vllm
from .ask_vllm import ROOT, ask_lines, record_main

MODELS = ROOT / "fixtures" / "differential" / "kv-models"
TOKENIZER = ROOT / "fixtures" / "live" / "tiny-llama"
MAX_MODEL_LEN = 2048
KV_SPACE_GIB = 1

# runs inside the vLLM environment: one engine per model, in its own process; one line of JSON each
_ASK = r"""
import json, os, shutil, subprocess, sys, tempfile
tokenizer, max_len, space, folders = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
start = (
    "import json, sys\n"
    "from vllm import LLM\n"
    "from vllm.v1.core.kv_cache_utils import get_max_concurrency_for_kv_cache_config\n"
    "llm = LLM(model=sys.argv[1], load_format='dummy', dtype='bfloat16', max_model_len=int(sys.argv[2]),\n"
    "          max_num_seqs=4, enforce_eager=True, enable_prefix_caching=True, block_size=128)\n"
    "config = llm.llm_engine.engine_core.engine_core.scheduler.kv_cache_config\n"
    "groups = [{'layers': len(g.layer_names), 'block_size': g.kv_cache_spec.block_size,\n"
    "           'page_bytes': g.kv_cache_spec.page_size_bytes, 'spec': type(g.kv_cache_spec).__name__}\n"
    "          for g in config.kv_cache_groups]\n"
    "concurrency = get_max_concurrency_for_kv_cache_config(llm.llm_engine.vllm_config, config)\n"
    "print('ANSWER' + json.dumps({'num_blocks': config.num_blocks, 'groups': groups,\n"
    "                             'max_concurrency': round(concurrency, 4)}))\n")
for folder in folders:
    work = tempfile.mkdtemp()
    shutil.copy(os.path.join(folder, "config.json"), work)
    for name in os.listdir(tokenizer):
        if name.startswith("tokenizer"):
            shutil.copy(os.path.join(tokenizer, name), work)
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": space, "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
    run = subprocess.run([sys.executable, "-c", start, work, max_len], capture_output=True, text=True, timeout=600,
                         env=env)
    answer = next((line[6:] for line in run.stdout.splitlines() if line.startswith("ANSWER")), None)
    row = json.loads(answer) if answer else {"error": run.stderr.strip()[-500:]}
    print(json.dumps({"model": os.path.basename(folder), **row}))
    shutil.rmtree(work)
"""


def models() -> list[Path]:
    return sorted(p for p in MODELS.iterdir() if (p / "config.json").is_file())


def ask(venv: Path) -> list[dict]:
    folders = models()
    return ask_lines(venv, _ASK, [str(TOKENIZER), str(MAX_MODEL_LEN), str(KV_SPACE_GIB), *map(str, folders)],
                     len(folders))


def fixture_path(version: str) -> Path:
    return ask_vllm.fixture_path("kv-layouts", version)


def _body(version: str, venv: Path) -> dict:
    return {"vllm": version, "max_model_len": MAX_MODEL_LEN, "kv_space_gib": KV_SPACE_GIB, "block_size": 128,
            "prefix_caching": True, "recorded_by": "tools/differential/kv_layouts.py", "rows": ask(venv)}


if __name__ == "__main__":
    record_main("kv-layouts", _body)
