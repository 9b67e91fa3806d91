"""tools/catalog_add.py, the one way a catalog entry is written: the real file trimmed to the keys the reader reads,
every change to it justified, and nothing left behind when the reader refuses it."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import catalog_add  # noqa: E402

LLAMA = json.loads((ROOT / "fixtures" / "hf_configs" / "llama-3.1-8b" / "config.json").read_text())
ENTRY = {"id": "someorg/Some-8B", "verification": "primary",
         "source": {"kind": "copy", "repo": "someorg/mirror", "path": "config.json", "commit": "0" * 40},
         "published_params": {"total": 8_000_000_000, "as_written": "8B", "source": "the name"}}


@pytest.fixture
def models(tmp_path, monkeypatch):
    monkeypatch.setattr(catalog_add, "MODELS_DIR", tmp_path)
    return tmp_path


def _entry(**changes) -> dict:
    return {**json.loads(json.dumps(ENTRY)), **changes}


def test_the_file_is_trimmed_to_the_keys_the_reader_reads_and_the_removed_keys_are_listed(models):
    raw = {**LLAMA, "initializer_range": 0.02, "use_cache": True}
    folder = catalog_add.write_entry(raw, _entry())
    written = json.loads((folder / "config.json").read_text())
    source = yaml.safe_load((folder / "source.yaml").read_text())
    assert "initializer_range" not in written and written["hidden_size"] == LLAMA["hidden_size"]
    assert {"initializer_range", "use_cache"} <= set(source["trimmed"])
    assert list(source)[:3] == ["id", "verification", "source"]


def test_a_change_to_the_real_file_needs_its_reason(models):
    with pytest.raises(SystemExit, match="'filled' gives no reason"):
        catalog_add.write_entry(LLAMA, _entry(set={"max_position_embeddings": 8192}))
    folder = catalog_add.write_entry(LLAMA, _entry(set={"max_position_embeddings": 8192},
                                                   filled={"max_position_embeddings": "the card's figure"}))
    assert json.loads((folder / "config.json").read_text())["max_position_embeddings"] == 8192


def test_a_file_the_reader_refuses_leaves_no_folder_and_an_upgrade_it_refuses_leaves_the_old_entry(models):
    broken = {k: v for k, v in LLAMA.items() if k != "hidden_size"}
    with pytest.raises(SystemExit, match="refuses the entry"):
        catalog_add.write_entry(broken, _entry())
    assert not any(models.iterdir())
    folder = catalog_add.write_entry(LLAMA, _entry(aliases=["someorg/some-8b-alias"]))
    before = {f.name: f.read_bytes() for f in folder.iterdir()}
    with pytest.raises(SystemExit):
        catalog_add.write_entry(broken, _entry())
    assert {f.name: f.read_bytes() for f in folder.iterdir()} == before


def test_an_upgrade_keeps_the_names_users_already_look_the_model_up_by(models):
    catalog_add.write_entry(LLAMA, _entry(aliases=["someorg/some-8b-alias"], verification="secondary"))
    folder = catalog_add.write_entry(LLAMA, _entry())
    assert yaml.safe_load((folder / "source.yaml").read_text())["aliases"] == ["someorg/some-8b-alias"]
