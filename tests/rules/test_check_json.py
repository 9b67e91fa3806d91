"""`check --format json`: a stable, versioned document that validates against the shipped schema."""
from __future__ import annotations

import json

import jsonschema

from _rules_helpers import CORPUS, FINDINGS_SCHEMA, run_cli, write
from reader.rules_engine.generate import dumps, findings_schema

SCHEMA = json.loads(FINDINGS_SCHEMA.read_text(encoding="utf-8"))


def validate(doc):
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))
    assert not errors, [e.message for e in errors[:5]]


def test_the_schema_file_is_generated_from_the_models():
    assert FINDINGS_SCHEMA.read_text(encoding="utf-8") == dumps(findings_schema()), \
        "stale: python -m reader.rules_engine.generate"
    assert SCHEMA["properties"]["schema_version"]["const"] == 1


def test_json_output_validates_and_is_consistent(tmp_path):
    bad = str(tmp_path / "missing.sh")
    configs = [str(CORPUS / "issue_vllm-4358_mixtral-awq_spec_ray_fp8kv.sh"),
               str(CORPUS / "eks_ai-on-eks_llama4-scout_lws_tp4_pp2_g6.yaml"), bad]
    code, out, _ = run_cli(["check", *configs, "--format", "json"])
    assert code == 2
    doc = json.loads(out)
    validate(doc)
    assert doc["schema_version"] == 1 and doc["tool"]["name"] == "vllm-reader"
    assert doc["vllm_version"] is None  # the configs ran against different releases
    s = doc["summary"]
    assert s["errors"] == sum(f["severity"] == "error" for f in doc["findings"])
    assert s["warnings"] == sum(f["severity"] == "warning" for f in doc["findings"])
    assert s["configs"] == 3 and s["bad_input"] == 1 and s["exit_code"] == 2
    statuses = {c["config"]: c["status"] for c in doc["configs"]}
    assert statuses[bad] == "bad-input"
    f = next(f for f in doc["findings"] if f["rule_id"] == "VR104")
    assert f["locations"][0]["line"] == 14 and f["locations"][0]["key"] == "speculative_model"
    assert f["facts"]["absent.speculative_model"] is True


def test_json_for_a_clean_config(tmp_path):
    path = write(tmp_path, "ok.sh", "vllm serve meta-llama/Llama-3.1-8B\n")
    code, out, _ = run_cli(["check", path, "--format", "json", "--vllm-version", "0.18.0", "--gpu", "H100-SXM"])
    assert code == 0
    doc = json.loads(out)
    validate(doc)
    assert doc["vllm_version"] == "0.18.0" and doc["findings"] == []
    assert doc["configs"][0]["rules_evaluated"] > 40
