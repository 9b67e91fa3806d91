"""Reading a local Hugging Face config.json gives the same facts the catalog holds."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from _catalog_helpers import HF_FIXTURES
from reader.catalog.hf_config import Shape, count_params, spec_from_config, trim_config
from reader.catalog.model_files import read_model_path
from reader.catalog.load import get_model
from reader.errors import ReaderError

KV_FIELDS = ("model_type", "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
             "head_dim", "intermediate_size", "vocab_size", "max_position_embeddings", "tie_word_embeddings",
             "torch_dtype", "moe", "mla", "layer_kinds", "sliding_window", "attention_chunk_size", "quantization",
             "is_multimodal", "params_total", "params_active")

FIXTURE_TO_CATALOG = {
    "llama-3.1-8b": "meta-llama/Llama-3.1-8B",
    "qwen3-30b-a3b": "Qwen/Qwen3-30B-A3B",
    "deepseek-v3": "deepseek-ai/DeepSeek-V3",
    "gpt-oss-20b": "openai/gpt-oss-20b",
    "gemma-3-27b-it": "google/gemma-3-27b-it",
    "llama-4-maverick": "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
    "llama-3.1-70b-instruct-fp8": "nvidia/Llama-3.1-70B-Instruct-FP8",
    "qwen2.5-7b-instruct-awq": "Qwen/Qwen2.5-7B-Instruct-AWQ",
    "phi-3.5-mini-instruct": "microsoft/Phi-3.5-mini-instruct",
}


@pytest.mark.parametrize("folder, catalog_id", FIXTURE_TO_CATALOG.items())
def test_reader_agrees_with_the_catalog_on_every_sizing_field(folder, catalog_id):
    read = read_model_path(HF_FIXTURES / folder)
    entry = get_model(catalog_id)
    for name in KV_FIELDS:
        assert getattr(read, name) == getattr(entry, name), f"{folder}: {name}"


def test_a_file_path_and_its_folder_read_the_same():
    by_folder = read_model_path(HF_FIXTURES / "deepseek-v3")
    by_file = read_model_path(HF_FIXTURES / "deepseek-v3" / "config.json")
    assert by_folder.model_dump(exclude={"id"}) == by_file.model_dump(exclude={"id"})
    assert by_folder.id.endswith("deepseek-v3")  # the name the user gave


def test_read_spec_names_its_source_and_how_params_were_counted():
    spec = read_model_path(HF_FIXTURES / "llama-3.1-8b")
    assert "config.json" in spec.source
    assert "computed from config shapes" in spec.params_source


def test_gemma_3_reads_the_nested_text_config_and_fills_transformers_defaults():
    spec = read_model_path(HF_FIXTURES / "gemma-3-27b-it")
    assert (spec.vocab_size, spec.max_position_embeddings, spec.tie_word_embeddings) == (262208, 131072, True)
    assert "vocab_size" in spec.notes and "transformers defaults" in spec.notes
    assert spec.model_type == "gemma3" and spec.is_multimodal


def test_modelopt_sidecar_supplies_the_quantization_and_fp8_kv_cache():
    spec = read_model_path(HF_FIXTURES / "llama-3.1-70b-instruct-fp8")
    assert spec.quantization.method == "modelopt"
    assert spec.quantization.kv_cache_dtype == "fp8"


def test_without_the_sidecar_the_same_checkpoint_looks_unquantized(tmp_path):
    (tmp_path / "config.json").write_text((HF_FIXTURES / "llama-3.1-70b-instruct-fp8" / "config.json").read_text())
    assert read_model_path(tmp_path).quantization is None


def test_an_autogptq_quantize_config_beside_config_json_is_read_but_kept_apart_from_the_checkpoints_own():
    # vLLM reads quantize_config.json only under --quantization, so it is not the checkpoint's quantization
    spec = read_model_path(HF_FIXTURES / "gptq-quantize-config")
    assert spec.quantization is None and spec.quantization_file == "quantize_config.json"
    assert spec.file_quantization.method == "gptq" and spec.file_quantization.scheme.startswith("int4 group 128")


def test_an_autoawq_quant_config_that_names_no_method_reads_as_awq(tmp_path):
    (tmp_path / "config.json").write_text((HF_FIXTURES / "gptq-quantize-config" / "config.json").read_text())
    (tmp_path / "quant_config.json").write_text('{"zero_point": true, "q_group_size": 64, "w_bit": 4, '
                                               '"version": "GEMM"}')
    spec = read_model_path(tmp_path)
    assert (spec.quantization_file, spec.file_quantization.method) == ("quant_config.json", "awq")
    assert spec.file_quantization.scheme.startswith("int4 group 64")


def test_a_bad_value_in_a_quantize_config_json_is_named_by_its_own_key_not_as_if_inside_config_json(tmp_path):
    (tmp_path / "config.json").write_text((HF_FIXTURES / "gptq-quantize-config" / "config.json").read_text())
    (tmp_path / "quantize_config.json").write_text('{"bits": "four", "group_size": 128}')
    with pytest.raises(ReaderError) as caught:
        read_model_path(tmp_path)
    assert (caught.value.file, caught.value.key) == ("quantize_config.json", "bits")


def test_a_quantization_config_in_config_json_wins_over_a_file_beside_it(tmp_path):
    config = json.loads((HF_FIXTURES / "gptq-quantize-config" / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 128}
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "quantize_config.json").write_text('{"bits": 8, "group_size": 32}')
    spec = read_model_path(tmp_path)
    assert spec.quantization.method == "awq" and spec.file_quantization is None and spec.quantization_file is None


def test_gpt_oss_layer_types_decide_the_sliding_layers():
    spec = read_model_path(HF_FIXTURES / "gpt-oss-20b")
    assert (spec.layer_kinds.sliding, spec.layer_kinds.full, spec.sliding_window) == (12, 12, 128)
    assert spec.params_total == pytest.approx(20.9e9, rel=0.005)


def test_llama_4_dense_and_moe_layers_interleave():
    spec = read_model_path(HF_FIXTURES / "llama-4-maverick")
    assert spec.moe.moe_layer_step == 2 and spec.intermediate_size == 16384
    assert spec.params_total == pytest.approx(400e9, rel=0.005)


def _config(**changes):
    data = json.loads((HF_FIXTURES / "llama-3.1-8b" / "config.json").read_text())
    data.update(changes)
    return data


def test_mistral_style_window_on_every_layer():
    spec = spec_from_config(_config(sliding_window=4096, max_position_embeddings=32768), model_id="m", source="s")
    assert (spec.layer_kinds.sliding, spec.sliding_window) == (32, 4096)


def test_qwen_window_applies_only_when_switched_on_and_above_max_window_layers():
    base = dict(model_type="qwen2", sliding_window=4096, max_window_layers=20)
    assert spec_from_config(_config(**base), model_id="m", source="s").layer_kinds.sliding == 0
    spec = spec_from_config(_config(**base, use_sliding_window=True), model_id="m", source="s")
    assert (spec.layer_kinds.full, spec.layer_kinds.sliding) == (20, 12)


def _quant(qc):
    return spec_from_config(_config(quantization_config=qc), model_id="m", source="s").quantization


def test_quantization_methods_map_to_bits_and_scope():
    gptq = _quant({"quant_method": "gptq", "bits": 4, "group_size": 128, "lm_head": True})
    assert set(gptq.formats) == {"attention", "dense_mlp", "lm_head"}
    assert gptq.formats["lm_head"].bits_per_weight == pytest.approx(4 + 20 / 128)  # fp16 scale + int4 zero
    assert _quant({"quant_method": "bitsandbytes", "load_in_4bit": True}).weight_bits == 4
    ct = _quant({"quant_method": "compressed-tensors", "ignore": ["lm_head"],
                 "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}},
                 "kv_cache_scheme": {"num_bits": 8, "type": "float"}})
    assert (ct.weight_bits, set(ct.formats)) == (8, {"attention", "dense_mlp"})
    # vLLM's 'auto' KV dtype follows only ModelOpt checkpoints; compressed-tensors scales need --kv-cache-dtype
    assert ct.kv_cache_dtype is None
    with pytest.raises(ReaderError) as info:
        _quant({"quant_method": "mystery"})
    assert "quantization_config.quant_method" in info.value.render()


def test_param_count_of_a_tiny_dense_model_by_hand():
    shape = Shape(layers=2, hidden=8, heads=2, kv_heads=1, head_dim=4, intermediate=16, vocab=10, tied=False)
    attention = 8 * (8 + 2 * 4) + 8 * 8
    per_layer = attention + 2 * 8 + 3 * 8 * 16
    assert count_params(shape) == (2 * 10 * 8 + 8 + 2 * per_layer, None)


@pytest.mark.parametrize("name, key, words", [
    ("malformed.json", None, "not valid JSON"),
    ("missing-layers.json", "num_hidden_layers", "required key is missing"),
    ("wrong-type.json", "num_key_value_heads", "expected a whole number"),
    ("no-model-type.json", "model_type", "required key is missing"),
    ("top-level-list.json", None, "JSON object"),
])
def test_bad_configs_raise_reader_errors_naming_file_and_key(name, key, words):
    path = HF_FIXTURES / "broken" / name
    with pytest.raises(ReaderError) as info:
        read_model_path(path)
    err = info.value
    assert err.file and err.file.endswith(name)
    assert err.key == key
    assert words in err.render()


def test_malformed_json_error_gives_the_line():
    with pytest.raises(ReaderError) as info:
        read_model_path(HF_FIXTURES / "broken" / "malformed.json")
    assert info.value.line == 5


def test_a_folder_without_config_json_is_bad_input(tmp_path):
    with pytest.raises(ReaderError) as info:
        read_model_path(tmp_path)
    assert "has neither config.json nor params.json" in info.value.render()


def test_wrong_type_inside_text_config_names_the_nested_key(tmp_path):
    data = json.loads((HF_FIXTURES / "gemma-3-27b-it" / "config.json").read_text())
    data["text_config"]["num_hidden_layers"] = 62.5
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(ReaderError) as info:
        read_model_path(tmp_path)
    assert info.value.key == "text_config.num_hidden_layers"


def test_layer_types_must_cover_every_layer():
    with pytest.raises(ReaderError) as info:
        spec_from_config(_config(layer_types=["full_attention"] * 3), model_id="m", source="s")
    assert info.value.key == "layer_types"


def test_a_family_outside_the_catalog_with_a_gated_shared_expert():
    # Qwen1.5-MoE-A2.7B's shapes; its model card gives 14.3B parameters, 2.7B activated.
    config = dict(model_type="qwen2_moe", architectures=["Qwen2MoeForCausalLM"], hidden_size=2048,
                  num_hidden_layers=24, num_attention_heads=16, num_key_value_heads=16, intermediate_size=5632,
                  moe_intermediate_size=1408, shared_expert_intermediate_size=5632, num_experts=60,
                  num_experts_per_tok=4, vocab_size=151936, max_position_embeddings=8192, tie_word_embeddings=False,
                  torch_dtype="bfloat16", sliding_window=32768, use_sliding_window=False)
    spec = spec_from_config(config, model_id="Qwen/Qwen1.5-MoE-A2.7B", source="test")
    assert (spec.moe.shared_experts, spec.moe.shared_expert_intermediate_size) == (1, 5632)
    assert spec.params_total == pytest.approx(14.3e9, rel=0.01)
    assert spec.params_active == pytest.approx(2.7e9, rel=0.01)
    assert spec.sliding_window is None


def test_an_ignore_list_that_names_layers_one_by_one_excludes_a_part_only_when_it_covers_every_layer():
    layers = 32  # the Llama-3.1-8B fixture

    def ignoring(indices):
        names = [f"model.layers.{i}.self_attn.{p}_proj" for i in indices for p in "qkvo"] + ["lm_head"]
        return _quant({"quant_method": "compressed-tensors", "ignore": names,
                       "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}}})

    assert set(ignoring(range(layers)).formats) == {"dense_mlp"}
    half = spec_from_config(_config(quantization_config={
        "quant_method": "compressed-tensors", "ignore": [f"model.layers.{i}.self_attn.q_proj" for i in range(16)],
        "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}}}),
        model_id="m", source="s")
    assert "attention" in half.quantization.formats
    assert "unquantized in 16 of 32 layers" in half.notes


def test_module_names_map_to_the_parts_they_belong_to():
    from reader.catalog.hf_quant import part_of

    assert part_of("re:.*self_attn.*") == "attention"
    assert part_of("model.layers.3.linear_attn.in_proj_qkvz") == "linear_mixer"
    assert part_of("backbone.layers.3.mixer.q_proj") == "attention"
    assert part_of("model.layers.1.mlp.shared_experts.gate_proj") == "shared_experts"
    assert part_of("model.layers.2.mlp.experts.3.up_proj") == "experts"
    assert part_of("model.layers.0.mlp") == "dense_mlp"
    assert part_of("re:.*mlp.gate$") == part_of("gate") == part_of("vision_model.encoder") == "outside"


HUNYUAN = Path(__file__).resolve().parents[2] / "reader" / "catalog" / "models" / "tencent" / "Hunyuan-A13B-Instruct"


def test_hunyuan_gives_its_experts_per_layer_and_every_layer_shares_one_shape():
    spec = read_model_path(HUNYUAN)
    moe = spec.moe
    assert (moe.num_experts, moe.experts_per_token, moe.moe_intermediate_size) == (64, 8, 3072)
    # use_mixed_mlp_moe: one shared MLP of num_shared_expert x intermediate_size beside the routed experts
    assert (moe.shared_experts, moe.shared_expert_intermediate_size) == (1, 3072)
    assert spec.head_dim == 128 and round(spec.params_total / 1e9) == 80 and round(spec.params_active / 1e9) == 13


def test_hunyuan_layers_that_differ_are_refused_naming_the_key(tmp_path):
    config = json.loads((HUNYUAN / "config.json").read_text())
    config["moe_topk"] = [8] * 31 + [2]
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ReaderError) as err:
        read_model_path(tmp_path)
    assert err.value.key == "moe_topk" and "one value shared by every layer" in str(err.value)


def test_hunyuan_cross_layer_attention_is_refused_rather_than_counted_wrong(tmp_path):
    config = json.loads((HUNYUAN / "config.json").read_text())
    config.update(use_cla=True, cla_share_factor=2)
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ReaderError) as err:
        read_model_path(tmp_path)
    assert err.value.key == "use_cla" and "KV cache" in str(err.value)


def _nas_config(blocks):
    return {"model_type": "nemotron-nas", "architectures": ["DeciLMForCausalLM"], "hidden_size": 1024,
            "num_attention_heads": 16, "num_hidden_layers": len(blocks), "vocab_size": 32000,
            "max_position_embeddings": 8192, "block_configs": blocks}


def _block(group=4, mult=2.0, attn_no_op=False, ffn_no_op=False):
    return {"attention": {"n_heads_in_group": None if attn_no_op else group, "no_op": attn_no_op},
            "ffn": {"ffn_mult": None if ffn_no_op else mult, "no_op": ffn_no_op}}


def test_nemotron_nas_reads_each_layers_attention_and_mlp_from_its_block(tmp_path):
    blocks = [_block(mult=2.0), _block(attn_no_op=True, mult=1.0), _block(ffn_no_op=True), _block(mult=2.0)]
    (tmp_path / "config.json").write_text(json.dumps(_nas_config(blocks)))
    spec = read_model_path(tmp_path)
    assert spec.layer_mixers == ("full", "none", "full", "full")
    assert spec.layer_ffns == ("dense", "dense", "none", "dense")
    assert spec.num_key_value_heads == 4  # 16 heads // n_heads_in_group 4
    # int(2 * mult * 1024 / 3) rounded up to 256: 1365 -> 1536 at 2.0, 682 -> 768 at 1.0; their mean stands for all
    assert spec.intermediate_size == round((1536 + 768 + 1536) / 3)
    assert "MLP widths differ by layer (768-1536" in spec.notes


def test_nemotron_nas_refuses_what_it_would_count_wrong(tmp_path):
    for blocks, words in (([_block(group=4), _block(group=8)], "differ in KV heads"),
                          ([_block(), {"attention": {"replace_with_linear": True}, "ffn": {"ffn_mult": 1.0}}],
                           "replace_with_linear")):
        (tmp_path / "config.json").write_text(json.dumps(_nas_config(blocks)))
        with pytest.raises(ReaderError) as err:
            read_model_path(tmp_path)
        assert err.value.key == "block_configs" and words in str(err.value)


def test_an_omni_model_is_read_from_its_thinkers_text_config_the_part_vllm_serves(tmp_path):
    text = {"model_type": "qwen2_5_omni_text", "hidden_size": 3584, "intermediate_size": 18944,
            "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28, "vocab_size": 152064,
            "max_position_embeddings": 32768, "sliding_window": 32768, "use_sliding_window": False}
    config = {"model_type": "qwen2_5_omni", "architectures": ["Qwen2_5OmniModel"], "torch_dtype": "bfloat16",
              "thinker_config": {"model_type": "qwen2_5_omni_thinker", "text_config": text,
                                 "vision_config": {"model_type": "qwen2_5_omni_vision_encoder", "depth": 32},
                                 "audio_config": {"model_type": "qwen2_5_omni_audio_encoder"}},
              "talker_config": {"model_type": "qwen2_5_omni_talker", "hidden_size": 896}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    spec = read_model_path(tmp_path)
    assert (spec.hidden_size, spec.num_hidden_layers, spec.num_key_value_heads) == (3584, 28, 4)
    assert spec.is_multimodal and spec.layer_kinds.sliding == 0 and round(spec.params_total / 1e9, 1) == 7.6
    trimmed = trim_config(config)
    assert "talker_config" not in trimmed and trimmed["thinker_config"]["text_config"]["hidden_size"] == 3584
    assert trimmed["thinker_config"]["vision_config"] == {"model_type": "qwen2_5_omni_vision_encoder"}


def test_bloom_is_read_by_its_own_key_names_and_counts_the_published_parameters_exactly():
    spec = get_model("bigscience/bloom")
    assert (spec.num_hidden_layers, spec.hidden_size, spec.num_key_value_heads) == (70, 14336, 112)
    assert spec.params_total == 176_247_271_424  # the model card's figure, word_embeddings_layernorm included



def test_a_family_with_no_length_gets_vllms_assumed_2048():
    spec = get_model("bigscience/bloom")
    assert spec.max_position_embeddings == 2048 and spec.max_len_assumed
    assert "vLLM assumes 2048" in spec.notes


def test_gemma_4_full_layers_keep_their_own_head_shape_and_shared_layers_no_cache(tmp_path):
    # the keys of Gemma 4's E-models (gemma-4-E2B-it): full layers with their own head size, KV shared by the last
    # 20 layers; the 31B's full layers also have their own KV heads (num_global_key_value_heads under
    # attention_k_eq_v). What is still counted at the sliding layers' shape is said in every report.
    text = {"model_type": "gemma4_text", "hidden_size": 1536, "intermediate_size": 6144, "num_attention_heads": 8,
            "num_key_value_heads": 1, "head_dim": 256, "global_head_dim": 512, "num_hidden_layers": 35,
            "vocab_size": 262144, "max_position_embeddings": 131072, "sliding_window": 512,
            "layer_types": (["sliding_attention"] * 4 + ["full_attention"]) * 7,
            "num_kv_shared_layers": 20, "hidden_size_per_layer_input": 256, "vocab_size_per_layer_input": 262144}
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gemma4", "text_config": text}))
    spec = read_model_path(tmp_path)
    assert (spec.full_head_dim, spec.full_kv_heads, spec.kv_shared_layers) == (512, 1, 20)
    assert "full-attention layers' weights, projections and KV cache are counted at their own (512)" in \
        " ".join(spec.unmodelled)
    big = get_model("nvidia/Gemma-4-31B-IT-NVFP4")
    assert (big.full_head_dim, big.full_kv_heads, big.num_key_value_heads, big.head_dim) == (512, 4, 16, 256)


def test_gemma_4_per_layer_inputs_and_double_wide_mlps_are_counted_in_the_weights():
    # google/gemma-4-E2B-it: a 262,144 x (35 x 256) per-layer table (2.35B), its projections, and the 20 KV-shared
    # layers' MLPs twice as wide; the card's 5.1B adds the vision and audio encoders the reader leaves out
    spec = get_model("google/gemma-4-E2B-it")
    assert spec.per_layer_input_params == pytest.approx(2.390e9, rel=0.001)
    assert spec.intermediate_size == round(6144 * 55 / 35)
    assert spec.params_total == pytest.approx(4.628e9, rel=0.001)
    # attention as vLLM builds it: the 3 cached full layers at head size 512 (q, k, v, o and the q/k norms), the
    # 12 cached sliding layers at 256, and the last 20 layers, KV-shared, with q_proj, o_proj and q_norm only
    h = 1536
    full, sliding = 3 * (h * (8 + 2) * 512 + 8 * 512 * h + 2 * 512), 12 * (h * (8 + 2) * 256 + 8 * 256 * h + 2 * 256)
    shared = 4 * (2 * h * 8 * 512 + 512) + 16 * (2 * h * 8 * 256 + 256)
    assert spec.params_by_part["attention"] == full + sliding + shared
    from reader.capacity.shapes import gpu_shapes, resolve_weight_format
    from reader.catalog.load import get_gpu

    gpu = get_gpu("H100")
    shapes = gpu_shapes(spec, gpu, resolve_weight_format(spec, None, "bfloat16", gpu), tp=2)
    assert shapes.embed_params >= spec.per_layer_input_params // 2  # on the GPU, split like the embedding


def test_lfm2_short_convolution_layers_keep_a_conv_state_and_no_kv_cache():
    # LiquidAI/LFM2.5-VL-1.6B's text model (LFM2-1.2B's shape): 10 'conv' layers of ShortConv (in_proj to 3 x 2048,
    # a depthwise conv of 3, out_proj) and 6 attention layers; its MLP 12288 auto-adjusted to 2/3, rounded to 256
    from reader.capacity.kv import mamba_state

    spec = get_model("LiquidAI/LFM2.5-VL-1.6B")
    assert (spec.layer_kinds.linear, spec.layer_kinds.full, spec.ssm.kind) == (10, 6, "short_conv")
    assert spec.intermediate_size == 8192 and spec.tie_word_embeddings
    assert spec.params_total == pytest.approx(1.170e9, rel=0.001)  # LFM2-1.2B's card: 1.17B
    # short_conv_state_shape: conv_dim / TP x (conv_L_cache - 1 + speculative tokens) in the model dtype
    assert mamba_state(spec, tp=1, act_bytes=2).bytes == 2048 * 2 * 2
    assert mamba_state(spec, tp=2, act_bytes=2, num_spec=1).bytes == 1024 * 3 * 2


def test_an_lfm2_file_that_names_its_attention_layers_instead_of_layer_types_reads_the_same(tmp_path):
    # earlier LFM2 uploads carry full_attn_idxs, from which transformers' Lfm2Config builds layer_types
    text = json.loads((Path(__file__).resolve().parents[2] / "reader" / "catalog" / "models" / "LiquidAI"
                       / "LFM2.5-VL-1.6B" / "config.json").read_text())["text_config"]
    types = text.pop("layer_types")
    text.update(full_attn_idxs=[i for i, t in enumerate(types) if t == "full_attention"],
                architectures=["Lfm2ForCausalLM"])
    (tmp_path / "config.json").write_text(json.dumps(text))
    spec = read_model_path(tmp_path)
    assert (spec.layer_kinds.full, spec.layer_kinds.linear) == (6, 10)
    assert spec.params_total == get_model("LiquidAI/LFM2.5-VL-1.6B").params_total


def test_fuyu_whose_text_config_names_only_its_type_is_read_from_the_top_level():
    # adept/fuyu-8b: text_config is {"model_type": "persimmon"}; Persimmon is LayerNorm with biases and a two-matrix
    # relu2 MLP, so 36 layers of 4096 with an untied 262,144-token vocabulary count 9.40B
    spec = get_model("adept/fuyu-8b")
    assert (spec.num_hidden_layers, spec.is_multimodal, spec.mlp_gated) == (36, True, False)
    assert spec.params_total == pytest.approx(9.397e9, rel=0.001)


def test_a_nested_text_config_that_lists_only_what_differs_takes_its_class_defaults(tmp_path):
    # llava-hf/llava-1.5-7b-hf: text_config names a vicuna-7b-v1.5 Llama by its vocabulary and length alone;
    # transformers fills LlamaConfig's 4096 wide, 32 layers of 32 heads, MLP 11008: a Llama-2-7B shape
    text = {"architectures": ["LlamaForCausalLM"], "max_position_embeddings": 4096, "model_type": "llama",
            "rms_norm_eps": 1e-05, "torch_dtype": "float16", "vocab_size": 32064}
    config = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", "text_config": text,
              "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024, "num_hidden_layers": 24}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    spec = read_model_path(tmp_path)
    assert (spec.hidden_size, spec.num_hidden_layers, spec.num_key_value_heads, spec.intermediate_size) == \
        (4096, 32, 32, 11008)
    assert spec.params_total == pytest.approx(6.739e9, rel=0.001) and "LlamaConfig" in spec.notes
    # the same gaps at the top level are a broken file, not a sub-config
    (tmp_path / "config.json").write_text(json.dumps(text))
    with pytest.raises(ReaderError) as refused:
        read_model_path(tmp_path)
    assert refused.value.key == "num_hidden_layers"


def test_a_bare_base_model_architecture_vllm_serves_only_for_embeddings_is_refused_as_pooling(tmp_path):
    # intfloat/e5-mistral-7b-instruct: a Mistral shape under MistralModel, which vLLM registers as an embedding model
    config = {"model_type": "mistral", "architectures": ["MistralModel"], "hidden_size": 4096, "num_hidden_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
              "max_position_embeddings": 32768}
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ReaderError) as err:
        read_model_path(tmp_path)
    assert "pooling" in str(err.value)
    config["architectures"] = ["MistralForCausalLM"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert read_model_path(tmp_path).num_hidden_layers == 32


def test_exaone_3_names_its_layer_count_num_layers(tmp_path):
    config = {"model_type": "exaone", "architectures": ["ExaoneForCausalLM"], "hidden_size": 4096, "num_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336,
              "vocab_size": 102400, "max_position_embeddings": 32768, "tie_word_embeddings": False}
    (tmp_path / "config.json").write_text(json.dumps(config))
    spec = read_model_path(tmp_path)
    assert spec.num_hidden_layers == 32 and round(spec.params_total / 1e9, 1) == 7.8  # EXAONE-3.5-7.8B's shape
