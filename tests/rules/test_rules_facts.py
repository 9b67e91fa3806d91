"""The fact keys reader/config/facts.py adds for the rules."""
from __future__ import annotations

from _rules_helpers import write
from reader.config.context import LoadOptions
from reader.config.facts import facts
from reader.config.load import load_deployment
from reader.config.resolve import resolve


def fact_view(tmp_path, text, version="0.18.0", name="serve.sh", **options):
    path = write(tmp_path, name, text)
    return facts(resolve(load_deployment(path, LoadOptions(vllm_version=version, **options))))


def test_option_spelling_deprecation_and_absence(tmp_path):
    f = fact_view(tmp_path, "vllm serve meta-llama/Llama-3.1-8B --max_num_seqs 8 --use-v2-block-manager",
                  version="0.9.2")
    assert f["option.max_num_seqs"] == "--max-num-seqs" and f["spelling.max_num_seqs"]
    assert f["deprecated.use_v2_block_manager"] is True
    assert "deprecated.max_num_seqs" not in f
    f = fact_view(tmp_path, "vllm serve meta-llama/Llama-3.1-8B --swap-space 4")
    assert f["absent.swap_space"] is True and f["flag_versions.swap_space"] == "0.6.3 to 0.17.1"
    assert f["option.swap_space"] == "--swap-space"


def test_json_flag_keys(tmp_path):
    f = fact_view(tmp_path, "vllm serve meta-llama/Llama-3.1-8B --speculative-config "
                  "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3, \"prompt_lookup_min\": 2}' "
                  "--compilation-config '{\"cudagraph_capture_sizes\": [1, 2, 4]}' --cudagraph-capture-sizes 1 2 8")
    assert f["spec.config.method"] == "ngram" and f["spec.config.prompt_lookup_min"] == 2
    assert f["compilation.cudagraph_capture_sizes"] == [1, 2, 4]
    assert f["given_max.cudagraph_capture_sizes"] == 8


def test_model_name_and_gpu_count_origin(tmp_path):
    f = fact_view(tmp_path, "max-num-seqs: 8\n", name="c.yaml")
    assert f["model_name"] is None
    assert f["gpu.count_origin"] == "none"
    f = fact_view(tmp_path, "vllm serve meta-llama/Llama-3.1-8B\n", gpu_count=2)
    assert f["model_name"] == "meta-llama/Llama-3.1-8B" and f["gpu.count_origin"] == "cli" and f["gpu.count"] == 2
