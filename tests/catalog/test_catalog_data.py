"""The shipped catalogs: size, coverage, typing and provenance of every entry."""
from __future__ import annotations

import json

import pytest
import yaml

from reader.catalog import load
from reader.catalog.types import GpuSpec, ModelSpec

MODELS = load.list_models()
GPUS = load.list_gpus()

GPU_FIGURES = ("memory_bytes", "memory_marketed_gb", "hbm_bandwidth_gbps", "bf16_tflops", "fp8_tflops",
               "int8_tops", "fp4_tflops", "nvlink_gbps_per_direction", "pcie_gbps_per_direction", "device_name")


def test_catalog_holds_at_least_30_models_and_15_gpus():
    assert len(MODELS) >= 30
    assert len(GPUS) >= 15


def test_every_reference_model_is_in_the_catalog():
    from _catalog_helpers import REFERENCE_FIGURES

    ids = {m.id for m in MODELS}
    assert set(REFERENCE_FIGURES) <= ids


@pytest.mark.parametrize("name", [
    "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-405B",
    "meta-llama/Llama-3.3-70B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-72B", "Qwen/Qwen3-8B",
    "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-235B-A22B", "mistralai/Mistral-7B-v0.3", "mistralai/Mixtral-8x7B-v0.1",
    "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1", "openai/gpt-oss-20b", "openai/gpt-oss-120b",
    "google/gemma-2-9b", "google/gemma-3-27b-it", "microsoft/Phi-3.5-mini-instruct", "microsoft/phi-4",
])
def test_required_model_families_are_present(name):
    assert load.find_model(name) is not None


@pytest.mark.parametrize("name", ["A10G", "L4", "L40S", "A100-40GB-PCIe", "A100-40GB-SXM", "A100-80GB-PCIe",
                                  "A100-80GB-SXM", "H100-PCIe", "H100-SXM", "H100-NVL", "H200-SXM", "H20", "B200",
                                  "GB200", "MI300X", "MI325X", "RTX-4090"])
def test_required_gpus_are_present(name):
    assert load.find_gpu(name) is not None
    assert load.get_gpu(name).id == name


def test_every_entry_validates_against_the_types():
    for spec in MODELS:
        assert ModelSpec.model_validate(spec.model_dump()) == spec
    for entry in load._gpu_data()["gpus"]:
        assert GpuSpec.model_validate(entry).id == entry["id"]


@pytest.mark.parametrize("spec", MODELS, ids=lambda m: m.id)
def test_model_layer_kinds_add_up_to_the_layer_count(spec):
    kinds = spec.layer_kinds
    mixerless = getattr(kinds, "none", 0)  # layers with a feed-forward block only (Nemotron-H)
    assert kinds.full + kinds.sliding + kinds.chunked + kinds.linear + mixerless == spec.num_hidden_layers
    assert (spec.sliding_window is not None) == (kinds.sliding > 0)
    assert (spec.attention_chunk_size is not None) == (kinds.chunked > 0)


@pytest.mark.parametrize("spec", MODELS, ids=lambda m: m.id)
def test_every_model_names_its_sources(spec):
    assert spec.source.strip() and spec.params_source.strip()
    for name in spec.unverified:
        assert name in ModelSpec.model_fields, f"unverified names an unknown field: {name}"
        assert spec.figure_sources.get(name), f"{spec.id}: unverified {name} has no note in figure_sources"
    for name in spec.figure_sources:
        assert name in ModelSpec.model_fields
    if spec.verification == "primary":
        # a git copy at its commit, or the Hub's own view of the file (blob, blame or commit page)
        hub_page = spec.source.startswith("https://huggingface.co/") and "config.json" in spec.source.split(";")[0] \
            or "/commit/" in spec.source.split(";")[0]
        assert " @ " in spec.source or hub_page, "a primary source names a repository, path and commit, or a Hub page"


@pytest.mark.parametrize("spec", GPUS, ids=lambda g: g.id)
def test_every_gpu_figure_has_a_source(spec):
    assert spec.source.strip()
    for name in GPU_FIGURES:
        if getattr(spec, name) is not None:
            assert spec.figure_sources.get(name), f"{spec.id}: {name} has no source"
    for name in spec.unverified:
        assert name in GPU_FIGURES


def test_moe_models_have_active_params_and_dense_models_do_not():
    for spec in MODELS:
        assert (spec.params_active is not None) == spec.is_moe, spec.id
        if spec.is_moe:
            assert spec.params_active < spec.params_total


def test_recall_figures_are_marked_unverified():
    for spec in GPUS:
        for name, note in spec.figure_sources.items():
            if note.startswith("RECALL") and name in GPU_FIGURES:
                assert name in spec.unverified or spec.verification == "unverified", f"{spec.id}.{name}"


def test_catalog_json_is_generated_from_the_model_folders_and_gpus_yaml():
    compiled = json.loads(load.COMPILED_FILE.read_text(encoding="utf-8"))
    assert compiled["gpus"] == yaml.safe_load(load.GPUS_FILE.read_text(encoding="utf-8")), \
        "catalog.json is stale: run `python -m reader.catalog.load` after editing gpus.yaml"
    assert compiled["models"] == load.compile_catalogs()["models"], \
        "catalog.json is stale: run `python -m reader.catalog.load` after adding or changing a model folder"


def test_no_two_entries_share_a_name():
    # The indexes refuse to build when an id, alias or device name points at two entries.
    load._model_index.cache_clear()
    load._gpu_index.cache_clear()
    assert len(load._model_index()) >= 2 * len(MODELS)
    assert len(load._gpu_index()[0]) >= 2 * len(GPUS)


def test_ambiguous_gpu_names_point_at_real_entries():
    for name, (gpu_id, note) in load.ambiguous_gpu_aliases().items():
        assert load.get_gpu(gpu_id).id == gpu_id
        assert note
