"""`--pick N` chooses among several launches, and says so when there are fewer, for files and command lines alike."""
from __future__ import annotations

import pytest

from reader.config.context import LoadOptions, parse_comment_block
from reader.config.load import load_command_line, load_deployment
from reader.errors import ReaderError

TWO_LAUNCHES = "vllm serve a/first --max-num-seqs 8 && vllm serve b/second --max-num-seqs 16"


def test_pick_chooses_the_nth_launch_of_a_command_line():
    d = load_command_line(TWO_LAUNCHES, LoadOptions(vllm_version="0.18.0", pick=2))
    assert d.model == "b/second" and d.flags["max_num_seqs"].value == 16


def test_pick_beyond_the_launches_of_a_command_line_is_bad_input_like_a_file(tmp_path):
    with pytest.raises(ReaderError) as err:
        load_command_line(TWO_LAUNCHES, LoadOptions(vllm_version="0.18.0", pick=3))
    assert err.value.key == "pick" and "only 2 vLLM launch(es)" in err.value.message
    script = tmp_path / "two.sh"
    script.write_text(TWO_LAUNCHES + "\n")
    with pytest.raises(ReaderError) as file_err:
        load_deployment(str(script), LoadOptions(vllm_version="0.18.0", pick=3))
    assert file_err.value.key == "pick" and "only 2 vLLM launch(es)" in file_err.value.message


def test_a_comment_block_that_is_not_a_mapping_lists_every_key_including_pick():
    with pytest.raises(ReaderError) as err:
        parse_comment_block("# vllm-reader: just-a-word\nmodel: m\n", "x.yaml")
    for key in ("vllm_version", "gpu", "gpu_count", "model", "workload", "usage_context", "slo", "set", "pick"):
        assert key in err.value.message
