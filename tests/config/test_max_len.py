"""The maximum length vLLM derives from a config.json with a RoPE scaling, and the max_model_len it picks when none
is given (reader/config/max_len.py), against what the real CPU builds answered for the folders in
fixtures/differential/rope-lengths (tools/differential/rope_lengths.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from reader.catalog.model_files import read_model_path
from reader.catalog.resolution import require_model
from reader.config.max_len import default_max_len, derived_max_len
from reader.versions import parse_version

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "differential"


def _rows(version: str) -> list[dict]:
    return json.loads((FIXTURES / f"rope-lengths-vllm-{version}.json").read_text())["rows"]


@pytest.mark.parametrize("version", ["0.18.0", "0.32.0"])
def test_the_reader_picks_and_accepts_the_lengths_vllm_did(version):
    v = parse_version(version)
    for row in _rows(version):
        spec = read_model_path(FIXTURES / "rope-lengths" / row["model"])
        if row["given"] is None:
            assert default_max_len(spec, v)[0] == row["max_model_len"], row
        else:
            assert (row["given"] > derived_max_len(spec, v)) == ("refused" in row), row


def test_a_longrope_model_defaults_to_its_pre_scaling_length_and_still_accepts_its_full_one():
    spec = read_model_path(FIXTURES / "rope-lengths" / "phi3-128k")
    length, why = default_max_len(spec, parse_version("0.32.0"))
    assert (length, derived_max_len(spec, parse_version("0.32.0"))) == (4096, 131072)
    assert "original_max_position_embeddings" in why and "131,072" in why


def test_yarn_scales_the_derived_length_from_its_original_length_only_before_0_32():
    spec = read_model_path(FIXTURES / "rope-lengths" / "tl-yarn")
    assert derived_max_len(spec, parse_version("0.18.0")) == 4 * 2048
    assert derived_max_len(spec, parse_version("0.32.0")) == 2048


@pytest.mark.parametrize("model, length", [("microsoft/Phi-3-mini-128k-instruct", 4096),
                                           ("microsoft/Phi-3.5-mini-instruct", 4096),
                                           ("microsoft/Phi-4-mini-instruct", 4096),
                                           ("internlm/internlm2_5-7b-chat", 65536),
                                           ("meta-llama/Llama-3.2-1B", 131072)])
def test_catalog_models_keep_the_rope_keys_their_default_length_rests_on(model, length):
    assert default_max_len(require_model(model).spec, parse_version("0.32.0"))[0] == length


def test_a_malformed_rope_scaling_names_its_key(tmp_path):
    from reader.errors import ReaderError

    config = json.loads((FIXTURES / "rope-lengths" / "tl-linear" / "config.json").read_text())
    config["rope_scaling"] = {"type": "linear", "factor": "four"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ReaderError) as err:
        read_model_path(tmp_path)
    assert err.value.key == "rope_scaling.factor" and "'four'" in err.value.message
