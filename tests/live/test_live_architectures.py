"""The real vLLM 0.32.0 (CPU build, dummy weights) against our KV accounting for architectures outside the
Llama mould: GPT-2 (multi-head attention, learned positions, tied LM head), a Mistral-v0.1-style model with
a sliding window on every layer, and a Qwen3-Next-style hybrid (Gated DeltaNet layers beside full attention:
the state page padded to the attention page, Mamba groups, one state block per request and group, two with
prefix caching, which v0.32.0 turns on for hybrid models by default).

The CPU backend gets its KV space from VLLM_CPU_KVCACHE_SPACE (1 GiB here), so the start-up line
'CPU KV cache size: N tokens, Maximum concurrency for L tokens per request: X' depends only on the KV layout:
bytes per token, page, groups and the blocks one request takes. Both figures must equal ours.

The model folders are tiny configs written for these tests (fixtures/live/tiny-gpt2, tiny-mistral-sliding,
tiny-qwen3-next), with the word-level tokenizer of fixtures/live/tiny-llama. The hybrid runs with
--mamba-ssm-cache-dtype float32, which the CPU platform would otherwise force for its GDN kernels
(vllm/platforms/cpu.py @ v0.32.0), so the state's dtype is the flag's.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from reader.capacity.kv import kv_layout
from reader.capacity.shapes import stage_layer_kinds
from reader.catalog.model_files import read_model_path

from ._server import ROOT, live_server

KV_SPACE = 1 << 30  # VLLM_CPU_KVCACHE_SPACE=1 (GiB), set by live_server
FLAGS = ["--gpu-memory-utilization", "0.3", "--block-size", "128", "--max-num-batched-tokens", "512",
         "--max-num-seqs", "16"]
LINE = re.compile(r"KV cache size: ([\d,]+) tokens, Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x")


def _ours(folder: Path, max_len: int, prefix_caching: bool = False) -> tuple[int, float]:
    spec = read_model_path(folder)
    layout = kv_layout(spec, stage_layer_kinds(spec, [spec.num_hidden_layers], 0), 1, 2.0, 128,
                       prefix_caching=prefix_caching, ssm_default="float32")
    blocks = layout.num_blocks(KV_SPACE)
    concurrency = layout.max_concurrency(blocks, max_len, 512)
    return int(concurrency * max_len), concurrency


@pytest.mark.parametrize("folder, max_len", [("tiny-gpt2", 1024), ("tiny-mistral-sliding", 4096)])
def test_vllm_logs_the_kv_capacity_we_compute(vllm_032, tmp_path, folder, max_len):
    model_dir = ROOT / "fixtures" / "live" / folder
    with live_server(vllm_032, [*FLAGS, "--max-model-len", str(max_len)], tmp_path / f"{folder}.log",
                     model_dir=model_dir) as server:
        found = LINE.search(server.log())
    assert found, "no KV cache size line in the log"
    tokens, logged_len, concurrency = int(found.group(1).replace(",", "")), int(found.group(2).replace(",", "")), \
        float(found.group(3))
    ours_tokens, ours_concurrency = _ours(model_dir, max_len)
    assert logged_len == max_len
    assert tokens == ours_tokens
    assert concurrency == pytest.approx(ours_concurrency, abs=0.005)


@pytest.mark.parametrize("prefix_caching", [True, False])
def test_vllm_logs_the_hybrid_kv_capacity_we_compute(vllm_032, tmp_path, prefix_caching):
    model_dir = ROOT / "fixtures" / "live" / "tiny-qwen3-next"
    flags = [*FLAGS, "--max-model-len", "4096", "--mamba-ssm-cache-dtype", "float32",
             "--enable-prefix-caching" if prefix_caching else "--no-enable-prefix-caching"]
    with live_server(vllm_032, flags, tmp_path / "hybrid.log", model_dir=model_dir) as server:
        log = server.log()
    found = LINE.search(log)
    assert found, "no KV cache size line in the log"
    ours_tokens, ours_concurrency = _ours(model_dir, 4096, prefix_caching)
    assert int(found.group(1).replace(",", "")) == ours_tokens
    assert float(found.group(3)) == pytest.approx(ours_concurrency, abs=0.005)
    assert "Padding mamba page size" in log  # the state page padded to the 128-token attention page
