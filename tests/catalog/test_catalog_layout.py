"""The shipped catalog is a folder of config.json files, read by the same reader as a user's folder."""
from __future__ import annotations

import json
import pytest
import yaml

from _catalog_helpers import REPO
from reader.catalog import entries, load
from reader.catalog.model_files import read_model_path

MODELS_DIR = REPO / "reader" / "catalog" / "models"
FOLDERS = sorted(p.parent for p in MODELS_DIR.glob("*/*/source.yaml"))
SHAPE = ("model_type", "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
         "intermediate_size", "vocab_size", "max_position_embeddings", "tie_word_embeddings", "torch_dtype", "moe",
         "mla", "layer_kinds", "sliding_window", "attention_chunk_size", "quantization", "params_total")


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_catalog_folder_reads_like_a_users_folder(folder):
    model_id = f"{folder.parent.name}/{folder.name}"
    mine, shipped = read_model_path(folder), load.get_model(model_id)
    assert {k: getattr(mine, k) for k in SHAPE} == {k: getattr(shipped, k) for k in SHAPE}


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_folder_says_where_its_config_came_from(folder):
    meta = yaml.safe_load((folder / "source.yaml").read_text())
    assert meta["id"] == f"{folder.parent.name}/{folder.name}"
    assert meta["verification"] in ("primary", "secondary", "unverified")
    source = meta["source"]
    assert (source.get("repo") and source.get("path") and len(str(source.get("commit"))) == 40) \
        or source.get("url") or source.get("note")
    config = json.loads((folder / "config.json").read_text())
    for key in meta.get("filled") or {}:
        assert key in config or key in (config.get("text_config") or {}), f"filled {key} is not in config.json"


def _drop_in(models_dir, model_id, config, **meta):
    folder = models_dir / model_id
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "source.yaml").write_text(yaml.safe_dump({"id": model_id, **meta}))
    return folder


def test_a_folder_dropped_in_the_layout_is_a_catalog_model(tmp_path):
    config = json.loads((REPO / "fixtures" / "live" / "tiny-llama" / "config.json").read_text())
    _drop_in(tmp_path, "acme/tiny", config, aliases=["tiny"], verification="secondary",
             source={"url": "https://example.org/tiny/config.json", "note": "our own test model"},
             unverified=["max_position_embeddings"], notes="for the test")
    assert entries.scan(tmp_path) == [{"id": "acme/tiny", "aliases": ["tiny"]}]
    spec = entries.read_entry("acme/tiny", tmp_path)
    assert spec.num_hidden_layers == 2 and spec.aliases == ("tiny",) and spec.verification == "secondary"
    assert spec.source == "https://example.org/tiny/config.json; our own test model"
    assert spec.unverified == ("max_position_embeddings",) and spec.figure_sources["max_position_embeddings"]
    assert spec.notes.startswith("for the test")


def test_a_source_yaml_naming_another_id_is_refused(tmp_path):
    folder = _drop_in(tmp_path, "acme/tiny", {"model_type": "llama"})
    (folder / "source.yaml").write_text("id: acme/other\n")
    with pytest.raises(RuntimeError, match="not the folder's name"):
        entries.scan(tmp_path)


def test_a_mistral_format_folder_is_read_from_params_json(tmp_path):
    folder = tmp_path / "mistralai" / "Tiny"
    folder.mkdir(parents=True)
    (folder / "params.json").write_text(json.dumps({"dim": 256, "n_layers": 2, "head_dim": 64, "hidden_dim": 512,
                                                    "n_heads": 4, "n_kv_heads": 2, "vocab_size": 1024,
                                                    "max_position_embeddings": 4096}))
    (folder / "source.yaml").write_text("id: mistralai/Tiny\nsource: {note: test}\n")
    spec = entries.read_entry("mistralai/Tiny", tmp_path)
    assert spec.model_type == "mistral" and spec.num_key_value_heads == 2


def test_filled_and_unverified_keys_become_the_specs_figure_notes():
    awq = load.get_model("Qwen/Qwen2.5-7B-Instruct-AWQ")
    assert set(awq.unverified) == {"quantization", "torch_dtype", "max_position_embeddings"}
    assert "AutoAWQ" in awq.figure_sources["quantization"]


def test_looking_one_model_up_reads_only_its_folder(monkeypatch):
    read = []
    original = entries.read_entry
    monkeypatch.setattr(load, "read_entry", lambda model_id, d: read.append(model_id) or original(model_id, d))
    load._model_at.cache_clear()
    try:
        assert load.get_model("qwen/qwen3-8b").id == "Qwen/Qwen3-8B"
    finally:
        load._model_at.cache_clear()
    assert read == ["Qwen/Qwen3-8B"]


def test_a_catalog_model_reports_its_folder_as_its_shape_source():
    from reader.catalog.resolution import resolve_model

    res = resolve_model("meta-llama/Llama-3.3-70B-Instruct")
    assert res.location == "reader/catalog/models/meta-llama/Llama-3.3-70B-Instruct/config.json"
    assert (REPO / res.location).is_file()
