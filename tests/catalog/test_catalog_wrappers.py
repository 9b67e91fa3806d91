"""Multimodal wrappers whose language model is not under text_config: Ultravox names another repository's model
(text_model_id) and vLLM loads that config; DeepSeek-VL2 keeps it under language_config. The reader finds the
language model where vLLM does, through the same resolver as any model, and says so."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from reader.catalog.hf_config import spec_from_config, trim_config
from reader.catalog.load import find_model
from reader.catalog.model_files import read_model_path
from reader.errors import ReaderError

ULTRAVOX = Path(__file__).resolve().parents[2] / "fixtures" / "hf_configs" / "ultravox-linked"


def test_an_ultravox_model_is_the_shape_of_the_language_model_it_names():
    spec = read_model_path(ULTRAVOX)
    llama = find_model("meta-llama/Llama-3.1-70B-Instruct")
    assert (spec.num_hidden_layers, spec.hidden_size, spec.num_key_value_heads) == (80, 8192, 8)
    assert spec.params_total == llama.params_total
    assert spec.is_multimodal and spec.architectures == ("UltravoxModel",)
    assert spec.id == str(ULTRAVOX)
    assert "meta-llama/Llama-3.1-70B-Instruct (text_model_id" in spec.notes and "audio encoder" in spec.notes


def _written(tmp_path: Path, config: dict) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(config))
    return tmp_path


def test_a_language_model_no_source_has_is_bad_input_naming_text_model_id(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    folder = _written(tmp_path, {"model_type": "ultravox", "architectures": ["UltravoxModel"],
                                 "text_model_id": "example-org/no-such-language-model"})
    with pytest.raises(ReaderError) as err:
        read_model_path(folder)
    assert err.value.key == "text_model_id" and "example-org/no-such-language-model" in str(err.value)


def test_a_text_model_id_that_is_not_an_id_is_bad_input(tmp_path):
    folder = _written(tmp_path, {"model_type": "ultravox", "text_model_id": 7})
    with pytest.raises(ReaderError) as err:
        read_model_path(folder)
    assert err.value.key == "text_model_id"


def test_an_ultravox_text_config_without_a_type_is_a_llama_config():
    # text_model_id null: vLLM builds CONFIG_MAPPING[text_config.get("model_type", "llama")](**text_config), so
    # what the section leaves out takes LlamaConfig's defaults (32 heads here)
    config = {"model_type": "ultravox", "architectures": ["UltravoxModel"], "text_model_id": None,
              "text_config": {"hidden_size": 64, "head_dim": 2, "num_hidden_layers": 1, "vocab_size": 128128}}
    spec = spec_from_config(config, model_id="tiny-ultravox", source="test")
    assert (spec.num_attention_heads, spec.head_dim, spec.intermediate_size) == (32, 2, 11008)
    assert spec.is_multimodal


DEEPSEEK_VL2 = {
    "architectures": ["DeepseekVLV2ForCausalLM"], "model_type": "deepseek_vl_v2",
    "vision_config": {"model_type": "vision", "layers": 27, "width": 1152},
    "language_config": {
        "model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408,
        "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16, "n_routed_experts": 64,
        "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "kv_lora_rank": 512,
        "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
        "vocab_size": 102400, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"},
}


def test_deepseek_vl2s_language_model_is_read_from_language_config():
    spec = spec_from_config(DEEPSEEK_VL2, model_id="deepseek-vl2-small-shaped", source="test")
    assert (spec.num_hidden_layers, spec.hidden_size, spec.vocab_size) == (27, 2048, 102400)
    assert spec.is_mla and spec.mla.kv_lora_rank == 512
    assert spec.moe.num_experts == 64 and spec.layer_ffns.count("dense") == 1
    assert spec.is_multimodal


def test_a_catalog_copy_keeps_the_language_config_and_the_linked_id():
    trimmed = trim_config({**DEEPSEEK_VL2, "ignored": 1, "text_model_id": "x/y"})
    assert trimmed["language_config"]["kv_lora_rank"] == 512 and trimmed["text_model_id"] == "x/y"
    assert "ignored" not in trimmed
