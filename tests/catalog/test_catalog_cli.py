"""`vllm-reader catalog models|gpus|versions` through the real CLI app."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from reader.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args))


def test_models_table_lists_every_model_with_verification():
    result = invoke("catalog", "models")
    assert result.exit_code == 0, result.output
    assert "meta-llama/Llama-3.1-8B" in result.output and "VERIFIED" in result.output
    assert "MLA latent 512+64" in result.output
    from reader.catalog.load import list_models

    assert f"{len(list_models())} models (reader/catalog/models/" in result.output


def test_models_json_round_trips_to_specs():
    from reader.catalog.types import ModelSpec

    result = invoke("catalog", "models", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["count"] == len(data["models"]) >= 30
    assert all(ModelSpec.model_validate(m) for m in data["models"])


def test_gpus_table_and_json():
    text = invoke("catalog", "gpus")
    assert text.exit_code == 0
    assert "H100-SXM" in text.output and "h100 -> H100-SXM" in text.output
    data = json.loads(invoke("catalog", "gpus", "-f", "json").output)
    h200 = next(g for g in data["gpus"] if g["id"] == "H200-SXM")
    assert h200["memory_bytes"] == 150_109_880_320 and h200["memory_gib"] == pytest.approx(139.8, abs=0.01)
    assert data["ambiguous_aliases"]["h100"]["gpu"] == "H100-SXM"


def test_versions_marks_the_newest_as_default():
    from reader.versions import format_version, newest_version

    newest = format_version(newest_version())
    text = invoke("catalog", "versions")
    assert text.exit_code == 0
    assert text.output.splitlines()[0].startswith(f"{newest}  (default")
    data = json.loads(invoke("catalog", "versions", "--format", "json").output)
    assert data["default"] == newest == data["versions"][0]


@pytest.mark.parametrize("args, words", [
    (("catalog", "modles"), "Did you mean 'models'"),
    (("catalog", "gpus", "--format", "yaml"), "unknown --format 'yaml'"),
])
def test_bad_input_exits_2_with_one_clear_message(args, words):
    result = invoke(*args)
    assert result.exit_code == 2
    assert words in result.output
    assert "Traceback" not in result.output


def test_missing_subject_is_a_usage_error():
    assert invoke("catalog").exit_code == 2
