"""Every option syntax a release accepted is read as that release reads it; what it refused is refused.

(The same argument lists are checked against vLLM's own parser in tests/live/test_live_option_syntax.py.)"""
from __future__ import annotations

import pytest

from reader.config.context import LoadOptions
from reader.config.load import load_command_line
from reader.errors import ReaderError


def load(command: str, version: str):
    return load_command_line(command, LoadOptions(vllm_version=version))


@pytest.mark.parametrize("version", ["0.6.3", "0.8.0"])
def test_key_value_pairs_are_the_only_form_of_limit_mm_per_prompt_up_to_0_8_0(version):
    d = load("vllm serve m --limit-mm-per-prompt image=5,Video=1", version)
    assert d.flags["limit_mm_per_prompt"].value == {"image": 5, "video": 1}  # keys lower-cased, as vLLM does


@pytest.mark.parametrize("version", ["0.8.5", "0.9.2"])
def test_key_value_pairs_are_a_deprecated_fallback_of_dict_options_from_0_8_5_to_0_9_2(version):
    d = load("vllm serve m --limit-mm-per-prompt image=5,video=1", version)
    assert d.flags["limit_mm_per_prompt"].value == {"image": 5, "video": 1}
    assert any("deprecated KEY=VALUE form" in n.message for n in d.notes)
    assert load("""vllm serve m --limit-mm-per-prompt '{"image": 2}'""", version).flags[
        "limit_mm_per_prompt"].value == {"image": 2}


@pytest.mark.parametrize("version", ["0.18.0", "0.33.0"])
def test_key_value_pairs_from_0_10_0_are_a_refusal_of_the_release_not_bad_input(version):
    d = load("vllm serve m --limit-mm-per-prompt image=24", version)
    flag = d.flags["limit_mm_per_prompt"]
    assert flag.value is None and flag.refused_syntax.removed_in == "0.10.0"
    assert flag.refused_syntax.instead == '{"image": 24}'


@pytest.mark.parametrize("version", ["0.9.2", "0.18.0", "0.33.0"])
def test_a_bare_compilation_level_from_0_9_2_is_a_refusal_of_the_release_not_bad_input(version):
    d = load("vllm serve m --compilation-config 3", version)
    flag = d.flags["compilation_config"]
    assert flag.value is None and flag.refused_syntax.form == "a bare optimization level"
    assert flag.refused_syntax.removed_in == "0.9.2" and flag.refused_syntax.instead == "-O3"


@pytest.mark.parametrize("value, instead", [("false", "--no-enable-chunked-prefill"),
                                             ("true", "--enable-chunked-prefill")])
def test_a_value_after_a_flag_that_takes_none_is_a_refusal_of_the_release(value, instead):
    # KubeAI's model manifests pass --enable-chunked-prefill=false; argparse stops: "ignored explicit argument"
    flag = load(f"vllm serve m --enable-chunked-prefill={value}", "0.33.0").flags["enable_chunked_prefill"]
    assert flag.value is None and flag.refused_syntax.form == "a value after a flag that takes none"
    assert flag.refused_syntax.written == value and flag.refused_syntax.instead == instead


def test_a_value_after_chunked_prefill_is_read_where_it_took_an_optional_boolean():
    assert load("vllm serve m --enable-chunked-prefill=false", "0.6.3").flags["enable_chunked_prefill"].value is False


def test_a_bare_compilation_level_up_to_0_8_5_is_the_level():
    assert load("vllm serve m --compilation-config 3", "0.8.5").flags["compilation_config"].value == 3


def test_malformed_key_value_pairs_from_0_10_0_are_still_bad_input():
    with pytest.raises(ReaderError) as err:
        load("vllm serve m --limit-mm-per-prompt image=lots", "0.18.0")
    assert err.value.key == "--limit-mm-per-prompt"


def test_malformed_key_value_pairs_are_refused_with_vllms_reason():
    with pytest.raises(ReaderError) as err:
        load("vllm serve m --limit-mm-per-prompt image=lots", "0.6.3")
    assert "Failed to parse value of item image=lots" in err.value.message


def test_dotted_sub_keys_before_0_9_2_are_kept_as_an_option_that_release_does_not_have():
    d = load("vllm serve m --compilation-config.level 3", "0.8.5")
    flag = d.flags["compilation_config.level"]
    assert flag.in_version is False and flag.option == "--compilation-config.level" and flag.value == 3
    assert "0.9.2 and later" in flag.versions_with_flag
    assert "compilation_config" not in d.flags


def test_dotted_list_appends_concatenate():
    d = load("vllm serve m --compilation-config.cudagraph_capture_sizes+ 1,2 "
             "--compilation-config.cudagraph_capture_sizes+ 4", "0.32.0")
    assert d.flags["compilation_config"].value == {"cudagraph_capture_sizes": [1, 2, 4]}


def test_dotted_values_take_human_readable_integers_from_0_32_0():
    assert load("vllm serve m --compilation-config.max_cudagraph_capture_size 1k", "0.32.0").flags[
        "compilation_config"].value == {"max_cudagraph_capture_size": 1000}
    # 0.18.0 keeps the text, and CompilationConfig's integer field refuses it while argparse reads the option
    with pytest.raises(ReaderError, match="max_cudagraph_capture_size.*not an integer"):
        load("vllm serve m --compilation-config.max_cudagraph_capture_size 1k", "0.18.0")


def test_opt_equals_value_and_repeated_flags():
    d = load("vllm serve m --max-num-seqs=8 --max-num-seqs 16 --middleware a --middleware b", "0.18.0")
    assert d.flags["max_num_seqs"].value == 16 and "last value wins" in d.flags["max_num_seqs"].notes[0]
    assert d.flags["middleware"].value == ["a", "b"]


@pytest.mark.parametrize("command, dest, value", [
    ("vllm serve m --tool-call-parser hermes --enable-auto-tool-choice", "tool_call_parser", "hermes"),
    ("vllm serve m --enable-lora --lora-modules sql=/adapters/sql chat=/adapters/chat", "lora_modules",
     ["sql=/adapters/sql", "chat=/adapters/chat"]),
    ("""vllm serve m --lora-modules '{"name": "sql", "path": "/a", "base_model_name": "m"}'""", "lora_modules",
     ['{"name": "sql", "path": "/a", "base_model_name": "m"}']),
    ("vllm serve m --api-key secret-1 secret-2", "api_key", ["secret-1", "secret-2"]),
    ("""vllm serve m --limit-mm-per-prompt '{"image": 4, "video": 0}'""", "limit_mm_per_prompt",
     {"image": 4, "video": 0}),
    ("vllm serve m --chat-template /templates/tool_chat.jinja", "chat_template", "/templates/tool_chat.jinja"),
])
def test_options_for_parts_we_do_not_model_are_accepted_and_kept(command, dest, value):
    d = load(command, "0.18.0")
    assert d.flags[dest].value == value and d.flags[dest].in_version


def test_a_json_value_split_across_continuation_lines():
    script = ('vllm serve m \\\n'
              '  --speculative-config "{\\"method\\": \\"ngram\\", \\\n'
              '  \\"num_speculative_tokens\\": 4}" \\\n'
              '  --max-num-seqs 8')
    d = load(script, "0.18.0")
    assert d.flags["speculative_config"].value == {"method": "ngram", "num_speculative_tokens": 4}
    assert d.flags["max_num_seqs"].loc.line == 4


@pytest.mark.parametrize("version", ["0.40.0", "0.4.0", "nightly-0a1b2c3"])
def test_an_option_no_table_has_is_kept_unchecked_for_a_release_outside_the_tables(version):
    d = load("vllm serve m --max-num-seqs 8 --kv-cache-autotune aggressive --new-switch", version)
    assert d.flags["kv_cache_autotune"].value == "aggressive" and d.flags["new_switch"].value is True
    assert d.flags["max_num_seqs"].value == 8
    assert sum("kept as written and not checked" in n.message for n in d.notes) == 2


def test_an_option_no_table_has_is_still_bad_input_for_a_release_inside_them():
    with pytest.raises(ReaderError) as err:
        load("vllm serve m --kv-cache-autotune aggressive", "0.18.0")
    assert "no vLLM release" in err.value.message
