"""The KV layouts of models whose layers are not alike, as the real vLLM 0.32.0 CPU build laid them out
(tools/differential/kv_layouts.py, fixtures/differential/kv-layouts-vllm-0.32.0.json): Gemma 4 shapes (full-attention
layers with their own head size, K = V, KV shared by the last layers) and LFM2 shapes (short convolutions beside
attention). reader/capacity/kv.py gives the same blocks, groups, block sizes, pages and maximum concurrency."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from reader.capacity.kv import kv_layout
from reader.capacity.shapes import stage_layer_kinds
from reader.catalog.model_files import read_model_path

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "fixtures" / "differential" / "kv-layouts-vllm-0.32.0.json").read_text())
ROWS = {row["model"]: row for row in RECORDED["rows"]}
MNBT = 4096  # the CPU build's default max_num_batched_tokens, which sizes a sliding layer's worst-case blocks


@pytest.mark.parametrize("name", sorted(ROWS))
def test_the_kv_layout_is_the_one_vllm_built(name):
    row = ROWS[name]
    spec = read_model_path(ROOT / "fixtures" / "differential" / "kv-models" / name)
    kinds = stage_layer_kinds(spec, [spec.num_hidden_layers], 0, cached=True)
    layout = kv_layout(spec, kinds, 1, 2, RECORDED["block_size"], prefix_caching=RECORDED["prefix_caching"])
    blocks = layout.num_blocks(RECORDED["kv_space_gib"] * 2**30)
    assert blocks == row["num_blocks"]
    assert layout.max_concurrency(blocks, RECORDED["max_model_len"], MNBT) == pytest.approx(row["max_concurrency"],
                                                                                         abs=1e-4)
    ours = Counter((k.block_size or layout.block_size, layout.page_bytes, "MambaSpec" if k.kind == "linear" else k.kind)
                   for k in layout.kinds for _ in range(k.groups))
    theirs = Counter((g["block_size"], g["page_bytes"], {"FullAttentionSpec": "full", "SlidingWindowSpec": "sliding"}
                      .get(g["spec"], g["spec"])) for g in row["groups"])
    assert ours == theirs
