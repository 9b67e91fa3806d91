"""A string option argparse no longer checks (`--quantization` from 0.9.2) is checked against the release's own
registry, read from its source (rules/flags/_registries.json, tools/import_registries.py): a value outside it is
an error with vLLM's message, as vLLM refuses it at start-up (issue 22: `--quantization int4`, a real Dockerfile,
warned and passed; vLLM 0.32.0 stops with "Unknown quantization method: int4. Must be one of [...]")."""
from __future__ import annotations

import json

import pytest

from _rules_helpers import REPO, check_text, fired
from reader.config.flagtable import registry_for

REGISTRIES = json.loads((REPO / "rules" / "flags" / "_registries.json").read_text())["registries"]


@pytest.mark.parametrize("version", ["0.18.0", "0.32.0"])
def test_an_unknown_quantization_method_would_not_start(tmp_path, version):
    report = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-8B --quantization int4\n", version=version,
                        gpu="H100")
    finding = next(f for f in report.findings if f.rule_id == "VR120")
    assert finding.severity == "error" and report.summary.exit_code == 1
    assert finding.vllm_message.startswith("Unknown quantization method: int4. Must be one of [")
    assert "--quantization int4" in finding.message and "fp8" in finding.message
    assert f"@ v{version}" not in finding.fix and "vllm/config/model.py:" in finding.fix  # the release's own lines
    assert "VR403" not in fired(report)


@pytest.mark.parametrize("method", ["fp8", "awq_marlin", "compressed-tensors"])
def test_a_method_of_the_release_passes(tmp_path, method):
    report = check_text(tmp_path, f"vllm serve meta-llama/Llama-3.1-8B --quantization {method}\n",
                        version="0.32.0", gpu="H100")
    assert not {"VR120", "VR403"} & fired(report)


def test_a_method_added_later_is_refused_by_the_older_release(tmp_path):
    new = set(REGISTRIES["quantization"]["releases"]["0.32.0"]["values"])
    old = set(REGISTRIES["quantization"]["releases"]["0.18.0"]["values"])
    added = sorted(new - old)[0]
    report = check_text(tmp_path, f"vllm serve meta-llama/Llama-3.1-8B --quantization {added}\n", version="0.18.0",
                        gpu="H100")
    assert "VR120" in fired(report, "error")


def test_a_release_newer_than_the_tables_only_warns(tmp_path):
    # its registry may hold methods the newest table's lacks: the gate must not block them
    report = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-8B --quantization int4\n", version="0.34.0",
                        gpu="H100")
    assert "VR120" not in fired(report) and "VR403" in fired(report, "warning")


def test_releases_with_argparse_choices_keep_the_parse_error():
    assert registry_for("quantization", (0, 8, 5)) is None  # argparse refuses it first: VR111


def test_every_registry_entry_names_its_source_lines():
    releases = REGISTRIES["quantization"]["releases"]
    assert {"0.18.0", "0.32.0"} <= set(releases)
    for version, entry in releases.items():
        assert entry["values"] and entry["src"].startswith("vllm/model_executor/layers/quantization/__init__.py:")
        assert entry["check"].startswith("vllm/config"), version


def test_an_unknown_load_format_would_not_start_and_the_case_is_vllms(tmp_path):
    # LoadConfig lowercases the name before get_model_loader looks it up
    bad = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-8B --load-format safetensor\n", version="0.32.0",
                     gpu="H100")
    finding = next(f for f in bad.findings if f.rule_id == "VR120")
    assert finding.vllm_message == "Load format `safetensor` is not supported"
    good = check_text(tmp_path, "vllm serve meta-llama/Llama-3.1-8B --load-format SafeTensors\n", version="0.32.0",
                      gpu="H100")
    assert "VR120" not in fired(good)


@pytest.mark.parametrize("version, value, refused", [
    ("0.32.0", "flash_attn", False),   # AttentionConfig upper-cases the name before the enum lookup
    ("0.32.0", "auto", False),         # taken as 'no backend' before the lookup at 0.32.0
    ("0.13.0", "auto", True),          # not yet at 0.13.0: AttentionBackendEnum['AUTO'] fails
    ("0.32.0", "FLASHATTN", True),
])
def test_attention_backends_are_the_releases_enum_members(tmp_path, version, value, refused):
    report = check_text(tmp_path, f"vllm serve meta-llama/Llama-3.1-8B --attention-backend {value}\n",
                        version=version, gpu="H100")
    assert ("VR120" in fired(report, "error")) is refused
    if refused:
        finding = next(f for f in report.findings if f.rule_id == "VR120")
        assert finding.vllm_message.startswith(f"Unknown attention backend: '{value.upper()}'. Valid options are: ")


@pytest.mark.parametrize("value, rule", [("multiproc", "VR120"), ("mp", None), ("my_pkg.executors.Mine", "VR115")])
def test_an_executor_backend_is_a_known_name_or_an_import_path(tmp_path, value, rule):
    # from 0.11.2 Executor.get_class imports any other string as 'module.Class': a dotless one cannot be one
    report = check_text(tmp_path, f"vllm serve meta-llama/Llama-3.1-8B --distributed-executor-backend {value}\n",
                        version="0.32.0", gpu="H100")
    assert ({"VR120", "VR115"} & fired(report)) == ({rule} if rule else set())
