"""A value outside the bounds of its release is one finding (VR116) with vLLM's own message, on the user's
line; no other rule reasons from the refused value, and every command says the same."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.rules_engine.run import CheckOptions, check_files

TINY = str(Path(__file__).resolve().parents[2] / "fixtures" / "live" / "tiny-llama" / "config.json")


def check(tmp_path, text: str, version: str = "0.32.0", name: str = "serve.sh"):
    path = tmp_path / name
    path.write_text(text)
    report = check_files([str(path)], CheckOptions(vllm_version=version, model=TINY, gpu="H100-SXM"))
    return [f for f in report.findings if f.severity == "error"], report


@pytest.mark.parametrize("flag, value, requirement", [
    ("--max-num-seqs", "0", ">= 1"), ("--max-num-seqs", "-4", ">= 1"), ("--max-num-batched-tokens", "0", ">= 1"),
    ("--long-prefill-token-threshold", "-5", ">= 0"), ("--block-size", "0", "> 0"),
    ("--tensor-parallel-size", "0", ">= 1"),
])
def test_an_out_of_bounds_value_is_the_only_error(tmp_path, flag, value, requirement):
    errors, _ = check(tmp_path, f"vllm serve /models/tiny \\\n  {flag} {value}\n")
    assert [e.rule_id for e in errors] == ["VR116"]
    finding = errors[0]
    assert f"requires {flag[2:].replace('-', '_')} {requirement}" in finding.message
    assert finding.vllm_message.startswith("1 validation error for ")
    assert finding.locations[0].line == 2


def test_no_value_is_derived_from_a_refused_one(tmp_path):
    # before: 'max_num_batched_tokens (-524288) is smaller than max_num_seqs (-4)', a value nobody wrote
    errors, report = check(tmp_path, "vllm serve /models/tiny --max-num-seqs -4\n")
    assert all("-524288" not in f.message and "-16384" not in f.message for f in report.findings)
    assert [e.rule_id for e in errors] == ["VR116"]


def test_the_yaml_form_reports_the_same_on_its_line(tmp_path):
    errors, _ = check(tmp_path, "model: /models/tiny\nmax-num-seqs: 0\n", name="config.yaml")
    assert [(e.rule_id, e.locations[0].line) for e in errors] == [("VR116", 2)]


def test_a_specific_rule_keeps_precedence_over_the_generic_bound(tmp_path):
    errors, _ = check(tmp_path, "vllm serve /models/tiny --gpu-memory-utilization 90\n", version="0.18.0")
    assert [e.rule_id for e in errors] == ["VR401"]


@pytest.mark.parametrize("version", ["0.8.5", "0.10.1"])
@pytest.mark.parametrize("value", ["-8", "0"])
def test_before_vllm_states_the_bound_a_count_it_cannot_allocate_is_still_refused(tmp_path, version, value):
    # no Field(ge=1) before 0.11.2: vLLM crashes sizing its request buffers (torch: negative dimension) or in the
    # profiling run (0: division by zero); issue 22 saw 'max_num_batched_tokens ... -8 x 16384' warned, and passed
    errors, report = check(tmp_path, f"model: /models/tiny\nmax-num-seqs: {value}\n", version=version,
                           name="config.yaml")
    assert [(e.rule_id, e.locations[0].line) for e in errors] == [("VR116", 2)]
    assert "requires max_num_seqs >= 1" in errors[0].message
    assert "gpu_input_batch.py" in errors[0].fix
    assert all(f"{value} x" not in f.message for f in report.findings)


@pytest.mark.parametrize("version", ["0.6.3", "0.10.1"])
def test_no_memory_for_the_kv_cache_is_refused_before_the_bound_is_stated(tmp_path, version):
    # before 0.11.2 only gpu_memory_utilization > 1 is a validator; 0 leaves the KV cache nothing (both engines)
    errors, _ = check(tmp_path, "vllm serve /models/tiny --gpu-memory-utilization 0\n", version=version)
    assert [e.rule_id for e in errors] == ["VR116"]
    assert errors[0].vllm_message.startswith("No available memory for the cache blocks")
