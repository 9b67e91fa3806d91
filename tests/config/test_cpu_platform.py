"""A launch of vLLM's CPU build, read from its own script: `export VLLM_CPU_KVCACHE_SPACE=1` sizes the KV cache,
and the CPU platform sets its block size and scheduling (reader/config/platforms.py, from vllm/platforms/cpu.py).
The script is the one fixtures/live/metrics/bench was recorded from; its server logged its KV cache's size."""
from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

from reader.config.from_cli import load_and_resolve, load_options
from reader.config.load import load_deployment

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "fixtures" / "live" / "metrics" / "bench"
SCRIPT = BENCH / "serve.sh"
MODEL = str(ROOT / "fixtures" / "live" / "tiny-llama" / "config.json")


def logged_kv_tokens() -> int:
    """The server's own line: 'CPU KV cache size: 1,048,576 tokens'."""
    log = gzip.open(BENCH / "server.log.gz", "rt").read()
    return int(re.search(r"CPU KV cache size: ([\d,]+) tokens", log).group(1).replace(",", ""))


def test_an_exported_variable_is_in_the_launchs_environment():
    assert load_deployment(str(SCRIPT)).env == {"VLLM_CPU_KVCACHE_SPACE": "1"}


def test_the_cpu_platform_sets_block_size_kv_memory_and_scheduling():
    r = load_and_resolve(str(SCRIPT), load_options(model=MODEL, vllm_version="0.32.0"))
    assert r.value("block_size") == 128
    assert r.value("kv_cache_memory_bytes") == 1 << 30
    assert r.value("async_scheduling") is False
    assert "cpu.py" in r.values["block_size"].source and "VLLM_CPU_KVCACHE_SPACE=1" in \
        r.values["kv_cache_memory_bytes"].source


def test_the_cpu_form_predicts_the_cpu_servers_kv_tokens_exactly():
    result = subprocess.run([sys.executable, "-m", "reader", "capacity", str(SCRIPT), "--model", MODEL,
                             "--vllm-version", "0.32.0", "--format", "json"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["gpu_kv_cache_tokens"]["value"] == logged_kv_tokens() == 1_048_576
    block = doc["block_size"]
    assert (block["value"] if isinstance(block, dict) else block) == 128


def test_without_the_variable_the_launch_is_a_gpus(tmp_path):
    path = tmp_path / "serve.sh"
    path.write_text(SCRIPT.read_text().replace("export VLLM_CPU_KVCACHE_SPACE=1\n", ""))
    r = load_and_resolve(str(path), load_options(model=MODEL, vllm_version="0.32.0"))
    assert r.value("block_size") == 16 and r.value("kv_cache_memory_bytes") is None


def test_a_manifests_env_entry_sets_the_cpu_kv_cache(tmp_path):
    manifest = tmp_path / "deployment.yaml"
    manifest.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: tiny}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.32.0
          command: ["vllm", "serve", "fixtures/live/tiny-llama"]
          args: ["--max-num-seqs", "16", "--max-model-len", "2048"]
          env:
            - {name: VLLM_CPU_KVCACHE_SPACE, value: "2"}
""")
    r = load_and_resolve(str(manifest), load_options(model=MODEL))
    assert r.value("kv_cache_memory_bytes") == 2 << 30 and r.value("block_size") == 128
