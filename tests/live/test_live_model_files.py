"""The real vLLM reads a model's files as our resolver does: the Hugging Face cache at a revision, and
Mistral's params.json.

vLLM's own config loading (vllm.transformers_utils.config.get_config, offline) runs once in the release's
environment over every case (the fixture cache at three revisions, params.json folders); its answers are
compared with ours.
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

from reader.catalog.model_files import read_model_path
from reader.catalog.resolution import resolve_model
from reader.errors import ReaderError

REPO = Path(__file__).resolve().parents[2]
FIXTURE_CACHE = REPO / "fixtures" / "hf_cache" / "hub"
TINY = "vllm-reader-tests/tiny-llama"
V1_SHA = "0e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5"

PROBE = r'''
import json, sys
from vllm.transformers_utils.config import get_config
keys = ("model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
        "intermediate_size", "max_position_embeddings", "tie_word_embeddings", "sliding_window", "layer_types",
        "num_local_experts", "num_experts_per_tok", "quantization_config")
out = {}
for name, model, revision in json.loads(sys.argv[1]):
    try:
        config = get_config(model, trust_remote_code=False, revision=revision).get_text_config()
        out[name] = {k: getattr(config, k, None) for k in keys}
    except Exception as err:
        out[name] = {"error": f"{type(err).__name__}: {err}"}
print("RESULT " + json.dumps(out, default=str))
'''

BASE = {"dim": 256, "head_dim": 64, "hidden_dim": 512, "n_heads": 4, "n_kv_heads": 2, "norm_eps": 1e-5,
        "vocab_size": 1024, "rope_theta": 10000.0}
# params.json as Mistral ships it, each with the config.json beside it (None: none)
MISTRAL = {
    # a window on every layer, no length of its own (config.json gives it)
    "dense-window": ({**BASE, "n_layers": 2, "sliding_window": 128}, {"max_position_embeddings": 4096}),
    # an interleaved window list, FP8 weights, its own length
    "interleaved-fp8": ({**BASE, "n_layers": 4, "max_position_embeddings": 8192, "sliding_window": [None, 256],
                         "quantization": {"qformat_weight": "fp8_e4m3", "qscheme_act": "TENSOR"}}, None),
    # a Mixtral-style moe section
    "mixtral": ({**BASE, "n_layers": 2, "max_position_embeddings": 8192,
                 "moe": {"num_experts": 4, "num_experts_per_tok": 2}}, None),
}
REVISIONS = {"main": None, "tag v1": "v1", "commit": V1_SHA}


def _mistral_folder(folder: Path, params: dict, config: dict | None) -> Path:
    folder.mkdir(parents=True)
    (folder / "params.json").write_text(json.dumps(params))
    # consolidated*.safetensors marks Mistral format; an empty one (a header with no tensors) holds no weights
    (folder / "consolidated.safetensors").write_bytes(struct.pack("<Q", 2) + b"{}")
    if config is not None:
        base = {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 256,
                "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1024}
        (folder / "config.json").write_text(json.dumps({**base, **config}))
    return folder


@pytest.fixture(scope="module")
def vllm_reads(vllm_032, tmp_path_factory):
    """(vLLM's answers by case name, the Mistral folders by case name), from one vLLM process."""
    root = tmp_path_factory.mktemp("mistral")
    folders = {name: _mistral_folder(root / name, *case) for name, case in MISTRAL.items()}
    cases = [[name, TINY, rev] for name, rev in REVISIONS.items()] + [[n, str(f), None] for n, f in folders.items()]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(FIXTURE_CACHE), "VLLM_LOGGING_LEVEL": "ERROR"}
    run = subprocess.run([str(vllm_032 / "bin" / "python"), "-c", PROBE, json.dumps(cases)], capture_output=True,
                         text=True, timeout=600, env=env)
    line = next((ln for ln in run.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, run.stderr[-3000:]
    return json.loads(line[len("RESULT "):]), folders


@pytest.mark.parametrize("name, layers, positions", [("main", 2, 4096), ("tag v1", 4, 2048), ("commit", 4, 2048)])
def test_vllm_reads_the_cache_at_the_revision_we_read(vllm_reads, monkeypatch, name, layers, positions):
    theirs = vllm_reads[0][name]
    monkeypatch.setenv("HF_HUB_CACHE", str(FIXTURE_CACHE))
    ours = resolve_model(TINY, revision=REVISIONS[name]).spec
    assert (theirs["num_hidden_layers"], theirs["max_position_embeddings"]) == (layers, positions)
    assert (ours.num_hidden_layers, ours.max_position_embeddings) == (layers, positions)


@pytest.mark.parametrize("name", ["dense-window", "interleaved-fp8"])
def test_vllm_reads_params_json_as_we_do(vllm_reads, name):
    theirs, ours = vllm_reads[0][name], read_model_path(vllm_reads[1][name])
    assert "error" not in theirs, theirs
    assert (ours.num_hidden_layers, ours.hidden_size, ours.intermediate_size, ours.num_key_value_heads) == \
        (theirs["num_hidden_layers"], theirs["hidden_size"], theirs["intermediate_size"], theirs["num_key_value_heads"])
    assert ours.max_position_embeddings == theirs["max_position_embeddings"]
    assert ours.tie_word_embeddings == bool(theirs["tie_word_embeddings"])
    kinds = theirs["layer_types"] or ["full_attention"] * theirs["num_hidden_layers"]
    assert ours.layer_kinds.sliding == kinds.count("sliding_attention")
    assert ours.sliding_window == (theirs["sliding_window"] if ours.layer_kinds.sliding else None)
    assert ours.moe is None and theirs["num_local_experts"] is None
    quant = theirs["quantization_config"]
    assert (ours.quantization.method if ours.quantization else None) == (quant["quant_method"] if quant else None)


def test_a_mixtral_params_json_gives_vllm_no_expert_count_and_we_refuse_it(vllm_reads):
    theirs = vllm_reads[0]["mixtral"]
    assert theirs.get("num_local_experts") is None  # MixtralForCausalLM reads config.num_local_experts
    with pytest.raises(ReaderError, match="moe"):
        read_model_path(vllm_reads[1]["mixtral"])
