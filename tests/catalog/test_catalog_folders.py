"""The shipped catalog's model folders: real config.json files trimmed to what the reader reads, each with
its source (repository, path, commit), its published parameter count, and what was filled or is unverified."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from reader.catalog.hf_config import READ_KEYS
from reader.catalog.model_files import read_model_path

REPO = Path(__file__).resolve().parents[2]
MODELS_DIR = REPO / "reader" / "catalog" / "models"
PUBLISHED = yaml.safe_load((REPO / "fixtures" / "catalog" / "published_params.yaml").read_text())
FOLDERS = sorted(p.parent for p in MODELS_DIR.glob("*/*/config.json"))
IDS = [f"{p.parent.name}/{p.name}" for p in FOLDERS]

# Models the corpus configs name (fixtures/corpus/INDEX.yaml) that this catalog adds.
CORPUS_MODELS = [
    "mistralai/Mistral-7B-Instruct-v0.2", "meta-llama/Llama-2-7b-chat-hf", "RedHatAI/Qwen3-32B-FP8-dynamic",
    "casperhansen/mixtral-instruct-awq", "Qwen/Qwen3-Next-80B-A3B-Instruct", "moonshotai/Kimi-K2-Thinking",
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "distilbert/distilgpt2", "Qwen/Qwen2.5-0.5B-Instruct",
    "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "nvidia/Llama-3.3-70B-Instruct-FP8",
]


def _source(folder: Path) -> dict:
    return yaml.safe_load((folder / "source.yaml").read_text())


def _keys(config: dict) -> set[str]:
    keys = set(config)
    if isinstance(config.get("text_config"), dict):
        keys |= set(config["text_config"])
    return keys


def test_the_corpus_models_have_folders():
    assert set(CORPUS_MODELS) <= set(IDS)


@pytest.mark.parametrize("folder", FOLDERS, ids=IDS)
def test_every_folder_reads_and_holds_only_keys_the_reader_reads(folder):
    config = json.loads((folder / "config.json").read_text())
    assert _keys(config) <= READ_KEYS, f"untrimmed keys: {sorted(_keys(config) - READ_KEYS)}"
    spec = read_model_path(folder)
    assert spec.params_total == sum(spec.params_by_part.values())


@pytest.mark.parametrize("folder", FOLDERS, ids=IDS)
def test_every_folder_names_its_source_and_published_count(folder):
    meta = _source(folder)
    assert meta["id"] == f"{folder.parent.name}/{folder.name}"
    source = meta["source"]
    assert meta["verification"] in ("primary", "secondary", "unverified")
    if meta["verification"] == "unverified":
        assert source.get("note"), "an entry with no stored copy says what its values rest on"
    else:
        assert (source.get("repo") and source.get("path") and len(str(source.get("commit"))) == 40) or source.get("url")
    published = meta.get("published_params") or PUBLISHED.get(meta["id"])
    assert published, "a published parameter count, here or in fixtures/catalog/published_params.yaml"
    assert published["total"] > 0 and published["source"] and published["as_written"]
    for key in ("tolerance", "active_tolerance"):
        if published.get(key):
            assert published.get(f"{key}_why"), f"a widened {key} says why"


@pytest.mark.parametrize("folder", FOLDERS, ids=IDS)
def test_filled_keys_are_in_the_config_and_anything_not_primary_says_what_is_unverified(folder):
    meta = _source(folder)
    config = json.loads((folder / "config.json").read_text())
    for key in meta.get("filled") or {}:
        assert key in config, f"filled {key} is not in config.json"
    for key in meta.get("trimmed") or []:
        assert key not in READ_KEYS
    if meta["verification"] != "primary":
        assert meta.get("unverified") or meta["source"].get("note"), "a secondary entry says what it rests on"
