"""The corpus table: what `check` says about each of the real public configs, and which rule (or the
capacity model) catches each config that really failed at start-up, with the same cause.

Default version: the one the file implies (image tag), else the newest known release (0.33.0). Only
error and warning findings are listed; info findings (an assumed GPU) are not. How the model was
found shows too (the suite runs offline, so only the Hugging Face cache and the shipped catalog answer):
VR904 a model no source has (its architecture rules could not run), VR905 a container path read as a
model by its name, VR906 a quantized checkpoint sized from its base model and the format its name announces.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from _rules_helpers import CORPUS, fired
from reader.rules_engine.run import CheckOptions, check_files

# file -> (status, vLLM release used, {error and warning rule ids})
TABLE = {
    "aibrix_deepseek-r1_rayclusterfleet_tp16.yaml": ("checked", "0.7.3", set()),
    "docker_dagnaputra_qwen2.5-7b.sh": ("checked", "0.33.0", set()),
    "docker_dockerapps_deepseek-v3_no_tp.ps1": ("checked", "0.6.6", set()),
    "docker_openreinforcedagent_bnb_v0.7.2.sh": ("checked", "0.6.6", {"VR904"}),
    # max_num_seqs 1 x max_model_len 1024 < max_num_batched_tokens 8192: vLLM warns at start-up; and ~218 GB of
    # BF16 weights over 8 L4s is 25 GiB a GPU, more than an L4 has (VR418, the capacity model's start-up verdict)
    "eks_ai-on-eks_llama4-scout_lws_tp4_pp2_g6.yaml": ("checked", "0.11.0", {"VR203", "VR418"}),
    # the Vertex image's tag is a build date (20250312): the release out by then, 0.7.3, still has --swap-space
    "gke_gemma-3-27b-it_2xA100-40gb_deployment.yaml": ("checked", "0.7.3", set()),
    "issue_gpustack-2259_gemma-3-27b_tp3.sh": ("checked", "0.33.0", {"VR501", "VR905"}),
    # a KAITO preset names no vLLM arguments: the loader refuses it with the reason
    "issue_kaito-2132_mistral-small-4-119b_workspace.yaml": ("bad-input", None, set()),
    "issue_qwen-295_qwen1.5-7b-chat_default_maxlen.sh": ("checked", "0.33.0", {"VR905"}),
    "issue_recipes-pr12_qwen3-coder-480b-fp8_h20_dp8_kv_too_small.sh": ("checked", "0.33.0", {"VR905"}),
    "issue_vllm-10439_qwen2.5-0.5b_docker_v0.6.4.sh": ("checked", "0.33.0", {"VR905"}),
    # at 0.33.0 the legacy flags are refused first; the PP x MTP cause is caught at its own release (below)
    "issue_vllm-14117_deepseek-r1_tp8_pp2_mtp.sh": ("checked", "0.33.0", {"VR104", "VR107", "VR307", "VR905"}),
    "issue_vllm-17431_qwen3-8b_a800_v1_low_gpu_util.sh": ("checked", "0.33.0", {"VR213", "VR905"}),
    "issue_vllm-27508_gpt-oss-120b_h100_tp1.sh": ("checked", "0.33.0", set()),
    "issue_vllm-34076_qwen3-coder-30b-fp8_pp2_heterogeneous.sh": ("checked", "0.33.0", {"VR905"}),
    "issue_vllm-4358_mixtral-awq_spec_ray_fp8kv.sh": ("checked", "0.33.0", {"VR104", "VR105", "VR108"}),
    "issue_vllm-4429_deepseek-coder-33b_2xL40.sh": ("checked", "0.33.0", {"VR905"}),
    # ${REVISION:+--revision "$REVISION"} in the ENTRYPOINT: empty with REVISION unset, as the shell reads it
    "koyeb_example-vllm_llama3.1-8b_revision-expansion.Dockerfile": ("checked", "0.33.0", set()),
    # the chart's values: the model car's name is not in the shipped catalog (VR904); multiNode sizes unread (VR901)
    "kserve_helm-vllm-kserve_values_modelcar-granite-3.3-2b.yaml": ("checked", "0.33.0", {"VR901", "VR904"}),
    "kserve_llmisvc_gemma3-4b_ngram_a10.yaml": ("checked", "0.33.0", set()),
    "kserve_llmisvc_qwen3-32b-fp8_eagle3_h100.yaml": ("checked", "0.33.0", set()),
    "llmd_pd-disagg_gpt-oss-120b_patch-decode.yaml": ("checked", "0.33.0", set()),
    # $((LWS_GROUP_SIZE * DP_SIZE_LOCAL)) and ${LWS_LEADER_ADDRESS}: what the LWS controller sets (an info note)
    "llmd_wide-ep-lws_decode_leaderworkerset.yaml": ("checked", "0.33.0", set()),
    "makefile_tiered-kv-cache_llama3.1-8b_uv-run.Makefile": ("checked", "0.33.0", set()),  # behind `uv run`
    "nvidia-dynamo_vllm_disagg_dynamographdeployment.yaml": ("checked", "0.33.0", set()),
    # `--compilation-config 3`: from 0.9.2 vLLM's parser wants a JSON object there ("Input should be an object",
    # the real vLLM 0.32.0 and 0.18.0 in fixtures/differential/corpus-vllm-*.jsonl): vLLM would not start (VR122),
    # with -O3 as the fix
    "prodstack_gie_gpu-deployment.yaml": ("checked", "0.33.0", {"VR122"}),
    "prodstack_multi-round-qa_model.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-02-basic-config.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-05-cpu-offloading.yaml": ("checked", "0.33.0", set()),
    # the chart's Ray template sets VLLM_USE_V1=0, which 0.33.0 no longer has (head + worker = 2 GPUs for PP 2)
    "prodstack_values-15b-pipeline-parallel-ray.yaml": ("checked", "0.33.0", {"VR213"}),
    "prodstack_values-16-disagg-prefill.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-25-v100-tp2.yaml": ("checked", "0.8.5", set()),
    "recipes_deepseek-r1_8xh200_tp8_ep.sh": ("checked", "0.33.0", set()),
    "recipes_gpt-oss-120b_8xh100_eval.sh": ("checked", "0.33.0", set()),
    "recipes_gpt-oss-120b_h100_tp1_oom_workaround.sh": ("checked", "0.33.0", set()),
    "recipes_gpt-oss-120b_mi300x_rocm.sh": ("checked", "0.33.0", set()),
    "recipes_gpt-oss_blackwell.yaml": ("checked", "0.33.0", set()),
    "recipes_gpt-oss_eagle3_hopper.yaml": ("checked", "0.33.0", set()),
    "recipes_kimi-k2-thinking_tp8_dcp8.sh": ("checked", "0.33.0", set()),
    "recipes_llama3.3_hopper.yaml": ("checked", "0.33.0", set()),
    "recipes_llama4_blackwell.yaml": ("checked", "0.33.0", set()),
    "recipes_qwen3-coder-480b_fp8_dp8_ep.sh": ("checked", "0.33.0", set()),
    # "method": "qwen3_next_mtp": a deprecated alias of "mtp" at 0.18.x (VR323); at 0.33.0 the recipe's
    # --no-enable-chunked-prefill beside the hybrid model's default prefix caching is refused (VR217: the real
    # 0.32.0 refused it, fixtures/differential/corpus-vllm-0.32.0.jsonl)
    "recipes_qwen3-next_mtp.sh": ("checked", "0.33.0", {"VR217"}),
    "recipes_qwen3.8-27b_nvfp4_2x5090.sh": ("checked", "0.33.0", {"VR906"}),
    "skypilot_serve-openai-api_llama2-7b_L4.sky.yaml": ("checked", "0.33.0", set()),
    "skypilot_vllm-multinode_llama4-maverick_tp8_pp2.sky.yaml": ("checked", "0.33.0", set()),
    "vllm_docs_serve_args_config.yaml": ("checked", "0.33.0", set()),
    "vllm_perf-benchmarks_serving-tests-rocm.json": ("checked", "0.33.0", set()),
    "vllm_perf-benchmarks_serving-tests.json": ("checked", "0.33.0", {"VR102"}),
    # grown corpus (issue 23): public launch files found through the search tools
    "aibrix_brixbench_dynamo_qwen3-32b_4p8d.yaml": ("checked", "0.33.0", {"VR901", "VR905"}),
    "aibrix_brixbench_qwen3-8b_pd-1p1d-tp2.yaml": ("checked", "0.22.0", {"VR905"}),
    "aibrix_brixbench_vllm_qwen3-32b_tp4_replicas2.yaml": ("checked", "0.10.2", {"VR110", "VR210", "VR905"}),
    "aibrix_deepseek-r1_local-nvme.yaml": ("checked", "0.7.3", {"VR905"}),
    "aibrix_deepseek-r1_tcp.yaml": ("checked", "0.7.3", {"VR905"}),
    "conda_korgym_deepseek-r1-distill-qwen-32b_pp2_tp4.sh": ("checked", "0.33.0", {"VR905"}),
    "conda_korgym_llama3.1-8b-instruct.sh": ("checked", "0.33.0", {"VR905"}),
    "conda_korgym_qwen2.5-14b-instruct_tp2.sh": ("checked", "0.33.0", {"VR905"}),
    "conda_korgym_qwen2.5-32b.sh": ("checked", "0.33.0", {"VR905"}),
    "conda_korgym_qwen2.5-72b-instruct_pp2_tp4.sh": ("checked", "0.33.0", {"VR905"}),
    "docker_rx-labs_llama3-8b-instruct_env-model.sh": ("checked", "0.33.0", set()),
    "eks_ray-vllm-deepseek.yml": ("bad-input", None, set()),
    "gke_adk-vllm_deploy-llm_l4.yaml": ("checked", "0.8.5", {"VR417"}),
    "gke_gemma-2-27b-it_l4.yaml": ("checked", "0.10.0", set()),
    "gke_gemma-2-27b_l4.yaml": ("checked", "0.10.0", set()),
    "gke_gemma-2-9b-it_l4.yaml": ("checked", "0.10.0", set()),
    "gke_gemma-2-9b_l4.yaml": ("checked", "0.10.0", set()),
    "gke_gemma-3-12b-it_l4.yaml": ("checked", "0.10.0", set()),
    "gke_gemma-3-27b-it_a100-80gb.yaml": ("checked", "0.10.0", {"VR212"}),
    "gke_gemma-3-4b-it_l4.yaml": ("checked", "0.10.0", set()),
    "gke_llama4-maverick-fp8_h100.yaml": ("checked", "0.10.0", {"VR212"}),
    "gke_llama4-maverick-instruct_h200.yaml": ("checked", "0.10.0", {"VR212"}),
    "gke_llama4-scout-instruct_h100.yaml": ("checked", "0.10.0", {"VR212"}),
    "gke_mix-train-inference_gemma-3-12b-it_l4.yaml": ("checked", "0.10.0", set()),
    "gke_multihost_deepseek-r1_a3_hdml_local-path.yaml": ("checked", "0.8.5", {"VR905"}),
    "gke_multihost_deepseek-r1_a3_lws_tp8_pp2.yaml": ("checked", "0.8.5", set()),
    "gke_multihost_llama3.1-405b_a3_hdml_local-path.yaml": ("checked", "0.8.5", {"VR905"}),
    "gke_multihost_llama3.1-405b_a3_lws_tp8_pp2.yaml": ("checked", "0.8.5", set()),
    "gke_rayserve_tpu-v6e-singlehost_rayservice.yaml": ("bad-input", None, set()),
    "gke_vllm-tpu_llama3.1-70b_v6e.yaml": ("checked", "0.33.0", set()),
    "kserve_llmisvc_gpt-oss_config-default.yaml": ("checked", "0.33.0", {"VR112", "VR901", "VR904"}),
    "kserve_llmisvc_gpt-oss_prefix-cache.yaml": ("checked", "0.33.0", {"VR112", "VR901", "VR904"}),
    "kserve_storage_hf_isvc.yaml": ("checked", "0.33.0", {"VR901"}),
    "kubeai_model_deepseek-r1-mi300x.yaml": ("checked", "0.33.0", {"VR101", "VR103", "VR112", "VR123"}),
    "kubeai_model_gemma-2-9b-it-fp8-l4.yaml": ("checked", "0.33.0", {"VR906"}),
    "kubeai_model_llama-3.1-405b-instruct-fp8-a100-80b.yaml": (
        "checked", "0.33.0", {"VR103", "VR112", "VR123", "VR906"}),
    "kubeai_model_llama-3.1-405b-instruct-fp8-h100.yaml": ("checked", "0.33.0", {"VR112", "VR906"}),
    "kubeai_model_llama-3.1-405b-instruct-fp8-mi300x.yaml": (
        "checked", "0.33.0", {"VR101", "VR103", "VR112", "VR123", "VR906"}),
    "kubeai_model_llama-3.1-70b-instruct-awq-int4-gh200.yaml": ("checked", "0.33.0", {"VR112", "VR906"}),
    "kubeai_model_llama-3.1-70b-instruct-fp8-1-h100.yaml": ("checked", "0.33.0", {"VR112", "VR419", "VR906"}),
    "kubeai_model_llama-3.1-70b-instruct-fp8-gh200.yaml": ("checked", "0.33.0", {"VR112", "VR123", "VR906"}),
    "kubeai_model_llama-3.1-70b-instruct-fp8-h100.yaml": ("checked", "0.33.0", {"VR112", "VR906"}),
    "kubeai_model_llama-3.1-70b-instruct-fp8-l4.yaml": ("checked", "0.33.0", {"VR112", "VR123", "VR906"}),
    "kubeai_model_llama-3.1-70b-instruct-fp8-mi300x.yaml": (
        "checked", "0.33.0", {"VR101", "VR103", "VR112", "VR123", "VR906"}),
    # VLLM_CPU_KVCACHE_SPACE=4 is exactly one 32768-token request, less the null block: the real 0.32.0 CPU build
    # refuses it; the memory is given, so the assumed GPU does not soften it to VR420
    "kubeai_model_llama-3.1-8b-instruct-cpu.yaml": ("checked", "0.33.0", {"VR417"}),
    "kubeai_model_llama-3.1-8b-instruct-fp8-l4.yaml": ("checked", "0.33.0", {"VR112", "VR906"}),
    "kubeai_model_llama-3.1-8b-instruct-tpu.yaml": ("checked", "0.33.0", {"VR102", "VR103", "VR112"}),
    "kubeai_model_llama-3.1-supernova-lite-l4.yaml": ("checked", "0.33.0", {"VR112", "VR904"}),
    "kubeai_model_llama-3.3-70b-instruct-bf16-gh200.yaml": ("checked", "0.33.0", {"VR112"}),
    "kubeai_model_llama-4-maverick-430k-h100.yaml": ("checked", "0.33.0", {"VR112"}),
    "kubeai_model_mistral-small-24b-instruct-h100.yaml": ("checked", "0.33.0", {"VR112"}),
    "kubeai_model_qwen2.5-7b-instruct-l4.yaml": ("checked", "0.33.0", set()),
    "lws_docs_tas.md": ("checked", "0.8.5", set()),
    "lws_vllm_gpu.yaml": ("checked", "0.8.5", set()),
    "lws_vllm_tpu.yaml": ("checked", "0.33.0", set()),
    "makefile_vini_nous-llama3-8b.Makefile": ("checked", "0.33.0", {"VR905"}),
    "nohup_multiagentsdebate_qwen2.5-14b_tp4.sh": ("checked", "0.33.0", set()),
    "prodstack_aws_spec_llama3.1-8b.yaml": ("checked", "0.33.0", set()),
    "prodstack_gcp_spec_basic.yaml": ("checked", "0.33.0", set()),
    "prodstack_gke_offload-kv-local-disk_llama3.3-70b.yaml": ("checked", "0.33.0", set()),
    "prodstack_oci_spec.yaml": ("checked", "0.33.0", set()),
    "prodstack_terraform-eks_cpu-tinyllama.tpl.yaml": ("checked", "0.8.5", set()),
    "prodstack_values-03-match-pv_llama3.1-8b.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-04-multiple-models.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-06-shared-storage_mistral-7b.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-09-lora-helm_llama3.1-8b.yaml": ("checked", "0.33.0", {"VR901"}),
    "prodstack_values-13-tool-enabled_llama3.1-8b.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-14-vllm-v1_llama3.1-8b.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-17-kv-aware_gpt-oss-20b.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-18-prefix-aware.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-23-semantic-router_qwen3-8b.yaml": ("checked", "0.33.0", set()),
    "prodstack_values-25-v100-single_qwen2.5-0.5b.yaml": ("checked", "0.8.5", set()),
    "prodstack_values-25-v100-tp4_qwen2.5-14b.yaml": ("checked", "0.8.5", set()),
    "recipes_md_deepseek_deepseek-v3.md": ("checked", "0.33.0", set()),
    "recipes_md_deepseek_deepseek-v3_1.md": ("checked", "0.33.0", set()),
    "recipes_md_deepseek_deepseek-v3_2.md": ("checked", "0.33.0", set()),
    "recipes_md_llama_llama3.3-70b.md": ("checked", "0.33.0", set()),
    "recipes_md_llama_llama4-scout.md": ("checked", "0.33.0", set()),
    "recipes_md_openai_gpt-oss.md": ("checked", "0.33.0", set()),
    "recipes_md_qwen_qwen3-coder-480b-a35b.md": ("checked", "0.33.0", set()),
    "recipes_md_qwen_qwen3-vl.md": ("checked", "0.33.0", {"VR906"}),
    "recipes_md_qwen_qwen3.5.md": ("checked", "0.33.0", set()),
    "recipes_md_qwen_qwen3.md": ("checked", "0.33.0", {"VR102", "VR112"}),
    "shell_curator_bash-c-cmd_qwen2.5-32b_tp4.sh": ("checked", "0.33.0", set()),
    "shell_enigmatom_gemma27.sh": ("checked", "0.33.0", {"VR901", "VR905"}),
    "shell_enigmatom_llama3-70b.sh": ("checked", "0.33.0", {"VR120", "VR901", "VR905"}),
    "shell_enigmatom_llama3.1-8b_hf-snapshot_nvidia-smi-tp.sh": ("checked", "0.33.0", {"VR901", "VR905"}),
    "shell_enigmatom_mixtral.sh": ("checked", "0.33.0", set()),
    "shell_enigmatom_qwen14.sh": ("checked", "0.33.0", set()),
    "shell_gpt-oss-alignment_gpt-oss-20b_tp8.sh": ("checked", "0.33.0", set()),
    "shell_instance-scripts_gpt-oss-120b.sh": ("checked", "0.33.0", set()),
    "shell_instance-scripts_gpt-oss-20b_trailing-backslash.sh": ("checked", "0.33.0", {"VR112"}),
    "shell_instance-scripts_qwen.sh": ("checked", "0.33.0", set()),
    # the catalog has its own file: fbgemm_fp8, which vLLM refuses as deprecated (fixtures/differential/corpus-vllm-*)
    "shell_synth-data_llama3.1-405b-fp8_tp8.sh": ("checked", "0.33.0", {"VR412"}),
    "shell_t0-1_isambard_gemma3_tools.sh": ("checked", "0.33.0", set()),
    # the --hf-overrides YaRN factor does not raise the derived 32768 (the real 0.32.0 and 0.18.0 refuse 131072)
    "shell_t0-1_isambard_qwen_tools.sh": ("checked", "0.33.0", {"VR402"}),
    "shell_t0-1_spark_gpt-oss-20b_tools.sh": ("checked", "0.33.0", set()),
    "shell_vllm-tutorial_qwen3-8b_launch.sh": ("checked", "0.33.0", {"VR905"}),
    "shell_whucs_qwen3-8b-awq_local-path.sh": ("checked", "0.33.0", {"VR905", "VR906"}),
    "slurm_claireg808_deepseek-r1-distill-qwen-32b.sh": ("checked", "0.33.0", set()),
    "uv-run_gemma3serving_gemma-3-27b-w4a16.sh": ("checked", "0.33.0", {"VR905", "VR906"}),
    "uv-run_qwen-hotaisle_qwen3-0.6b_fp8kv.sh": ("checked", "0.33.0", set()),
    "uv-run_qwen-hotaisle_qwen3.5-397b-fp8_tp4.sh": ("checked", "0.33.0", {"VR906"}),
}

# The configs the corpus index marks failed_at_startup_in_source, and what catches each with vLLM's cause.
# ("rule", release the failure happened on, rule id, words of the cause) / ("capacity", cause) / ("none", why)
STARTUP_FAILURES = {
    "issue_gpustack-2259_gemma-3-27b_tp3.sh":
        ("rule", "0.8.5", "VR501", "attention heads, which tensor_parallel_size 3 does not divide"),
    "issue_vllm-14117_deepseek-r1_tp8_pp2_mtp.sh":
        ("rule", "0.7.3", "VR602", "does not support speculative decoding with pipeline parallelism"),
    "issue_vllm-4358_mixtral-awq_spec_ray_fp8kv.sh":
        ("none", "'Speculative decoding not yet supported for RayGPU backend.' is an assertion of vLLM 0.4.x's "
                 "RayGPUExecutor (TP>1 used Ray by default then); vLLM 0.4.1 is older than the oldest release this "
                 "tool holds facts for (0.6.3), where Ray runs speculative decoding"),
    "issue_kaito-2132_mistral-small-4-119b_workspace.yaml": ("capacity", "KV cache too small for max_model_len"),
    "issue_qwen-295_qwen1.5-7b-chat_default_maxlen.sh": ("capacity", "max_model_len larger than the KV cache"),
    "issue_recipes-pr12_qwen3-coder-480b-fp8_h20_dp8_kv_too_small.sh":
        ("capacity", "KV cache too small for max_model_len"),
    "issue_vllm-10439_qwen2.5-0.5b_docker_v0.6.4.sh": ("capacity", "no available memory for the cache blocks"),
    "issue_vllm-17431_qwen3-8b_a800_v1_low_gpu_util.sh": ("capacity", "no available memory for the cache blocks"),
    "issue_vllm-27508_gpt-oss-120b_h100_tp1.sh": ("capacity", "no available memory for the cache blocks"),
    "issue_vllm-34076_qwen3-coder-30b-fp8_pp2_heterogeneous.sh":
        ("capacity", "KV cache too small for max_model_len (smallest PP stage)"),
    "issue_vllm-4429_deepseek-coder-33b_2xL40.sh": ("capacity", "no available memory for the cache blocks"),
}

INDEX = yaml.safe_load((CORPUS / "INDEX.yaml").read_text(encoding="utf-8"))


def test_the_table_covers_every_corpus_config():
    on_disk = {p.name for p in CORPUS.iterdir() if not p.name.endswith(".provenance.txt") and p.name != "INDEX.yaml"}
    indexed = {entry["file"] for entry in INDEX["files"]}
    assert len(on_disk) == INDEX["count"] == 152
    assert set(TABLE) == on_disk == indexed


def test_every_real_startup_failure_is_in_the_failure_table():
    failed = {e["file"] for e in INDEX["files"] if e.get("failed_at_startup_in_source")}
    assert failed == set(STARTUP_FAILURES)


@pytest.fixture(scope="module")
def report():
    return check_files([str(CORPUS / name) for name in sorted(TABLE)], CheckOptions())


@pytest.mark.parametrize("name", sorted(TABLE))
def test_corpus_row(report, name):
    status, version, expected = TABLE[name]
    result = next(c for c in report.configs if c.config.endswith("/" + name))
    assert result.status == status, result.error
    assert result.vllm_version == version
    found = {f.rule_id for f in report.findings if f.config == result.config and f.severity != "info"}
    assert found == expected


def test_the_refused_config_says_why(report):
    result = next(c for c in report.configs if c.config.endswith("kaito-2132_mistral-small-4-119b_workspace.yaml"))
    assert "KAITO" in result.error and "preset" in result.error


@pytest.mark.parametrize("name", sorted(n for n, v in STARTUP_FAILURES.items() if v[0] == "rule"))
def test_rules_catch_the_real_startup_failure_with_the_same_cause(name):
    _, version, rule_id, words = STARTUP_FAILURES[name]
    report = check_files([str(CORPUS / name)], CheckOptions(vllm_version=version))
    assert report.summary.exit_code == 1
    finding = next(f for f in report.findings if f.rule_id == rule_id)
    assert finding.severity == "error"
    assert words in finding.message
    assert finding.locations[0].line is not None


def test_the_ray_assertion_predates_every_release_the_tool_knows():
    name = "issue_vllm-4358_mixtral-awq_spec_ray_fp8kv.sh"
    assert STARTUP_FAILURES[name][0] == "none"
    old = check_files([str(CORPUS / name)], CheckOptions(vllm_version="0.4.1"))
    assert old.configs[0].vllm_version == "0.6.3"  # read with the oldest release's facts, and said loudly
    assert any("older than the oldest release" in f.message for f in old.findings if f.severity == "warning")
    oldest = check_files([str(CORPUS / name)], CheckOptions(vllm_version="0.6.3"))
    assert fired(oldest, "error") == set()  # no rule claims a Ray x speculative-decoding failure at 0.6.3+
    assert "speculative_model" in {loc.key for f in check_files([str(CORPUS / name)], CheckOptions()).findings
                                   for loc in f.locations}


# How each memory failure is caught. "pipeline": the real loader, resolver and capacity model, with the
# context the issue gives (GPU, version); the startup error must have vLLM's kind. "capacity test": the
# issue needs facts the CLI cannot take (memory held by other processes, per-stage GPUs, a model or GPU
# outside the catalog, a release older than 0.6.3), so the tests/capacity test that rebuilds it with those
# inputs is run here, and the capacity model must have reported the start-up failure of vLLM's kind in it.
MEMORY_CATCHES = {
    "issue_vllm-27508_gpt-oss-120b_h100_tp1.sh": ("pipeline", {"vllm_version": "0.11.0", "gpu": "H100-SXM"},
                                                  {"max_len_too_long"}),
    "issue_recipes-pr12_qwen3-coder-480b-fp8_h20_dp8_kv_too_small.sh": (
        "capacity test", "test_capacity_corpus.py::test_recipes_pr12_qwen3_coder_480b_fp8_dp8_ep",
        {"max_len_too_long"}),
    "issue_qwen-295_qwen1.5-7b-chat_default_maxlen.sh": (
        "capacity test", "test_capacity_corpus.py::test_qwen_295_default_max_len_32768_on_one_24gb_gpu",
        {"max_len_too_long"}),
    "issue_vllm-10439_qwen2.5-0.5b_docker_v0.6.4.sh": (
        "capacity test", "test_capacity_corpus.py::test_vllm_10439_qwen25_05b_util_04_on_v064_counts_other_processes",
        {"no_kv_memory"}),
    "issue_vllm-17431_qwen3-8b_a800_v1_low_gpu_util.sh": (
        "capacity test", "test_capacity_corpus.py::test_vllm_17431_qwen3_8b_a800_util_04_fails_on_v1_not_on_v0",
        {"no_kv_memory"}),
    "issue_vllm-34076_qwen3-coder-30b-fp8_pp2_heterogeneous.sh": (
        "capacity test", "test_capacity_corpus.py::test_vllm_34076_qwen3_coder_30b_fp8_pp2_heterogeneous",
        {"max_len_too_long"}),
    # vLLM said 'No available memory'; ours keeps a little KV memory and fails the max-length check instead
    "issue_vllm-4429_deepseek-coder-33b_2xL40.sh": (
        "capacity test", "test_capacity_corpus.py::test_vllm_4429_deepseek_coder_33b_on_two_l40",
        {"no_kv_memory", "max_len_too_long"}),
    "issue_kaito-2132_mistral-small-4-119b_workspace.yaml": (
        "capacity test", "test_capacity_corpus.py::test_kaito_2132_mistral_small_4_estimated_max_len_from_the_quoted_memory",
        {"max_len_too_long"}),
}


def test_every_memory_failure_has_a_catch():
    assert set(MEMORY_CATCHES) == {n for n, v in STARTUP_FAILURES.items() if v[0] == "capacity"}


def _capacity_test(detail: str):
    """The named tests/capacity test function, from a private copy of its module (its table rows stay there)."""
    import importlib.util
    import sys

    path, name = detail.split("::")
    folder = Path(__file__).resolve().parents[1] / "capacity"
    if str(folder) not in sys.path:
        sys.path.append(str(folder))  # its `from test_capacity_specs import ...`
    spec = importlib.util.spec_from_file_location(f"_catch_{Path(path).stem}", folder / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, getattr(module, name)


def _parameter_sets(test) -> list[dict]:
    sets = [{}]
    for mark in getattr(test, "pytestmark", []):
        if mark.name == "parametrize":
            names = [n.strip() for n in mark.args[0].split(",")]
            sets = [dict(s, **dict(zip(names, values if len(names) > 1 else (values,)))) for s in sets
                    for values in mark.args[1]]
    return sets


@pytest.mark.parametrize("name", sorted(MEMORY_CATCHES))
def test_capacity_model_catches_memory_failure(name):
    how, detail, kinds = MEMORY_CATCHES[name]
    if how == "capacity test":
        module, test = _capacity_test(detail)
        seen = []
        real = module.compute_capacity

        def recording(request):
            seen.append(real(request))
            return seen[-1]

        module.compute_capacity = recording
        for params in _parameter_sets(test):
            test(**params)  # its own assertions on the figures vLLM quoted
        assert {c.startup_error.kind for c in seen if c.startup_error is not None} & kinds, detail
        return
    from reader.capacity.api import compute_capacity
    from reader.config.context import LoadOptions
    from reader.config.load import load_deployment
    from reader.config.resolve import resolve
    from reader.pipeline import capacity_request

    resolved = resolve(load_deployment(str(CORPUS / name), LoadOptions(**detail)))
    cap = compute_capacity(capacity_request(resolved))
    assert cap.startup_error is not None and cap.startup_error.kind in kinds


def test_no_memory_failure_is_claimed_by_a_rule():
    names = [n for n, v in STARTUP_FAILURES.items() if v[0] == "capacity"]
    report = check_files([str(CORPUS / n) for n in names], CheckOptions())
    assert fired(report, "error") == set()
