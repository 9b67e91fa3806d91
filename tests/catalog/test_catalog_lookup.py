"""Looking models and GPUs up by the names people actually type."""
from __future__ import annotations

import shutil

import pytest

from _catalog_helpers import HF_FIXTURES
from reader.catalog.load import find_gpu, find_model, get_gpu, get_model, gpu_lookup_note, resolve_gpu
from reader.errors import ReaderError


@pytest.mark.parametrize("name", [
    "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct", "META-LLAMA/LLAMA-3.1-8B-INSTRUCT",
    "meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b", "Llama-3.1-8B", "  meta-llama/Llama-3.1-8B  ",
    "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct",
])
def test_model_ids_aliases_and_bare_names_match_in_any_case(name):
    assert get_model(name).id == "meta-llama/Llama-3.1-8B"


def test_llama_3_instruct_is_its_own_entry_not_an_alias_of_3_1():
    assert get_model("meta-llama/Meta-Llama-3-8B-Instruct").id == "meta-llama/Meta-Llama-3-8B"


def test_qwen_instruct_and_base_are_separate_because_max_positions_differ():
    assert get_model("Qwen/Qwen2.5-7B-Instruct").max_position_embeddings == 32768
    assert get_model("Qwen/Qwen2.5-7B").max_position_embeddings == 131072


def test_find_model_returns_none_instead_of_raising():
    assert find_model("no-such/model") is None
    assert find_model("") is None
    assert find_model("Qwen/Qwen3-8B").id == "Qwen/Qwen3-8B"


def test_unknown_model_error_suggests_close_names_and_the_config_path_way():
    with pytest.raises(ReaderError) as info:
        get_model("meta-llama/Llama-3.1-8B-Instrct")
    text = info.value.render()
    assert "unknown model 'meta-llama/Llama-3.1-8B-Instrct'" in text
    assert "Did you mean 'meta-llama/Llama-3.1-8B-Instruct'" in text
    assert "config.json" in text
    assert "\n" not in text


def test_unknown_model_far_from_everything_still_explains_how_to_proceed():
    with pytest.raises(ReaderError) as info:
        get_model("zzzz-totally-unknown")
    assert "Did you mean" not in info.value.render()
    assert "config.json" in info.value.render()


def test_empty_model_name_is_bad_input():
    with pytest.raises(ReaderError):
        get_model("   ")


def test_a_local_folder_or_config_file_is_read_instead_of_the_catalog(tmp_path):
    folder = tmp_path / "my-model"
    shutil.copytree(HF_FIXTURES / "qwen3-30b-a3b", folder)
    assert get_model(str(folder)).num_key_value_heads == 4
    assert get_model(str(folder / "config.json")).moe.num_experts == 128


def test_a_missing_local_path_says_so():
    with pytest.raises(ReaderError) as info:
        get_model("./no/such/config.json")
    assert "no such file or folder" in info.value.render()


@pytest.mark.parametrize("name", ["H100-SXM", "h100_sxm", "H100 SXM", "h100-sxm5", "nvidia-h100-80gb-hbm3",
                                  "NVIDIA H100 80GB HBM3", "nvidia-h100-80gb"])
def test_gpu_names_ignore_case_and_separators(name):
    assert get_gpu(name).id == "H100-SXM"
    assert gpu_lookup_note(name) is None


@pytest.mark.parametrize("name, gpu_id", [
    ("NVIDIA A100-SXM4-80GB", "A100-80GB-SXM"), ("nvidia-tesla-a100", "A100-40GB-SXM"), ("a100-pcie-80gb", "A100-80GB-PCIe"),
    ("AMD Instinct MI300X", "MI300X"), ("mi300x", "MI300X"), ("RTX 4090", "RTX-4090"), ("nvidia-l4", "L4"),
    ("NVIDIA GeForce RTX 4090", "RTX-4090"), ("h100 pcie", "H100-PCIe"), ("H100 NVL", "H100-NVL"), ("GB200", "GB200"),
])
def test_gpu_device_names_and_cloud_labels_resolve(name, gpu_id):
    assert get_gpu(name).id == gpu_id


@pytest.mark.parametrize("name, gpu_id", [("H100", "H100-SXM"), ("h100-80gb", "H100-SXM"), ("A100", "A100-80GB-SXM"),
                                          ("a100 40gb", "A100-40GB-SXM"), ("H200", "H200-SXM")])
def test_ambiguous_family_names_resolve_by_the_documented_convention_with_a_note(name, gpu_id):
    gpu, note = resolve_gpu(name)
    assert gpu.id == gpu_id
    assert note and gpu_id in note


def test_unknown_gpu_error_suggests_and_lists_known_gpus():
    with pytest.raises(ReaderError) as info:
        get_gpu("H1000")
    text = info.value.render()
    assert "unknown GPU 'H1000'" in text and "Did you mean 'H100-SXM'" in text
    assert "MI300X" in text and "vllm-reader catalog gpus" in text


def test_find_gpu_returns_none_for_unknown_names():
    assert find_gpu("V100") is None
    assert find_gpu("l40s").id == "L40S"
