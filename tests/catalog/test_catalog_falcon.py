"""The model reader on Falcon (issue 23): model_type falcon and the older RefinedWeb / RefinedWebModel files, as
vLLM builds them (vllm/model_executor/models/falcon.py @ v0.32.0): one query_key_value and one dense
projection, an MLP of two matrices 4 x hidden wide, LayerNorms with a bias, the lm_head tied to the embedding.
KV heads: one with multi_query, num_kv_heads groups in the new decoder layout (40B, 180B), else one per head.

Published counts (7.2B, 41.8B, 179.5B, as the issue and the Hub pages give them) count the lm_head the
checkpoints store beside the embedding; vLLM ties the two and keeps one matrix, so the reader's count is the
published one less vocab x hidden. The configs are reconstructed from documented keys
(fixtures/hf_configs/falcon/PROVENANCE.md)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reader.capacity.api import CapacityRequest, compute_capacity
from reader.catalog.load import get_gpu
from reader.catalog.model_files import read_model_path
from reader.errors import ReaderError

REPO = Path(__file__).resolve().parents[2]
FALCON = REPO / "fixtures" / "hf_configs" / "falcon"


def kv_bytes_per_token(folder: str, tp: int = 1) -> int:
    cap = compute_capacity(CapacityRequest(model=read_model_path(FALCON / folder), gpu=get_gpu("H100"),
                                           vllm_version="0.32.0", max_model_len=2048, max_num_batched_tokens=2048,
                                           max_num_seqs=16, gpu_memory_utilization=0.9, tensor_parallel_size=tp))
    return int(cap.kv_bytes_per_token.value)


def near(value: int, published: float, tolerance: float) -> bool:
    return abs(value - published) / published < tolerance


def test_falcon_7b_multi_query():
    """hidden 4544, 32 layers, 71 heads of 64, multi_query: one KV head. Per layer: one LayerNorm (parallel
    block, 2 x 4544), query_key_value 4544 x (71 + 2) x 64, dense 4544^2, MLP 2 x 4544 x 18176, no biases:
    207,070,080; x 32 = 6,626,242,560. Outside: embedding 65024 x 4544 (lm_head tied), final LayerNorm 9088.
    Total 6,921,720,704; with the stored lm_head 7,217,189,760, the published 7.2B.
    KV per token in bf16: 32 layers x 2 (K, V) x 1 head x 64 x 2 bytes = 8,192."""
    spec = read_model_path(FALCON / "falcon-7b")
    assert spec.params_total == 6_921_720_704
    assert near(spec.params_total + 65024 * 4544, 7.2e9, 0.005)
    assert (spec.num_hidden_layers, spec.num_key_value_heads, spec.head_dim) == (32, 1, 64)
    assert (spec.intermediate_size, spec.mlp_gated, spec.norms_per_layer) == (4 * 4544, False, 1)
    assert spec.max_position_embeddings == 2048  # FalconConfig's default: the Hub file names no length
    assert kv_bytes_per_token("falcon-7b") == 8_192


def test_the_refinedwebmodel_layout_of_falcon_7b_reads_the_same():
    """The original file (model_type RefinedWebModel, n_head, n_layer) names the same model."""
    old, new = read_model_path(FALCON / "falcon-7b-refinedwebmodel"), read_model_path(FALCON / "falcon-7b")
    assert (old.params_total, old.num_key_value_heads, old.num_hidden_layers, old.max_position_embeddings) == (
        new.params_total, new.num_key_value_heads, new.num_hidden_layers, new.max_position_embeddings)


def test_falcon_40b_in_the_refinedweb_layout_has_eight_kv_groups():
    """RefinedWeb, hidden 8192 (RWConfig turns the new decoder layout on), 60 layers, 128 heads, n_head_kv 8.
    Per layer: two LayerNorms (ln_attn, ln_mlp: 4 x 8192), query_key_value 8192 x (128 + 16) x 64,
    dense 8192^2, MLP 2 x 8192 x 32768: 679,510,016; x 60 = 40,770,600,960. Outside: embedding 65024 x 8192,
    final LayerNorm 16384. Total 41,303,293,952; with the stored lm_head 41,835,970,560, the published 41.8B.
    KV per token in bf16: 60 x 2 x 8 x 64 x 2 = 122,880."""
    spec = read_model_path(FALCON / "falcon-40b-refinedweb")
    assert spec.params_total == 41_303_293_952
    assert near(spec.params_total, 41.8e9, 0.02)
    assert near(spec.params_total + 65024 * 8192, 41.8e9, 0.001)
    assert (spec.num_key_value_heads, spec.norms_per_layer, spec.max_position_embeddings) == (8, 2, 2048)
    assert kv_bytes_per_token("falcon-40b-refinedweb") == 122_880


def test_falcon_180b_new_decoder_architecture():
    """hidden 14848, 80 layers, 232 heads of 64, num_kv_heads 8. Per layer: 4 x 14848 for two LayerNorms,
    query_key_value 14848 x (232 + 16) x 64, dense 14848^2, MLP 2 x 14848 x 59392: 2,219,823,104; x 80 =
    177,585,848,320. Outside: embedding 65024 x 14848, final LayerNorm 29696. Total 178,557,088,768; with the
    stored lm_head 179,522,565,120, the published 179.5B.
    KV per token in bf16: 80 x 2 x 8 x 64 x 2 = 163,840; at TP 8 one group per GPU: 20,480."""
    spec = read_model_path(FALCON / "falcon-180B")
    assert spec.params_total == 178_557_088_768
    assert near(spec.params_total, 179.5e9, 0.02)
    assert near(spec.params_total + 65024 * 14848, 179.5e9, 0.001)
    assert kv_bytes_per_token("falcon-180B") == 163_840
    assert kv_bytes_per_token("falcon-180B", tp=8) == 20_480


def test_without_multi_query_every_head_keeps_k_and_v():
    """falcon-rw-1b's branch: multi_query false (32 KV heads), biased linears, attention then MLP in sequence
    (two LayerNorms). Per layer: 4 x 2048 for the norms, query_key_value 2048 x 96 x 64 + 6144, dense
    2048^2 + 2048, MLP 2 x 2048 x 8192 + 8192 + 2048: 50,356,224; x 24 = 1,208,549,376. Outside: embedding
    50304 x 2048, final LayerNorm 4096: 1,311,625,216. KV per token: 24 x 2 x 32 x 64 x 2 = 196,608."""
    spec = read_model_path(FALCON / "falcon-rw-1b")
    assert spec.params_total == 1_311_625_216
    assert (spec.num_key_value_heads, spec.norms_per_layer) == (32, 2)
    assert kv_bytes_per_token("falcon-rw-1b") == 196_608


def test_the_new_decoder_layout_ignores_multi_query(tmp_path):
    """FalconConfig: with new_decoder_architecture, multi_query is ignored and num_kv_heads counts."""
    config = json.loads((FALCON / "falcon-180B" / "config.json").read_text())
    config["multi_query"] = True
    config["num_kv_heads"] = 4
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert read_model_path(tmp_path).num_key_value_heads == 4


def test_a_falcon_file_with_the_refinedweb_key_names_is_refused_by_name(tmp_path):
    """FalconConfig has no n_layer alias (transformers would fall back to its 32-layer default): the reader
    names the key it needs rather than guess."""
    config = json.loads((FALCON / "falcon-7b-refinedwebmodel" / "config.json").read_text())
    config["model_type"] = "falcon"
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ReaderError) as refused:
        read_model_path(tmp_path)
    assert refused.value.key == "num_hidden_layers"


def test_diagnose_of_a_falcon_7b_launch_gives_a_diagnosis(tmp_path):
    launch = tmp_path / "serve.sh"
    launch.write_text("vllm serve tiiuae/falcon-7b --max-model-len 2048 --max-num-seqs 64\n")
    result = subprocess.run(
        [sys.executable, "-m", "reader", "diagnose", str(launch), "--model", str(FALCON / "falcon-7b"),
         "--gpu", "H100-SXM", "--vllm-version", "0.32.0", "--no-whatifs", "--no-load-curve", "--format", "json"],
        capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["verdict"]["limit"] in ("admission", "load", "gpu", "kv_memory", "budget_small", "budget_large")
