"""The keys of JSON options are checked against the config class each option builds, with the types read from
the release's own source (rules/flags `key_types`, tools/flag_constraints.py TypeReader): an unknown key or a
value of the wrong type is refused where vLLM refuses it. Options argparse itself turns into a config class
(--compilation-config) stop while the command line is read: bad input, exit 2, one sentence naming the key.
Options vLLM keeps as a dict until it builds the engine config (--speculative-config) are a `check` finding
(VR119), exit 1."""
from __future__ import annotations

import json

import pytest

from _rules_helpers import REPO, check_text, run_cli, write
from reader.config.flagtable import flag_table
from reader.versions import parse_version


def key_types(version: str, option: str) -> dict:
    return flag_table(parse_version(version)).options[option]["key_types"]


def test_the_types_come_from_the_release_source():
    spec = key_types("0.32.0", "--speculative-config")
    assert spec["config"] == "SpeculativeConfig" and spec["stage"] == "startup"
    fields = spec["classes"]["SpeculativeConfig"]
    assert fields["model"] == {"t": "union", "of": [{"t": "str"}, {"t": "none"}]}
    assert fields["num_speculative_tokens"] == {"t": "int"}
    method_values = next(d["values"] for d in fields["method"]["of"] if d["t"] == "literal")
    assert {"ngram", "eagle3", "draft_model", "mtp"} <= set(method_values)
    compilation = key_types("0.32.0", "--compilation-config")
    assert compilation["stage"] == "parse"  # EngineArgs types the field as CompilationConfig itself
    assert "PassConfig" in compilation["classes"]  # nested config classes are described too
    assert "level" not in compilation["classes"]["CompilationConfig"]  # gone by 0.32.0: an unknown key


def test_a_speculative_key_of_the_wrong_type_is_a_finding_naming_the_key(tmp_path):
    report = check_text(tmp_path, """vllm serve m --speculative-config '{"model": 3, "num_speculative_tokens": 2}'""",
                        version="0.32.0")
    found = [f for f in report.findings if f.rule_id == "VR119"]
    assert len(found) == 1 and found[0].severity == "error"
    assert "speculative_config.model" in found[0].message and "a string" in found[0].message


def test_a_method_vllm_does_not_know_is_a_finding_with_its_values(tmp_path):
    report = check_text(tmp_path, """vllm serve m --speculative-config '{"method": "ngramm", "num_speculative_tokens": 2}'""",
                        version="0.32.0")
    found = [f for f in report.findings if f.rule_id == "VR119"]
    assert found and "speculative_config.method" in found[0].message and '"ngram"' in found[0].message


def test_an_unknown_speculative_key_is_a_finding(tmp_path):
    report = check_text(tmp_path, """vllm serve m --speculative-config '{"method": "ngram", "num_speculative_tokens": 2, "lookahead": 3}'""",
                        version="0.32.0")
    assert any(f.rule_id == "VR119" and "speculative_config.lookahead" in f.message for f in report.findings)


@pytest.mark.parametrize("config, key, words", [
    ('{"level": 3}', "compilation_config.level", "has no key 'level'"),
    ('{"cudagraph_capture_sizes": "8"}', "compilation_config.cudagraph_capture_sizes", "not a list"),
    ('{"pass_config": {"fuse_norm_quant": "maybe"}}', "compilation_config.pass_config.fuse_norm_quant",
     "not true or false"),
    ('{"compile_cache_save_format": "zip"}', "compilation_config.compile_cache_save_format", 'one of "binary"'),
])
def test_a_compilation_key_argparse_refuses_is_bad_input_naming_the_key(tmp_path, config, key, words):
    path = write(tmp_path, "serve.sh", f"vllm serve m --compilation-config '{config}'\n")
    code, out, err = run_cli(["check", path, "--vllm-version", "0.32.0"])
    assert code == 2
    assert f"key '{key}'" in err and words in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1


def test_dotted_sub_keys_are_checked_like_json(tmp_path):
    path = write(tmp_path, "serve.sh", "vllm serve m --compilation-config.cudagraph_capture_sizes abc\n")
    code, _, err = run_cli(["check", path, "--vllm-version", "0.32.0"])
    assert code == 2 and "compilation_config.cudagraph_capture_sizes" in err


def test_values_pydantic_accepts_pass(tmp_path):
    config = {"mode": 3, "cudagraph_capture_sizes": [1, 2, 4], "max_cudagraph_capture_size": 4.0,
              "pass_config": {"fuse_norm_quant": "true"}}
    spec = {"method": "ngram", "num_speculative_tokens": "3", "prompt_lookup_max": 4, "prompt_lookup_min": 2}
    text = (f"vllm serve m --compilation-config '{json.dumps(config)}' "
            f"--speculative-config '{json.dumps(spec)}'\n")
    report = check_text(tmp_path, text, version="0.32.0")
    assert report.configs[0].status == "checked"
    assert not [f for f in report.findings if f.rule_id in ("VR119", "VR116")]


def test_releases_whose_config_classes_are_plain_dataclasses_have_no_key_types():
    assert "key_types" not in flag_table(parse_version("0.8.5")).options["--speculative-config"]


def test_every_key_types_entry_names_its_stage():
    for version in ("0.18.0", "0.32.0", "0.33.0"):
        table = flag_table(parse_version(version))
        entries = [spec["key_types"] for spec in table.options.values() if "key_types" in spec]
        assert entries and all(e["stage"] in ("parse", "startup") and e["config"] in e["classes"] for e in entries)
    assert (REPO / "tools" / "flag_constraints.py").is_file()
