"""A hybrid (Mamba / linear-attention) model under prefix caching keeps its recurrent states at block boundaries
and vLLM then asserts chunked prefill: from 0.32.0 for every hybrid model (VR217), at 0.26.0-0.31.x for those
whose states it keeps in mode 'align' (VR218: no Mamba prefix-caching support of their own, or speculative
decoding). Before 0.26.0 prefix caching is off by default for hybrid models, and nothing is refused."""
from __future__ import annotations

import pytest

from _rules_helpers import check_text, fired
from reader.config.context import LoadOptions
from reader.config.load import load_deployment
from reader.config.resolve import resolve

QWEN3_NEXT = "vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4 --no-enable-chunked-prefill\n"
NEMOTRON_H = "vllm serve nvidia/Nemotron-H-56B-Base-8K --tensor-parallel-size 4 --no-enable-chunked-prefill\n"


@pytest.mark.parametrize("version, expected", [("0.25.0", set()), ("0.26.0", {"VR218"}), ("0.31.0", {"VR218"}),
                                               ("0.32.0", {"VR217"}), ("0.33.0", {"VR217"})])
def test_qwen3_next_without_chunked_prefill(tmp_path, version, expected):
    assert fired(check_text(tmp_path, QWEN3_NEXT, version=version), "error") & {"VR217", "VR218"} == expected


@pytest.mark.parametrize("version, expected", [("0.28.0", set()), ("0.32.0", {"VR217"})])
def test_nemotron_h_keeps_its_states_in_mode_all_until_0_32(tmp_path, version, expected):
    assert fired(check_text(tmp_path, NEMOTRON_H, version=version), "error") & {"VR217", "VR218"} == expected


def test_prefix_caching_defaults_on_for_hybrid_models_from_0_26(tmp_path):
    path = tmp_path / "serve.sh"
    path.write_text("vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct\n")
    for version, on in (("0.25.0", False), ("0.26.0", True)):
        assert resolve(load_deployment(str(path), LoadOptions(vllm_version=version))).value(
            "enable_prefix_caching") is on, version


def test_prefix_caching_off_or_chunked_prefill_on_starts(tmp_path):
    for line in ("vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --no-enable-prefix-caching --no-enable-chunked-prefill\n",
                 "vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct\n"):
        assert not fired(check_text(tmp_path, line, version="0.32.0"), "error") & {"VR217", "VR218"}
