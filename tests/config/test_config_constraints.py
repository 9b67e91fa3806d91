"""Value constraints per release: bounds and human-readable integers as each release's source states them
(rules/flags/v*.json, written by tools/import_flags.py), and shell lines the shell itself would refuse."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from reader.config.constraints import parse_human_int, violated_bound
from reader.config.context import LoadOptions
from reader.config.flagtable import flag_table
from reader.config.load import load_command_line
from reader.errors import ReaderError

ROOT = Path(__file__).resolve().parents[2]


def given(command: str, version: str = "0.32.0"):
    return load_command_line(command, LoadOptions(vllm_version=version)).flags


@pytest.mark.parametrize("version, option, op, value", [
    ("0.32.0", "--max-num-seqs", "ge", 1),                # pydantic Field(ge=1) on SchedulerConfig
    ("0.32.0", "--max-num-batched-tokens", "ge", 1),
    ("0.32.0", "--long-prefill-token-threshold", "ge", 0),
    ("0.32.0", "--block-size", "gt", 0),
    ("0.32.0", "--tensor-parallel-size", "ge", 1),
    ("0.18.0", "--max-model-len", "ge", -1),
    ("0.9.2", "--gpu-memory-utilization", "le", 1.0),     # a validator in CacheConfig._verify_args
    ("0.9.2", "--max-num-partial-prefills", "ge", 1),
])
def test_the_tables_carry_each_releases_bounds_with_their_source(version, option, op, value):
    bounds = flag_table(tuple(int(x) for x in version.split("."))).options[option]["bounds"]
    assert {"op": op, "value": value} in [{"op": b["op"], "value": b["value"]} for b in bounds]
    assert all(b["src"].startswith("vllm/config") for b in bounds if b["kind"] != "runtime")
    assert all(b["src"].startswith("vllm/") for b in bounds)  # runtime: where the release fails instead


def test_a_release_without_the_bound_accepts_the_value():
    # vLLM 0.7.3 (V0 engine) had no bound on max_num_seqs in its config classes, and none is known to fail it later
    assert "bounds" not in flag_table((0, 7, 3)).options["--max-num-seqs"]
    assert given("vllm serve m --max-num-seqs 0", "0.7.3")["max_num_seqs"].out_of_bounds is None


@pytest.mark.parametrize("version", [(0, 8, 5), (0, 10, 1), (0, 11, 0)])
def test_a_bound_vllm_enforces_only_by_failing_is_merged_with_its_source(version):
    # rules/flags/_runtime_bounds.yaml: no Field(ge=1) before 0.11.2, but a V1 worker cannot size its buffers
    bounds = flag_table(version).options["--max-num-seqs"]["bounds"]
    assert [(b["op"], b["value"], b["kind"]) for b in bounds] == [("ge", 1, "runtime")]
    assert "gpu_input_batch.py" in bounds[0]["src"]
    assert given("vllm serve m --max-num-seqs -8", ".".join(map(str, version)))["max_num_seqs"].out_of_bounds


def test_a_value_out_of_bounds_is_kept_and_marked_with_vllms_message():
    flag = given("vllm serve m --max-num-seqs -4")["max_num_seqs"]
    assert flag.value == -4
    bad = flag.out_of_bounds
    assert bad.requirement == ">= 1" and "scheduler.py" in bad.source
    assert bad.vllm_message.startswith("1 validation error for SchedulerConfig: max_num_seqs: Input should be "
                                       "greater than or equal to 1")


def test_a_validator_bound_quotes_the_validators_own_text():
    bad = given("vllm serve m --gpu-memory-utilization 1.5", "0.9.2")["gpu_memory_utilization"].out_of_bounds
    assert bad.vllm_message == "GPU memory utilization must be less than 1.0. Got 1.5."


def test_json_option_keys_are_bounded_by_their_config_class():
    flags = given("""vllm serve m --speculative-config '{"method": "ngram", "num_speculative_tokens": 0}'""")
    bad = flags["speculative_config"].out_of_bounds
    assert bad.name == "speculative_config.num_speculative_tokens" and bad.requirement == "> 0"


def test_none_and_in_range_values_are_not_violations():
    spec = flag_table((0, 32, 0)).options["--max-num-seqs"]
    assert violated_bound(spec, None) is None and violated_bound(spec, 1) is None and violated_bound(spec, True) is None


@pytest.mark.parametrize("text, value", [("32k", 32000), ("8K", 8192), ("25.6k", 25600), ("1M", 2**20),
                                         ("2g", 2 * 10**9), (" 4096 ", 4096)])
def test_human_readable_integers(text, value):
    assert parse_human_int(text, flag_table((0, 32, 0)).parsers["human_int"]) == value


def test_a_binary_suffix_refuses_decimals_as_vllm_does():
    with pytest.raises(ValueError, match="decimals"):
        parse_human_int("1.5K", flag_table((0, 32, 0)).parsers["human_int"])
    with pytest.raises(ReaderError) as err:
        given("vllm serve m --max-num-batched-tokens 1.5K")
    assert "did you mean 1.5k" in err.value.message


def test_a_suffix_the_release_does_not_know_is_refused():
    # vLLM 0.9.2's pattern accepts t/T but its multipliers stop at g/G: '1t' falls through to int('1t')
    parser = flag_table((0, 9, 2)).parsers["human_int"]
    assert "t" not in parser["decimal"]
    with pytest.raises(ValueError):
        parse_human_int("1t", parser)
    assert parse_human_int("1t", flag_table((0, 32, 0)).parsers["human_int"]) == 10**12


def test_every_table_was_written_with_its_releases_bounds():
    for path in sorted((ROOT / "rules" / "flags").glob("v*.json")):
        data = json.loads(path.read_text())
        assert "bound" in data["_source"], path.name
        if tuple(int(x) for x in path.stem[1:].split(".")) >= (0, 12, 0):
            assert "bounds" in data["flags"]["--max-num-seqs"], path.name


@pytest.mark.parametrize("command, line, words", [
    ('vllm serve m --max-model-len "8192', 1, 'double quote (") is opened here and never closed'),
    ("vllm serve m \\\n  --served-model-name 'chat", 2, "single quote (') is opened here and never closed"),
])
def test_a_line_the_shell_would_refuse_is_bad_input_with_its_line(command, line, words):
    with pytest.raises(ReaderError) as err:
        given(command)
    assert err.value.line == line and words in err.value.message
    assert "Close the quote" in err.value.render()


def test_an_unclosed_expansion_says_to_close_the_expansion():
    with pytest.raises(ReaderError) as err:
        given("vllm serve ${MODEL --max-model-len 8192")
    assert "'${' is opened here and never closed" in err.value.message
    assert "Close the expansion with '}'" in err.value.render() and "quote" not in err.value.render()


@pytest.mark.parametrize("command", [
    "vllm serve m \\\n  --max-model-len 8192 \\\n",  # a last continuation into the end of the script
    "vllm serve m --max-model-len 8192 \\",  # a backslash as the very last character
])
def test_a_continuation_into_the_end_of_the_script_runs_the_command_as_it_stands(command):
    # bash reading a script drops the continuation at the end and runs the command (instance_scripts' 20b2.sh)
    assert given(command)["max_model_len"].value == 8192
