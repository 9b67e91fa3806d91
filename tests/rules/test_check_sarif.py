"""SARIF 2.1.0 output validates against the official schema (fixtures/sarif), with file and line locations."""
from __future__ import annotations

import hashlib
import json
import os

import jsonschema
import pytest

from _rules_helpers import CORPUS, REPO, SARIF_SCHEMA, run_cli, write

SCHEMA = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))


def validate(doc):
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_the_fixture_is_the_official_schema():
    digest = hashlib.sha256(SARIF_SCHEMA.read_bytes()).hexdigest()
    assert digest == "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
    assert SCHEMA["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def sarif(args, cwd=REPO):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code, out, err = run_cli(["check", *args, "--format", "sarif"])
    finally:
        os.chdir(old)
    return code, json.loads(out), err


@pytest.mark.parametrize("name, version", [
    ("gke_gemma-3-27b-it_2xA100-40gb_deployment.yaml", None),
    ("issue_vllm-4358_mixtral-awq_spec_ray_fp8kv.sh", None),
    ("issue_vllm-14117_deepseek-r1_tp8_pp2_mtp.sh", "0.7.3"),
    ("llmd_wide-ep-lws_decode_leaderworkerset.yaml", None),
    ("recipes_llama3.3_hopper.yaml", None),
])
def test_sarif_validates_for_corpus_configs(name, version):
    args = [f"fixtures/corpus/{name}"] + (["--vllm-version", version] if version else [])
    code, doc, _ = sarif(args)
    validate(doc)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "vllm-reader"
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    for result in run["results"]:
        assert ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")


def test_findings_point_at_the_file_and_line_of_the_key():
    # at 0.18.0, which removed --swap-space (the image's own build date reads as 0.7.3, which has it)
    code, doc, _ = sarif(["fixtures/corpus/gke_gemma-3-27b-it_2xA100-40gb_deployment.yaml", "--vllm-version", "0.18.0"])
    assert code == 1
    result = next(r for r in doc["runs"][0]["results"] if r["ruleId"] == "VR102")
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "fixtures/corpus/gke_gemma-3-27b-it_2xA100-40gb_deployment.yaml",
                                            "uriBaseId": "%SRCROOT%"}
    line = physical["region"]["startLine"]
    text = (CORPUS / "gke_gemma-3-27b-it_2xA100-40gb_deployment.yaml").read_text().splitlines()
    assert "swap-space" in text[line - 1]
    assert result["locations"][0]["logicalLocations"][0]["name"] == "swap_space"
    assert doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file://")


def test_files_outside_the_working_directory_get_absolute_uris(tmp_path):
    path = write(tmp_path, "serve space.sh", "vllm serve meta-llama/Llama-3.1-8B --max-num-seqs 512 "
                 "--max-num-batched-tokens 256\n")
    code, doc, _ = sarif([path, "--vllm-version", "0.18.0"])
    validate(doc)
    uri = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("file:///") and "serve%20space.sh" in uri


def test_bad_input_is_a_tool_notification_and_still_valid(tmp_path):
    good = write(tmp_path, "ok.sh", "vllm serve meta-llama/Llama-3.1-8B\n")
    code, doc, err = sarif([good, str(tmp_path / "missing.yaml"), "--vllm-version", "0.18.0"], cwd=tmp_path)
    assert code == 2
    validate(doc)
    invocation = doc["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    assert "no such file" in invocation["toolExecutionNotifications"][0]["message"]["text"]
    assert doc["runs"][0]["results"] == [] or all(r["level"] != "error" for r in doc["runs"][0]["results"])


def test_every_rule_descriptor_validates():
    """A SARIF document listing every rule (as if each fired) validates too."""
    from reader.render.sarif import _rule_descriptor
    from reader.rules_engine.loader import load_rules

    rules = load_rules()
    doc = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "vllm-reader",
                                                            "rules": [_rule_descriptor(r) for r in rules.rules]}},
                                         "results": []}]}
    validate(doc)
