"""Arguments are read as the chosen release of `vllm serve` would read them."""
from __future__ import annotations

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_command_line, load_deployment
from reader.errors import ReaderError


def flags(command: str, version: str = "0.32.0", **opts):
    d = load_command_line(command, LoadOptions(vllm_version=version, **opts))
    return {dest: f.value for dest, f in d.flags.items()}, d


def test_dashes_and_underscores_are_interchangeable():
    got, _ = flags("vllm serve m --max_num_seqs 64 --max-num-batched-tokens 4096")
    assert got["max_num_seqs"] == 64 and got["max_num_batched_tokens"] == 4096


def test_an_unambiguous_prefix_is_accepted_with_a_note():
    got, d = flags("vllm serve m --max-num-seq 12")
    assert got["max_num_seqs"] == 12
    assert any("unambiguous prefix" in n.message for n in d.notes)


def test_an_ambiguous_prefix_is_refused_naming_the_candidates():
    with pytest.raises(ReaderError) as err:
        flags("vllm serve m --max-num 3")
    assert "--max-num-seqs" in err.value.message and "--max-num-batched-tokens" in err.value.message


def test_an_option_no_release_knows_is_bad_input_with_a_suggestion():
    with pytest.raises(ReaderError) as err:
        flags("vllm serve m --max-num-sequences 3")
    assert "Did you mean '--max-num-seqs'" in err.value.message


def test_a_flag_of_other_releases_is_kept_and_marked_absent():
    _, d = flags("vllm serve m --swap-space 8", version="0.18.0")
    assert d.flags["swap_space"].in_version is False
    assert d.flags["swap_space"].value == 8.0
    _, old = flags("vllm serve m --swap-space 8", version="0.17.1")
    assert old.flags["swap_space"].in_version is True


def test_a_wrong_type_is_bad_input_naming_the_flag():
    with pytest.raises(ReaderError) as err:
        flags("vllm serve m --max-num-seqs lots")
    assert err.value.key == "--max-num-seqs" and "integer" in err.value.message


def test_human_readable_integers_follow_vllm_case_rules():
    got, _ = flags("vllm serve m --max-model-len 32k --max-num-batched-tokens 8K")
    assert got["max_model_len"] == 32000 and got["max_num_batched_tokens"] == 8192
    got, _ = flags("vllm serve m --max-model-len auto", version="0.18.0")
    assert got["max_model_len"] == -1


def test_boolean_optional_flags_and_their_negations():
    got, _ = flags("vllm serve m --no-enable-prefix-caching --enable-chunked-prefill")
    assert got["enable_prefix_caching"] is False and got["enable_chunked_prefill"] is True


def test_old_store_boolean_takes_an_optional_value():
    got, _ = flags("vllm serve m --enable-chunked-prefill False", version="0.6.3")
    assert got["enable_chunked_prefill"] is False
    got, _ = flags("vllm serve m --enable-chunked-prefill", version="0.6.3")
    assert got["enable_chunked_prefill"] is True


def test_dotted_sub_keys_of_one_spelling_merge():
    got, _ = flags("vllm serve m --compilation-config.mode 3 --compilation-config.pass_config.fuse_allreduce_rms=true")
    assert got["compilation_config"] == {"mode": 3, "pass_config": {"fuse_allreduce_rms": True}}


def test_dotted_sub_keys_replace_a_whole_json_value_and_other_spellings_as_vllm_does():
    # vLLM appends each spelling's merged sub-keys after every other argument; argparse keeps the last.
    got, d = flags("""vllm serve m --compilation-config '{"cudagraph_mode": "FULL"}' --compilation-config.mode 3 """
                   """-cc.pass_config.fuse_allreduce_rms=true""")
    assert got["compilation_config"] == {"pass_config": {"fuse_allreduce_rms": True}}
    lost = [n.message for n in d.notes if n.level == "warning"]
    assert len(lost) == 2 and all("is lost" in m for m in lost)


@pytest.mark.parametrize("version, dest, value", [
    ("0.32.0", "optimization_level", "3"),  # v0.12.0+: -O3 means --optimization-level 3
    ("0.11.2", "compilation_config", {"mode": 3}),
    ("0.10.0", "compilation_config", {"level": 3}),
    ("0.8.5", "compilation_config", 3),
])
def test_dash_O_shorthand_per_release(version, dest, value):
    got, _ = flags("vllm serve m -O3", version=version)
    assert got[dest] == value


def test_choices_outside_the_release_are_marked_not_refused():
    _, d = flags("vllm serve m --kv-cache-dtype fp8_ds_mla", version="0.10.0")
    assert d.flags["kv_cache_dtype"].invalid_choice and "fp8" in d.flags["kv_cache_dtype"].invalid_choice
    _, d = flags("vllm serve m --kv-cache-dtype fp8_ds_mla", version="0.18.0")
    assert d.flags["kv_cache_dtype"].invalid_choice is None


def test_line_continuations_env_prefixes_and_quotes():
    _, d = flags("VLLM_USE_V1=0 vllm serve m \\\n  --max-model-len 4096 \\\n  --speculative-config '{\"method\": \"ngram\"}'")
    assert d.env["VLLM_USE_V1"] == "0"
    assert d.flags["max_model_len"].loc.line == 2
    assert d.speculative.method == "ngram"


def test_api_server_entry_point_and_docker_run():
    _, d = flags("python3 -m vllm.entrypoints.openai.api_server --model m --max-num-seqs 8")
    assert d.entry_point == "api_server" and d.model == "m"
    d = load_command_line("docker run --gpus '\"device=0,1\"' -e X=1 vllm/vllm-openai:v0.9.2 --model m -tp 2")
    assert d.vllm_version_tag == "0.9.2" and d.context.gpu_count == 2 and d.flags["tensor_parallel_size"].value == 2


def test_placeholders_are_reported_and_set_fills_them():
    _, d = flags("vllm serve $MODEL --max-model-len ${MAX_LEN}")
    assert {p.name: p.flag for p in d.placeholders} == {"MODEL": "model", "MAX_LEN": "--max-model-len"}
    assert d.model is None
    assert any("--set MAX_LEN" in n.message for n in d.notes)
    _, d = flags("vllm serve $MODEL --max-model-len ${MAX_LEN}", set={"MODEL": "m", "MAX_LEN": "2048"})
    assert d.model == "m" and d.flags["max_model_len"].value == 2048 and not d.placeholders


def test_legacy_speculative_flags_are_normalised():
    _, d = flags("vllm serve m --speculative-model [ngram] --num-speculative-tokens 5", version="0.6.6")
    assert d.speculative.method == "ngram" and d.speculative.num_speculative_tokens == 5
    assert d.speculative.spelled_as == "speculative_model"


def test_user_values_are_kept_apart_from_defaults():
    _, d = flags("vllm serve m --max-num-seqs 8")
    dumped = d.serving.model_dump(exclude_none=True, exclude={"other"})
    assert dumped == {"max_num_seqs": 8}


# ---- vllm serve --config YAML ---------------------------------------------------------------

def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_config_yaml_false_is_dropped_by_vllm_serve_in_every_release(tmp_path):
    # `vllm serve` reads --config with its top-level parser, which has no --no-X options: from 0.28.0 the
    # api_server entry point negates a false boolean, `vllm serve` still drops it (checked against vLLM 0.32.0)
    path = write(tmp_path, "c.yaml", "model: m\nenable-prefix-caching: false\nmax_num_seqs: 16\n")
    for version in ("0.27.1", "0.28.0", "0.32.0"):
        d = load_deployment(path, LoadOptions(vllm_version=version))
        assert "enable_prefix_caching" not in d.flags
        assert any("has no effect" in n.message and n.loc.line == 2 for n in d.notes)
        assert d.flags["max_num_seqs"].loc.line == 3 and d.flags["max_num_seqs"].spelling == "max_num_seqs"


def test_config_yaml_false_is_negated_for_the_api_server_from_0_28():
    from reader.config.load import entries_to_tokens
    from reader.config.invocation import ConfigEntry
    from reader.versions import choose_version

    entry = ConfigEntry(key="enable-prefix-caching", value=False)
    old = entries_to_tokens([entry], choose_version("0.27.1"), [], "api_server")
    new = entries_to_tokens([entry], choose_version("0.28.0"), [], "api_server")
    assert old == [] and [t.text for t in new] == ["--no-enable-prefix-caching"]


def test_config_yaml_nested_mapping_before_0_16_is_a_warning(tmp_path):
    path = write(tmp_path, "c.yaml", "model: m\ncompilation-config:\n  mode: 3\n")
    d = load_deployment(path, LoadOptions(vllm_version="0.14.0"))
    assert any("JSON string" in n.message for n in d.notes)
    assert not any("JSON string" in n.message for n in load_deployment(path, LoadOptions(vllm_version="0.16.0")).notes)


def test_comment_block_gives_context(tmp_path):
    path = write(tmp_path, "c.yaml", "# vllm-reader:\n#   vllm_version: 0.18.0\n#   gpu: L4\n#   gpu_count: 2\n"
                                     "model: m\n")
    d = load_deployment(path)
    assert d.vllm_version_tag == "0.18.0" and d.context.gpu == "L4" and d.context.gpu_count == 2
    assert d.context.gpu_origin == "comment"
    d = load_deployment(path, LoadOptions(gpu="H100-SXM"))
    assert d.context.gpu == "H100-SXM" and d.context.gpu_origin == "cli"


def test_comment_block_unknown_key_is_bad_input(tmp_path):
    path = write(tmp_path, "c.yaml", "# vllm-reader:\n#   gpus: 2\nmodel: m\n")
    with pytest.raises(ReaderError) as err:
        load_deployment(path)
    assert err.value.key == "gpus" and err.value.line == 1


# ---- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, words, line", [
    ("model: m\nmax_num_seqs: [1\n", "malformed YAML", 3),
    ("model: !!python/object:os.system x\n", "not plain data", 1),
    ("model: !custom x\n", "not plain data", 1),
    ("model: m\nmax_num_seqs: many\n", "integer", 2),
    ("model: m\nmax_num_sequences: 4\n", "Did you mean '--max-num-seqs'", 2),
    ("", "empty", None),
])
def test_bad_yaml_is_one_clear_error_with_a_line(tmp_path, text, words, line):
    path = write(tmp_path, "c.yaml", text)
    with pytest.raises(ReaderError) as err:
        load_deployment(path)
    assert words in err.value.message
    assert err.value.line == line
    assert err.value.file == path


def test_alias_bomb_is_refused(tmp_path):
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
        f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n" for i in range(8))
    path = write(tmp_path, "bomb.yaml", bomb)
    with pytest.raises(ReaderError) as err:
        load_deployment(path)
    assert "alias" in err.value.message or "200,000 nodes" in err.value.message


@pytest.mark.parametrize("setup, words", [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "directory"),
    (lambda p: p.write_bytes(b"\x00\x01\x02binary"), "binary"),
    (lambda p: p.write_text("echo hello\n"), "no vLLM launch"),
])
def test_unreadable_inputs(tmp_path, setup, words):
    path = tmp_path / "thing.sh"
    setup(path)
    with pytest.raises(ReaderError) as err:
        load_deployment(str(path))
    assert words in err.value.message


def test_malformed_json_names_the_line(tmp_path):
    path = write(tmp_path, "c.json", '{\n  "model": "m",\n  "max_num_seqs": ,\n}\n')
    with pytest.raises(ReaderError) as err:
        load_deployment(path)
    assert err.value.line == 3 and "malformed JSON" in err.value.message


def test_a_template_slot_value_in_a_manifest_does_not_hide_its_launch(tmp_path):
    # GKE's samples end with a Secret `hf_api_token: {{HF_TOKEN}}`, filled by hand before `kubectl apply`; unquoted,
    # YAML reads it as a mapping key that is a mapping and refuses the whole stream
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text(
        "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - image: vllm/vllm-openai:v0.10.0\n"
        "        args: [--model=Qwen/Qwen3-8B, --max-model-len=4096]\n---\nkind: Secret\nstringData:\n"
        "  hf_api_token: {{HF_TOKEN}}\n")
    d = load_deployment(str(manifest))
    assert d.model == "Qwen/Qwen3-8B" and d.flags["max_model_len"].loc.line == 7


def test_yaml_broken_elsewhere_than_a_template_slot_is_still_refused_at_its_line(tmp_path):
    manifest = tmp_path / "deploy.yaml"
    manifest.write_text("apiVersion: apps/v1\n    kind: Deployment\nvalue: {{X}}\n")
    with pytest.raises(ReaderError) as err:
        load_deployment(str(manifest))
    assert "malformed YAML" in err.value.message and err.value.line == 2


def test_a_ray_serve_application_of_its_own_code_is_refused_with_what_to_give(tmp_path):
    service = tmp_path / "ray-service.yaml"
    service.write_text("kind: RayService\nspec:\n  serveConfigV2: |\n    applications:\n      - name: llm\n"
                       "        import_path: serve_tpu:model\n        runtime_env:\n          env_vars:\n"
                       "            MODEL_ID: \"$MODEL_ID\"\n")
    with pytest.raises(ReaderError) as err:
        load_deployment(str(service))
    text = err.value.render()
    assert "import_path serve_tpu:model, line 6" in text and "does not run" in text and "`vllm serve" in text


def test_a_config_file_whose_model_is_a_mapping_is_bad_input_at_its_line(tmp_path):
    # vLLM passes each key of a --config file as `--key str(value)`: the mapping would be the model's name
    config = tmp_path / "serve.yaml"
    config.write_text("max-model-len: 4096\nmodel:\n  name: Qwen/Qwen3-8B\n")
    with pytest.raises(ReaderError) as err:
        load_deployment(str(config))
    assert err.value.key == "model" and err.value.line == 2 and "a string (model: Qwen/Qwen3-8B)" in err.value.message
