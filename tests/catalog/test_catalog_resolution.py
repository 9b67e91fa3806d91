"""Where a model's shape comes from: local files, the Hugging Face cache, the catalog, names.

The Hub step is tested against a local stand-in server in test_catalog_hub.py; here the Hub is off
(HF_HUB_OFFLINE=1, as in the whole suite) and the cache is the fixture cache in the hub's own layout.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _catalog_helpers import HF_FIXTURES, REPO
from reader.catalog import names
from reader.catalog.hf_cache import CacheMiss, Snapshot, cached_repo_ids, find_snapshot, hub_cache_dir
from reader.catalog.model_files import config_from_params, read_model_path
from reader.catalog.resolution import resolve_model, resolve_storage_path
from reader.errors import ReaderError

FIXTURE_CACHE = REPO / "fixtures" / "hf_cache" / "hub"
TINY = "vllm-reader-tests/tiny-llama"
MAIN_SHA = "5f4c0b0c7b7c3a3c2a1e0d9f8e7d6c5b4a392817"
V1_SHA = "0e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5"


@pytest.fixture
def cache(monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(FIXTURE_CACHE))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return FIXTURE_CACHE


# ---- the cache folder, as huggingface_hub finds it -------------------------------------------

def test_the_cache_folder_follows_huggingface_hub_precedence():
    assert hub_cache_dir({"HF_HUB_CACHE": "/a", "HF_HOME": "/b"}) == Path("/a")
    assert hub_cache_dir({"HUGGINGFACE_HUB_CACHE": "/legacy", "HF_HOME": "/b"}) == Path("/legacy")
    assert hub_cache_dir({"HF_HOME": "/b"}) == Path("/b/hub")
    assert hub_cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/huggingface/hub")
    assert hub_cache_dir({}) == Path("~/.cache/huggingface/hub").expanduser()


def test_a_cached_repository_is_read_at_main_by_default(cache):
    snap = find_snapshot(TINY)
    assert isinstance(snap, Snapshot) and snap.commit == MAIN_SHA and snap.revision == "main"


@pytest.mark.parametrize("revision", ["v1", V1_SHA])
def test_the_revision_is_honoured_as_a_ref_or_a_commit(cache, revision):
    res = resolve_model(TINY, revision=revision)
    assert res.source == "hf-cache" and res.spec.num_hidden_layers == 4
    assert res.spec.max_position_embeddings == 2048
    assert V1_SHA[:12] in res.shape_from()


def test_main_and_the_tag_give_different_shapes(cache):
    assert resolve_model(TINY).spec.num_hidden_layers == 2
    assert resolve_model(TINY, revision="v1").spec.num_hidden_layers == 4


def test_an_unknown_revision_is_a_cache_miss_that_says_so(cache):
    miss = find_snapshot(TINY, "v9")
    assert isinstance(miss, CacheMiss) and "no ref 'v9'" in miss.reason


def test_hub_ids_are_case_insensitive_in_the_cache(cache):
    assert isinstance(find_snapshot("VLLM-Reader-Tests/Tiny-Llama"), Snapshot)


def test_hf_home_locates_the_cache(monkeypatch, tmp_path):
    shutil.copytree(FIXTURE_CACHE, tmp_path / "hub", symlinks=True)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    res = resolve_model(TINY)
    assert res.source == "hf-cache" and str(tmp_path) in res.location


def test_a_modelopt_sidecar_in_the_cache_sets_the_weight_format(cache):
    spec = resolve_model("vllm-reader-tests/tiny-llama-fp8").spec
    assert spec.quantization.method == "modelopt" and spec.quantization.kv_cache_dtype == "fp8"


def test_the_cache_lists_its_repositories(cache):
    assert {TINY, "vllm-reader-tests/tiny-llama-fp8"} <= set(cached_repo_ids())


def test_the_cache_wins_over_the_catalog(tmp_path, monkeypatch):
    # A cached copy of a catalog model is the user's own checkpoint: it is what vLLM would load.
    repo = tmp_path / "models--Qwen--Qwen3-8B"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(MAIN_SHA)
    snapshot = repo / "snapshots" / MAIN_SHA
    snapshot.mkdir(parents=True)
    shutil.copy(REPO / "fixtures" / "live" / "tiny-llama" / "config.json", snapshot / "config.json")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    res = resolve_model("Qwen/Qwen3-8B")
    assert res.source == "hf-cache" and res.spec.num_hidden_layers == 2
    assert [s.source for s in res.steps] == ["hf-cache"]


# ---- the chain's order and its report ---------------------------------------------------------

def test_a_catalog_model_never_needs_the_network(cache):
    res = resolve_model("meta-llama/Llama-3.1-8B-Instruct")
    assert res.source == "catalog" and res.spec.id == "meta-llama/Llama-3.1-8B"
    assert [s.source for s in res.steps] == ["hf-cache", "catalog"]
    assert res.shape_from().startswith("model shape from: shipped catalog")


def test_a_model_found_nowhere_says_where_it_looked(cache):
    res = resolve_model("acme/not-a-model")
    assert not res.found
    assert "Hugging Face cache" in res.problem and "HF_HUB_OFFLINE is set" in res.problem
    assert res.shape_from().startswith("model shape from: nowhere")


def test_a_pinned_revision_asks_the_hub_before_the_catalog(cache):
    res = resolve_model("Qwen/Qwen3-8B", revision="abc")
    assert [s.source for s in res.steps] == ["hf-cache", "hub", "catalog"]
    assert res.source == "catalog" and "revision 'abc'" in res.assumptions[0]


def test_a_missing_path_given_with_the_option_is_bad_input():
    with pytest.raises(ReaderError) as err:
        resolve_model("./no/such/folder", from_option=True)
    assert "no such file or folder" in err.value.render() and "--model" in err.value.render()


# ---- local folders and files ------------------------------------------------------------------

def test_a_local_folder_is_read_as_vllm_reads_it(tmp_path):
    folder = tmp_path / "my-model"
    shutil.copytree(HF_FIXTURES / "llama-3.1-70b-instruct-fp8", folder)
    res = resolve_model(str(folder))
    assert res.source == "local" and res.spec.quantization.method == "modelopt"
    assert "hf_quant_config.json" in res.steps[0].detail


def test_a_mistral_params_json_folder_is_read_in_mistral_format(tmp_path):
    params = {"dim": 4096, "n_layers": 32, "head_dim": 128, "hidden_dim": 14336, "n_heads": 32, "n_kv_heads": 8,
              "norm_eps": 1e-05, "vocab_size": 32768, "rope_theta": 1000000.0, "max_position_embeddings": 32768}
    (tmp_path / "params.json").write_text(json.dumps(params))
    spec = read_model_path(tmp_path)
    assert (spec.hidden_size, spec.num_hidden_layers, spec.num_key_value_heads) == (4096, 32, 8)
    assert spec.intermediate_size == 14336 and spec.model_type == "mistral" and not spec.tie_word_embeddings


def test_params_json_sliding_window_and_fp8_map_as_in_vllm():
    params = {"dim": 4096, "n_layers": 4, "head_dim": 128, "hidden_dim": 14336, "n_heads": 32, "n_kv_heads": 8,
              "vocab_size": 32000, "sliding_window": [None, 4096], "quantization": {"qformat_weight": "fp8_e4m3"}}
    config = config_from_params(params, {"max_position_embeddings": 65536}, "params.json")
    assert config["model_type"] == "mistral"
    assert config["layer_types"] == ["full_attention", "sliding_attention"] * 2 and config["sliding_window"] == 4096
    assert config["quantization_config"] == {"quant_method": "fp8"}
    assert config["max_position_embeddings"] == 65536  # from config.json when params.json lacks it


def test_params_json_with_a_mixtral_moe_section_is_refused_as_vllm_cannot_load_it():
    params = {"dim": 64, "n_layers": 1, "n_heads": 1, "hidden_dim": 64, "vocab_size": 8,
              "moe": {"num_experts": 8, "num_experts_per_tok": 2}}
    with pytest.raises(ReaderError) as err:
        config_from_params(params, {}, "params.json")
    assert "key 'moe'" in err.value.render() and "config.json" in err.value.render()


def test_params_json_without_a_length_defaults_to_128000():
    config = config_from_params({"dim": 64, "n_layers": 1, "n_heads": 1, "hidden_dim": 64, "vocab_size": 8}, {},
                                "params.json")
    assert config["max_position_embeddings"] == 128_000


# ---- paths that live in the serving container -----------------------------------------------

@pytest.mark.parametrize("path, first", [
    ("/models/deepseek-coder-33b-instruct", "deepseek-ai/deepseek-coder-33b-instruct"),
    ("/models--Qwen--Qwen1.5-7B-Chat", "Qwen/Qwen1.5-7B-Chat"),
    ("/root/.cache/huggingface/hub/models--Qwen--Qwen1.5-7B-Chat/snapshots/" + "a" * 40, "Qwen/Qwen1.5-7B-Chat"),
    ("./Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8"),
    ("/tmp/model/Qwen3-Coder-480B-A35B-Instruct-FP8", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8"),
    ("/storage-800GB/models/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"),
    ("/vllm-workspace/DeepSeek-R1/", "deepseek-ai/DeepSeek-R1"),
    ("/data/Meta-Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B-Instruct"),
    ("/mnt/models/Mistral-7B-Instruct-v0.2", "mistralai/Mistral-7B-Instruct-v0.2"),
    ("/models/gpt-oss-120b", "openai/gpt-oss-120b"),
])
def test_a_container_path_names_its_most_likely_id_first(path, first):
    assert names.candidate_ids(path)[0].repo_id == first


def test_a_cache_path_carries_its_snapshot_as_the_revision():
    cand = names.candidate_ids("/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/" + "b" * 40)[0]
    assert cand.revision == "b" * 40 and "cache folder" in cand.why


def test_a_meaningless_folder_name_suggests_nothing():
    assert names.candidate_ids("/workspace/vllm-models/vllm-0") == []


def test_a_container_path_resolves_through_the_cache_at_its_snapshot(cache):
    res = resolve_model(f"/root/.cache/huggingface/hub/models--vllm-reader-tests--tiny-llama/snapshots/{V1_SHA}")
    assert res.source == "hf-cache" and res.spec.num_hidden_layers == 4
    assert res.inferred_from and "cache folder" in res.inferred_from


def test_a_container_path_resolves_to_a_catalog_model_and_says_it_was_inferred(cache):
    res = resolve_model("/root/yjpzmodel/basemodel/Qwen3-8B")
    assert res.resolved_id == "Qwen/Qwen3-8B" and res.source == "catalog"
    assert "'Qwen3-8B'" in res.inferred_from and "inferred" in res.shape_from()


def test_served_model_name_is_a_second_clue(cache):
    res = resolve_model("/mnt/disk0/checkpoint-final", served_names=["Qwen/Qwen3-8B"])
    assert res.resolved_id == "Qwen/Qwen3-8B" and "--served-model-name 'Qwen/Qwen3-8B'" in res.inferred_from


def test_a_path_nothing_matches_is_unresolved_with_the_path_named(cache):
    res = resolve_model("/workspace/vllm-models/vllm-0")
    assert not res.found and "'/workspace/vllm-models/vllm-0'" in res.problem


def test_storage_uris_resolve_without_their_scheme(cache):
    # helper for s3://, gs://, pvc://, oci://, hf:// locations: the caller strips the scheme
    assert resolve_storage_path("my-bucket/models/Qwen3-8B").resolved_id == "Qwen/Qwen3-8B"
    assert resolve_storage_path("Qwen/Qwen3-8B").source == "catalog"
    assert resolve_storage_path("my-pvc/llama/Meta-Llama-3-8B-Instruct/").resolved_id == "meta-llama/Meta-Llama-3-8B"


# ---- quantization announced by the name -------------------------------------------------------

@pytest.mark.parametrize("name, method, bits, base", [
    ("Qwen/Qwen3-32B-FP8", "fp8", 8, "Qwen/Qwen3-32B"),
    ("RedHatAI/Qwen3-32B-FP8-dynamic", "compressed-tensors", 8, "RedHatAI/Qwen3-32B"),
    ("casperhansen/mixtral-instruct-awq", "awq", 4, "casperhansen/mixtral-instruct"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "gptq", 4, "Qwen/Qwen2.5-7B-Instruct"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "gptq", 8, "Qwen/Qwen2.5-7B-Instruct"),
    ("nvidia/Llama-3.3-70B-Instruct-NVFP4", "modelopt_fp4", 4, "nvidia/Llama-3.3-70B-Instruct"),
    ("neuralmagic/Meta-Llama-3.1-8B-Instruct-quantized.w8a8", "compressed-tensors", 8,
     "neuralmagic/Meta-Llama-3.1-8B-Instruct"),
    ("RedHatAI/Llama-3.1-8B-Instruct-quantized.w4a16", "compressed-tensors", 4, "RedHatAI/Llama-3.1-8B-Instruct"),
    ("unsloth/llama-3-8b-Instruct-bnb-4bit", "bitsandbytes", 4, "unsloth/llama-3-8b-Instruct"),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "fp8", 8, "meta-llama/Llama-4-Maverick-17B-128E-Instruct"),
    ("nvidia/Llama-4-Scout-17B-16E-Instruct-FP4", "modelopt_fp4", 4, "nvidia/Llama-4-Scout-17B-16E-Instruct"),
    ("Qwen/Qwen3-30B-A3B-GPTQ-Int4", "gptq", 4, "Qwen/Qwen3-30B-A3B"),
    ("openai/gpt-oss-20b-MXFP4", "mxfp4", 4, "openai/gpt-oss-20b"),
])
def test_the_name_announces_the_weight_format(name, method, bits, base):
    quant = names.quantization_from_name(name)
    assert (quant.spec.method, quant.spec.weight_bits, quant.base) == (method, bits, base)


@pytest.mark.parametrize("name", ["meta-llama/Llama-3.1-8B", "Qwen/Qwen3-8B", "FP8", "openai/gpt-oss-120b"])
def test_a_plain_name_announces_nothing(name):
    assert names.quantization_from_name(name) is None


def test_an_unreachable_quantized_checkpoint_takes_its_base_shape_as_an_assumption(cache):
    # a repackager's FP8 export nobody ships a config for: the publisher's BF16 shape, FP8 from the name
    res = resolve_model("acme-labs/Qwen3-Coder-480B-A35B-Instruct-FP8")
    assert res.found and res.spec.id == "acme-labs/Qwen3-Coder-480B-A35B-Instruct-FP8"
    assert res.spec.quantization.method == "fp8" and res.spec.num_hidden_layers == 62
    assert "assumed to be FP8 weights" in res.assumptions[0] and res.steps[-1].source == "name"


def test_a_checkpoint_with_its_own_config_is_never_overridden_by_its_name(cache):
    res = resolve_model("Qwen/Qwen3-32B-FP8")  # in the catalog with its real quantization_config
    assert res.source == "catalog" and not res.assumptions


@pytest.mark.parametrize("uri, model_id", [
    ("s3://my-bucket/Qwen3-8B", "Qwen/Qwen3-8B"),
    ("pvc://models/deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1"),
    ("oci://registry.example/models/qwen3-8b:1.0", "Qwen/Qwen3-8B"),
    ("hf://Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
])
def test_a_model_given_as_a_storage_uri_resolves_through_the_chain(cache, tmp_path, uri, model_id):
    from reader.config.load import load_deployment
    from reader.config.resolve import resolve

    config = tmp_path / "serve.sh"
    config.write_text(f"vllm serve {uri}\n")
    r = resolve(load_deployment(str(config)))
    assert r.model is not None and r.model.id == model_id
    assert (r.model_resolution.inferred_from is None) == uri.startswith("hf://")


def test_an_hf_uri_revision_is_the_revision(cache, tmp_path):
    from reader.config.load import load_deployment
    from reader.config.resolve import resolve

    config = tmp_path / "serve.sh"
    config.write_text(f"vllm serve hf://{TINY}:v1\n")
    assert resolve(load_deployment(str(config))).model.num_hidden_layers == 4


@pytest.mark.parametrize("repo_id, revision", [(TINY, None), (TINY, "v1"), (TINY, V1_SHA), (TINY, MAIN_SHA),
                                               ("vllm-reader-tests/tiny-llama-fp8", None)])
def test_the_cache_is_read_where_huggingface_hub_itself_finds_the_file(repo_id, revision):
    # huggingface_hub's own offline lookup (no network) is the oracle for the layout
    hub = pytest.importorskip("huggingface_hub")
    theirs = hub.try_to_load_from_cache(repo_id, "config.json", cache_dir=FIXTURE_CACHE, revision=revision)
    ours = find_snapshot(repo_id, revision, FIXTURE_CACHE)
    assert isinstance(theirs, str) and isinstance(ours, Snapshot)
    assert Path(theirs) == ours.folder / "config.json"


def test_a_revision_the_cache_lacks_is_a_miss_for_huggingface_hub_too():
    hub = pytest.importorskip("huggingface_hub")
    assert hub.try_to_load_from_cache(TINY, "config.json", cache_dir=FIXTURE_CACHE, revision="v9") is None
    assert isinstance(find_snapshot(TINY, "v9", FIXTURE_CACHE), CacheMiss)


@pytest.mark.parametrize("name", ["/models/llama-3-8b-instruct.Q4_K_M.gguf", "TheBloke/Llama-2-7B-GGUF",
                                  "unsloth/Qwen3-8B-GGUF"])
def test_a_gguf_checkpoint_is_unresolved_with_the_reason(cache, name):
    res = resolve_model(name)
    assert not res.found and "GGUF" in res.problem and "--model" in res.problem


@pytest.mark.parametrize("name", ["models/Qwen3-8B", "my-org/Qwen3-8B"])
def test_an_id_no_source_has_is_inferred_from_its_name_loudly(cache, name):
    # a relative path in the container, or a private fine-tune named after its base model
    res = resolve_model(name)
    assert res.resolved_id == "Qwen/Qwen3-8B" and res.inferred_from == "the folder name 'Qwen3-8B'"
    assert [s.name for s in res.steps][:2] == [name, name]  # asked for as named first


def test_an_id_whose_name_suggests_nothing_stays_unresolved(cache):
    res = resolve_model("acme/weird-model")
    assert not res.found and res.problem.startswith("no source has the model acme/weird-model")


# ---- a re-upload or fine-tune named after a catalog model ------------------------------------

KNOWN = ["meta-llama/Llama-2-7b-chat-hf", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-72B",
         "meta-llama/Llama-3.1-8B"]


@pytest.mark.parametrize("name, base", [
    ("TheBloke/Llama-2-7B-Chat", "meta-llama/Llama-2-7b-chat-hf"),  # case and Meta's -hf do not matter
    ("my-org/Qwen2.5-7B-Instruct-abliterated", "Qwen/Qwen2.5-7B-Instruct"),  # trailing words dropped
    ("my-org/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-72B"),  # 72B is not 7B
    ("NousResearch/Hermes-3-Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),  # the base named inside
    ("allenai/Llama-3.1-Tulu-3-8B", "meta-llama/Llama-3.1-8B"),  # the family first, the size among its words
    ("my-org/Qwen2.5-Math-72B-Instruct", "Qwen/Qwen2.5-72B"),
])
def test_a_variant_name_leads_to_the_model_it_is_named_after(name, base):
    assert names.named_base(name, KNOWN) == base


@pytest.mark.parametrize("name", ["acme/weird-model", "my-org/llama-tuned", "my-org/Qwen2.5-Coder",
                                  "my-org/Qwen2.5-Math-1.5B", "arcee-ai/Llama-3.1-SuperNova-Lite"])
def test_a_name_without_a_known_model_and_size_in_it_leads_nowhere(name):
    assert names.named_base(name, KNOWN) is None


def test_an_unreachable_fine_tune_takes_the_shape_it_is_named_after_as_an_assumption(cache):
    res = resolve_model("NousResearch/Hermes-3-Llama-3.1-8B")
    assert res.found and res.spec.id == "NousResearch/Hermes-3-Llama-3.1-8B"
    assert res.spec.num_hidden_layers == 32 and res.spec.quantization is None
    assert "taken from meta-llama/Llama-3.1-8B" in res.assumptions[0] and res.steps[-1].source == "name"


def test_a_fine_tune_keeps_the_name_it_was_asked_by(cache):
    # meta-llama publishes Llama, so meta-llama/Llama-3.1-Tulu-3-8B is also guessed; the asked id stays
    res = resolve_model("allenai/Llama-3.1-Tulu-3-8B")
    assert res.spec.id == res.resolved_id == "allenai/Llama-3.1-Tulu-3-8B" and res.inferred_from is None
    assert "taken from meta-llama/Llama-3.1-8B" in res.assumptions[0]


def test_a_quantized_re_upload_under_another_spelling_takes_its_base_and_its_format(cache):
    res = resolve_model("TheBloke/Llama-2-7B-Chat-AWQ")
    assert res.found and res.spec.id == "TheBloke/Llama-2-7B-Chat-AWQ" and res.spec.quantization.method == "awq"
    assert "taken from meta-llama/Llama-2-7b-chat-hf" in res.assumptions[0]
