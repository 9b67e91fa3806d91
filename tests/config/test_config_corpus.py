"""Every real public config in fixtures/corpus loads, or is refused with a clear and correct message.

The table records, per file, what a reader of that file would say vLLM gets: the form, the model,
the flags that matter, what the manifest says about GPUs, and anything left unresolved. A file
that is refused names why.
"""
from __future__ import annotations

import pytest
from differential.corpus import CORPUS, corpus_files

from reader.config.load import load_deployment
from reader.errors import ReaderError


# file -> (form, model, {dest: value}, gpu, gpu_count, unresolved placeholders)
LOADS = {
    "aibrix_deepseek-r1_rayclusterfleet_tp16.yaml": (
        "kubernetes", "deepseek-ai/DeepSeek-R1", {"tensor_parallel_size": 16, "distributed_executor_backend": "ray"},
        None, 16, []),  # args inside one `bash -lc` string; 8 GPUs on the head + 1 worker x 8
    "docker_dagnaputra_qwen2.5-7b.sh": (
        "docker-run", "Qwen/Qwen2.5-7B-Instruct", {"max_model_len": 1024, "gpu_memory_utilization": 0.7}, None, None,
        []),  # underscore flags; --gpus all gives no count
    "docker_dockerapps_deepseek-v3_no_tp.ps1": ("docker-run", "deepseek-ai/DeepSeek-V3", {"trust_remote_code": True},
                                                None, None, []),
    "docker_openreinforcedagent_bnb_v0.7.2.sh": (
        "docker-run", "/workspace/vllm-models/vllm-0", {"quantization": "bitsandbytes", "max_model_len": 8192},
        None, 1, []),  # --gpus='"device=0"'
    "eks_ai-on-eks_llama4-scout_lws_tp4_pp2_g6.yaml": (
        "helm-ai-on-eks", "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        {"tensor_parallel_size": 4, "pipeline_parallel_size": 2, "max_num_seqs": 1}, "L4", None, []),
    "gke_gemma-3-27b-it_2xA100-40gb_deployment.yaml": (
        "kubernetes", "google/gemma-3-27b-it", {"tensor_parallel_size": 2, "max_num_seqs": 4},
        "A100-40GB-SXM", 2, []),  # --model=$(MODEL_ID) expanded from the container env, as Kubernetes does
    "issue_gpustack-2259_gemma-3-27b_tp3.sh": (
        "shell", "/root/workspace/d19ndanhri0c73dr6i5g/cache/model_scope/LLM-Research/gemma-3-27b-it",
        {"tensor_parallel_size": 3, "max_model_len": 8192}, None, None, []),
    "issue_qwen-295_qwen1.5-7b-chat_default_maxlen.sh": ("shell", "/models--Qwen--Qwen1.5-7B-Chat", {}, None, None, []),
    "issue_recipes-pr12_qwen3-coder-480b-fp8_h20_dp8_kv_too_small.sh": (
        "shell", "/tmp/model/Qwen3-Coder-480B-A35B-Instruct-FP8",
        {"data_parallel_size": 8, "enable_expert_parallel": True}, None, None, []),  # first of two attempts
    "issue_vllm-10439_qwen2.5-0.5b_docker_v0.6.4.sh": (
        "shell", "/storage-800GB/models/Qwen2.5-0.5B-Instruct", {"gpu_memory_utilization": 0.4, "max_model_len": 512},
        None, None, []),  # args come from an env-file style VLLM_ARGS line
    "issue_vllm-14117_deepseek-r1_tp8_pp2_mtp.sh": (
        "shell", "/vllm-workspace/DeepSeek-R1/",
        {"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "num_speculative_tokens": 1}, None, None, []),
    "issue_vllm-17431_qwen3-8b_a800_v1_low_gpu_util.sh": (
        "shell", "/root/yjpzmodel/basemodel/Qwen3-8B", {"gpu_memory_utilization": 0.4}, None, None, []),
    "issue_vllm-27508_gpt-oss-120b_h100_tp1.sh": (
        "shell", "openai/gpt-oss-120b", {"gpu_memory_utilization": 0.95, "max_num_batched_tokens": 1024}, None, None,
        []),
    "issue_vllm-34076_qwen3-coder-30b-fp8_pp2_heterogeneous.sh": (
        "shell", "./Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8",
        {"pipeline_parallel_size": 2, "enable_chunked_prefill": True}, None, None, []),
    "issue_vllm-4358_mixtral-awq_spec_ray_fp8kv.sh": (
        "shell", "casperhansen/mixtral-instruct-awq",
        {"tensor_parallel_size": 4, "kv_cache_dtype": "fp8", "speculative_model": "mistralai/Mistral-7B-Instruct-v0.2",
         "num_speculative_tokens": 3}, None, None, []),
    "issue_vllm-4429_deepseek-coder-33b_2xL40.sh": (
        "shell", "/models/deepseek-coder-33b-instruct", {"tensor_parallel_size": 2, "dtype": "float16"}, None, None,
        []),
    "koyeb_example-vllm_llama3.1-8b_revision-expansion.Dockerfile": (
        "dockerfile", "meta-llama/Meta-Llama-3.1-8B-Instruct", {}, None, None, []),  # ${REVISION:+...}: REVISION unset
    "kserve_helm-vllm-kserve_values_modelcar-granite-3.3-2b.yaml": (
        "kubernetes", "quay.io/redhat-ai-services/granite-3.3-2b-instruct", {"port": 8080}, None, None,
        []),  # the runtime's --model=/mnt/models serves the chart's model.uri, a model car named by its tag
    "kserve_llmisvc_gemma3-4b_ngram_a10.yaml": (
        "kserve-llminferenceservice", "google/gemma-3-4b-it",
        {"speculative_config": {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 5,
                                "prompt_lookup_min": 2}}, None, 1, []),
    "kserve_llmisvc_qwen3-32b-fp8_eagle3_h100.yaml": (
        "kserve-llminferenceservice", "RedHatAI/Qwen3-32B-FP8-dynamic", {"tensor_parallel_size": 2}, None, 2, []),
    "llmd_pd-disagg_gpt-oss-120b_patch-decode.yaml": (
        "kubernetes", "openai/gpt-oss-120b", {"tensor_parallel_size": 4, "block_size": 128,
                                              "disable_hybrid_kv_cache_manager": False}, None, 4, []),
    "llmd_wide-ep-lws_decode_leaderworkerset.yaml": (
        "kubernetes", "deepseek-ai/DeepSeek-R1-0528",
        {"enable_expert_parallel": True, "data_parallel_size": 16, "data_parallel_size_local": 8,
         "data_parallel_start_rank": 0}, None, 16, []),  # LWS_GROUP_SIZE and the leader's address: the controller's
    "makefile_tiered-kv-cache_llama3.1-8b_uv-run.Makefile": (
        "makefile", "meta-llama/Meta-Llama-3.1-8B-Instruct",
        {"max_model_len": 8192, "gpu_memory_utilization": 0.9, "enforce_eager": True}, None, None,
        []),  # `uv run --env-file .env vllm serve ...`: found behind the wrapper
    "nvidia-dynamo_vllm_disagg_dynamographdeployment.yaml": ("kubernetes", "Qwen/Qwen3-0.6B", {}, None, 1, []),
    # `--compilation-config 3`: from 0.9.2 vLLM's parser wants a JSON object there, so the release refuses the launch
    # (VR122, a finding); the flag is kept with the refusal, not read as a level
    "prodstack_gie_gpu-deployment.yaml": (
        "kubernetes", "meta-llama/Llama-3.2-1B-Instruct", {"tensor_parallel_size": 1, "max_num_seqs": 1024}, None, 1,
        []),
    "prodstack_multi-round-qa_model.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.1-8B-Instruct",
        {"enable_chunked_prefill": False, "enable_prefix_caching": False, "max_model_len": 4096}, None, 1, []),
    "prodstack_values-02-basic-config.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.1-8B-Instruct",
        {"gpu_memory_utilization": 0.8, "dtype": "bfloat16"}, None, 1, []),
    "prodstack_values-05-cpu-offloading.yaml": (
        "helm-production-stack", "mistralai/Mistral-7B-Instruct-v0.2",
        {"max_model_len": 32000, "enable_prefix_caching": False}, None, 1, []),  # the chart's default --no-enable-...
    "prodstack_values-15b-pipeline-parallel-ray.yaml": (
        "helm-production-stack", "distilbert/distilgpt2", {"pipeline_parallel_size": 2}, None, 2, []),  # Ray head + worker
    "prodstack_values-16-disagg-prefill.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.1-8B-Instruct", {"enable_prefix_caching": True}, None, None, []),
    "prodstack_values-25-v100-tp2.yaml": (
        "helm-production-stack", "Qwen/Qwen2.5-7B-Instruct", {"dtype": "half", "enforce_eager": True}, None, 2, []),
    "recipes_deepseek-r1_8xh200_tp8_ep.sh": (
        "shell", "deepseek-ai/DeepSeek-R1-0528", {"tensor_parallel_size": 8, "enable_expert_parallel": True}, None,
        None, []),
    "recipes_gpt-oss-120b_8xh100_eval.sh": (
        "shell", "openai/gpt-oss-120b", {"tensor_parallel_size": 8, "max_num_batched_tokens": 10240,
                                         "enable_prefix_caching": False}, None, None, []),
    "recipes_gpt-oss-120b_h100_tp1_oom_workaround.sh": (
        "shell", "openai/gpt-oss-120b", {"max_num_batched_tokens": 1024}, None, None, []),
    "recipes_gpt-oss-120b_mi300x_rocm.sh": (
        "shell", "openai/gpt-oss-120b",
        {"block_size": 64, "compilation_config": {"pass_config": {"fuse_rope_kvcache": "True"},
                                                  "use_inductor_graph_partition": "True"}}, None, None, []),
    "recipes_gpt-oss_blackwell.yaml": (
        "vllm-config-yaml", None, {"kv_cache_dtype": "fp8", "enable_prefix_caching": False,
                                   "max_cudagraph_capture_size": 2048}, None, None, []),
    "recipes_gpt-oss_eagle3_hopper.yaml": (
        "vllm-config-yaml", None, {"speculative_config": {"model": "nvidia/gpt-oss-120b-Eagle3-v3",
                                                          "num_speculative_tokens": 7, "method": "eagle3",
                                                          "draft_tensor_parallel_size": 1}}, None, None, []),
    "recipes_kimi-k2-thinking_tp8_dcp8.sh": (
        "shell", "moonshotai/Kimi-K2-Thinking", {"decode_context_parallel_size": 8}, None, None, []),
    "recipes_llama3.3_hopper.yaml": (
        "vllm-config-yaml", None, {"kv_cache_dtype": "fp8", "async_scheduling": True}, None, None, []),
    "recipes_llama4_blackwell.yaml": (
        "vllm-config-yaml", None, {"compilation_config": {"pass_config": {"fuse_allreduce_rms": True,
                                                                          "eliminate_noops": True}}}, None, None, []),
    "recipes_qwen3-coder-480b_fp8_dp8_ep.sh": (
        "shell", "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", {"data_parallel_size": 8, "max_model_len": 131072}, None,
        None, []),
    "recipes_qwen3-next_mtp.sh": (
        "shell", "Qwen/Qwen3-Next-80B-A3B-Instruct",
        {"speculative_config": {"method": "qwen3_next_mtp", "num_speculative_tokens": 2},
         "enable_chunked_prefill": False}, None, None, []),
    "recipes_qwen3.8-27b_nvfp4_2x5090.sh": (
        "shell", "unsloth/Qwen3.8-27B-NVFP4", {"max_model_len": 262144, "kv_cache_dtype": "fp8"}, None, None, []),
    "skypilot_serve-openai-api_llama2-7b_L4.sky.yaml": (
        "skypilot", "meta-llama/Llama-2-7b-chat-hf", {"tokenizer": "hf-internal-testing/llama-tokenizer"}, "L4", 1, []),
    "skypilot_vllm-multinode_llama4-maverick_tp8_pp2.sky.yaml": (
        "skypilot", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
        {"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "max_model_len": 32768}, "H100-SXM", 16, []),
    "vllm_docs_serve_args_config.yaml": (
        "vllm-config-yaml", "meta-llama/Llama-3.1-8B-Instruct", {"port": 6379, "uvicorn_log_level": "info"}, None,
        None, []),
    "vllm_perf-benchmarks_serving-tests-rocm.json": (
        "vllm-benchmark-json", "meta-llama/Llama-3.1-8B-Instruct", {"dtype": "bfloat16"}, None, None, []),
    "vllm_perf-benchmarks_serving-tests.json": (
        "vllm-benchmark-json", "meta-llama/Meta-Llama-3.1-8B-Instruct",
        {"swap_space": 16.0, "load_format": "dummy"}, None, None, []),
    # grown corpus (issue 23): public launch files found through the search tools
    "aibrix_brixbench_dynamo_qwen3-32b_4p8d.yaml": (
        "kubernetes", "/models/Qwen3-32B",
        {"tensor_parallel_size": 4, "max_model_len": 40960, "gpu_memory_utilization": 0.9}, None, 4, []),
    "aibrix_brixbench_qwen3-8b_pd-1p1d-tp2.yaml": (
        "kubernetes", "/models/Qwen3-8B",
        {"tensor_parallel_size": 2, "max_model_len": 1024, "gpu_memory_utilization": 0.2}, None, 2, []),
    "aibrix_brixbench_vllm_qwen3-32b_tp4_replicas2.yaml": (
        "kubernetes", "/models/Qwen3-32B", {"tensor_parallel_size": 4, "max_model_len": 40960}, None, 4, []),
    "aibrix_deepseek-r1_local-nvme.yaml": (
        "kubernetes", "/models/deepseek-r1", {"tensor_parallel_size": 16}, None, 16, []),
    "aibrix_deepseek-r1_tcp.yaml": (
        "kubernetes", "/models/deepseek-r1", {"tensor_parallel_size": 8, "pipeline_parallel_size": 2}, None, 16, []),
    "conda_korgym_deepseek-r1-distill-qwen-32b_pp2_tp4.sh": (
        "shell", "/map-vepfs/models/jiajun/DeepSeek/DeepSeek-R1-Distill-Qwen-32B",
        {"tensor_parallel_size": 4, "pipeline_parallel_size": 2, "max_model_len": 15000}, None, None, []),
    "conda_korgym_llama3.1-8b-instruct.sh": (
        "shell", "/map-vepfs/models/jiajun/Llama3/Meta-Llama-3.1-8B-Instruct",
        {"tensor_parallel_size": 2, "pipeline_parallel_size": 1, "max_model_len": 15000}, None, None, []),
    "conda_korgym_qwen2.5-14b-instruct_tp2.sh": (
        "shell", "/map-vepfs/models/jiajun/Qwen/Qwen2.5-14B-Instruct",
        {"tensor_parallel_size": 2, "pipeline_parallel_size": 1, "max_model_len": 15000}, None, None, []),
    "conda_korgym_qwen2.5-32b.sh": (
        "shell", "/map-vepfs/models/jiajun/Qwen/Qwen2.5-32B",
        {"tensor_parallel_size": 4, "pipeline_parallel_size": 2, "max_model_len": 15000}, None, None, []),
    "conda_korgym_qwen2.5-72b-instruct_pp2_tp4.sh": (
        "shell", "/map-vepfs/models/jiajun/Qwen/Qwen2.5-72B-Instruct",
        {"tensor_parallel_size": 4, "pipeline_parallel_size": 2, "max_model_len": 15000}, None, None, []),
    "docker_rx-labs_llama3-8b-instruct_env-model.sh": (
        "docker-run", "meta-llama/Meta-Llama-3-8B-Instruct", {}, None, None, []),
    "gke_adk-vllm_deploy-llm_l4.yaml": (
        "kubernetes", "meta-llama/Llama-3.1-8B-Instruct", {"tensor_parallel_size": 1, "max_model_len": 32768}, "L4",
        1, []),
    "gke_gemma-2-27b-it_l4.yaml": ("kubernetes", "google/gemma-2-27b-it", {"tensor_parallel_size": 4}, "L4", 4, []),
    "gke_gemma-2-27b_l4.yaml": ("kubernetes", "google/gemma-2-27b", {"tensor_parallel_size": 4}, "L4", 4, []),
    "gke_gemma-2-9b-it_l4.yaml": ("kubernetes", "google/gemma-2-9b-it", {"tensor_parallel_size": 2}, "L4", 2, []),
    "gke_gemma-2-9b_l4.yaml": ("kubernetes", "google/gemma-2-9b", {"tensor_parallel_size": 2}, "L4", 2, []),
    "gke_gemma-3-12b-it_l4.yaml": (
        "kubernetes", "google/gemma-3-12b-it", {"tensor_parallel_size": 2, "max_model_len": 16384, "max_num_seqs": 4},
        "L4", 2, []),
    "gke_gemma-3-27b-it_a100-80gb.yaml": (
        "kubernetes", "google/gemma-3-27b-it", {"tensor_parallel_size": 1, "max_model_len": 32768, "max_num_seqs": 4},
        "A100-80GB-SXM", 1, []),
    "gke_gemma-3-4b-it_l4.yaml": (
        "kubernetes", "google/gemma-3-4b-it", {"tensor_parallel_size": 1, "max_model_len": 32768, "max_num_seqs": 4},
        "L4", 1, []),
    "gke_llama4-maverick-fp8_h100.yaml": (
        "kubernetes", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
        {"tensor_parallel_size": 8, "max_model_len": 524288, "gpu_memory_utilization": 0.9}, "H100-SXM", 8, []),
    "gke_llama4-maverick-instruct_h200.yaml": (
        "kubernetes", "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
        {"tensor_parallel_size": 8, "max_model_len": 131072, "max_num_seqs": 64}, "H200-SXM", 8, []),
    "gke_llama4-scout-instruct_h100.yaml": (
        "kubernetes", "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        {"tensor_parallel_size": 8, "max_model_len": 1310720}, "H100-SXM", 8, []),
    "gke_mix-train-inference_gemma-3-12b-it_l4.yaml": (
        "kubernetes", "google/gemma-3-12b-it", {"tensor_parallel_size": 2, "max_model_len": 16384, "max_num_seqs": 4},
        "L4", 2, []),
    "gke_multihost_deepseek-r1_a3_hdml_local-path.yaml": (
        "kubernetes", "/models/DeepSeek-R1",
        {"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "max_model_len": 4096}, None, 16, []),
    "gke_multihost_deepseek-r1_a3_lws_tp8_pp2.yaml": (
        "kubernetes", "deepseek-ai/DeepSeek-R1",
        {"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "max_model_len": 4096}, "H100-SXM", 16, []),
    "gke_multihost_llama3.1-405b_a3_hdml_local-path.yaml": (
        "kubernetes", "/models/Meta-Llama-3.1-405B-Instruct",
        {"tensor_parallel_size": 8, "pipeline_parallel_size": 2}, None, 16, []),
    "gke_multihost_llama3.1-405b_a3_lws_tp8_pp2.yaml": (
        "kubernetes", "meta-llama/Meta-Llama-3.1-405B-Instruct",
        {"tensor_parallel_size": 8, "pipeline_parallel_size": 2}, "H100-SXM", 16, []),
    "gke_vllm-tpu_llama3.1-70b_v6e.yaml": (
        "kubernetes", "meta-llama/Llama-3.1-70B",
        {"tensor_parallel_size": 8, "max_model_len": 4096, "max_num_seqs": 128}, None, None, []),
    "kserve_llmisvc_gpt-oss_config-default.yaml": (
        "kubernetes", "/mnt/models", {}, None, None, ["$VLLM_ADDITIONAL_ARGS"]),
    "kserve_llmisvc_gpt-oss_prefix-cache.yaml": (
        "kubernetes", "/mnt/models", {}, None, None, ["$VLLM_ADDITIONAL_ARGS"]),
    "kserve_storage_hf_isvc.yaml": ("kserve-inferenceservice", "meta-llama/Llama-2-7b-chat-hf", {}, None, 1, []),
    "kubeai_model_deepseek-r1-mi300x.yaml": (
        "kubeai-model", "deepseek-ai/DeepSeek-R1",
        {"tensor_parallel_size": 8, "max_model_len": 32768, "max_num_seqs": 1024}, "MI300X", 8, []),
    "kubeai_model_gemma-2-9b-it-fp8-l4.yaml": (
        "kubeai-model", "neuralmagic/gemma-2-9b-it-FP8",
        {"max_model_len": 4096, "max_num_seqs": 256, "max_num_batched_tokens": 4096}, "L4", 1, []),
    "kubeai_model_llama-3.1-405b-instruct-fp8-a100-80b.yaml": (
        "kubeai-model", "neuralmagic/Meta-Llama-3.1-405B-Instruct-FP8",
        {"tensor_parallel_size": 8, "max_model_len": 65536, "max_num_seqs": 128}, "A100-80GB-SXM", 8, []),
    "kubeai_model_llama-3.1-405b-instruct-fp8-h100.yaml": (
        "kubeai-model", "neuralmagic/Meta-Llama-3.1-405B-Instruct-FP8",
        {"tensor_parallel_size": 8, "max_model_len": 65536, "max_num_seqs": 1024}, "H100-SXM", 8, []),
    "kubeai_model_llama-3.1-405b-instruct-fp8-mi300x.yaml": (
        "kubeai-model", "amd/Llama-3.1-405B-Instruct-FP8-KV",
        {"tensor_parallel_size": 8, "max_model_len": 120000, "max_num_seqs": 1024}, "MI300X", 8, []),
    "kubeai_model_llama-3.1-70b-instruct-awq-int4-gh200.yaml": (
        "kubeai-model", "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4",
        {"max_model_len": 16384, "max_num_batched_tokens": 16384, "enable_prefix_caching": True}, "GH200", 1, []),
    "kubeai_model_llama-3.1-70b-instruct-fp8-1-h100.yaml": (
        "kubeai-model", "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8",
        {"max_model_len": 16384, "max_num_batched_tokens": 16384, "gpu_memory_utilization": 0.95}, "H100-SXM", 1, []),
    "kubeai_model_llama-3.1-70b-instruct-fp8-gh200.yaml": (
        "kubeai-model", "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8",
        {"max_model_len": 32768, "max_num_seqs": 1024, "max_num_batched_tokens": 32768}, "GH200", 1, []),
    "kubeai_model_llama-3.1-70b-instruct-fp8-h100.yaml": (
        "kubeai-model", "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8",
        {"tensor_parallel_size": 2, "max_model_len": 65536, "max_num_seqs": 1024}, "H100-SXM", 2, []),
    "kubeai_model_llama-3.1-70b-instruct-fp8-l4.yaml": (
        "kubeai-model", "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8",
        {"tensor_parallel_size": 2, "pipeline_parallel_size": 4, "max_model_len": 32768}, "L4", 8, []),
    "kubeai_model_llama-3.1-70b-instruct-fp8-mi300x.yaml": (
        "kubeai-model", "amd/Llama-3.1-70B-Instruct-FP8-KV",
        {"max_model_len": 120000, "max_num_seqs": 1024, "max_num_batched_tokens": 120000}, "MI300X", 1, []),
    "kubeai_model_llama-3.1-8b-instruct-cpu.yaml": (
        "kubeai-model", "meta-llama/Meta-Llama-3.1-8B-Instruct",
        # resourceProfile cpu:6 is KubeAI's CPU profile: six units of CPU and memory, no GPU
        {"max_model_len": 32768, "max_num_batched_tokens": 32768}, None, None, []),
    "kubeai_model_llama-3.1-8b-instruct-fp8-l4.yaml": (
        "kubeai-model", "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8",
        {"max_model_len": 16384, "max_num_batched_tokens": 16384, "gpu_memory_utilization": 0.9}, "L4", 1, []),
    "kubeai_model_llama-3.1-8b-instruct-tpu.yaml": (
        "kubeai-model", "meta-llama/Meta-Llama-3.1-8B-Instruct", {"tensor_parallel_size": 4, "max_model_len": 8192},
        "google-tpu-v5e-2x2", 4, []),
    "kubeai_model_llama-3.1-supernova-lite-l4.yaml": (
        "kubeai-model", "arcee-ai/Llama-3.1-SuperNova-Lite",
        {"max_model_len": 2048, "max_num_seqs": 1, "max_num_batched_tokens": 2048}, "L4", 1, []),
    "kubeai_model_llama-3.3-70b-instruct-bf16-gh200.yaml": (
        "kubeai-model", "meta-llama/Llama-3.3-70B-Instruct",
        {"max_model_len": 32768, "max_num_batched_tokens": 32768, "gpu_memory_utilization": 0.98}, "GH200", 1, []),
    "kubeai_model_llama-4-maverick-430k-h100.yaml": (
        "kubeai-model", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
        {"tensor_parallel_size": 8, "max_model_len": 430000, "enable_prefix_caching": True}, "H100-SXM", 8, []),
    "kubeai_model_mistral-small-24b-instruct-h100.yaml": (
        "kubeai-model", "mistralai/Mistral-Small-24B-Instruct-2501",
        {"max_num_batched_tokens": 65536, "gpu_memory_utilization": 0.9, "kv_cache_dtype": "fp8"}, "H100-SXM", 1, []),
    "kubeai_model_qwen2.5-7b-instruct-l4.yaml": (
        "kubeai-model", "Qwen/Qwen2.5-7B-Instruct",
        {"max_model_len": 8192, "max_num_seqs": 256, "max_num_batched_tokens": 8192}, "L4", 1, []),
    "lws_docs_tas.md": (
        "kubernetes", "deepseek-ai/DeepSeek-R1",
        {"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "max_model_len": 4096}, None, 16, []),
    "lws_vllm_gpu.yaml": (
        "kubernetes", "meta-llama/Llama-3.1-405B-Instruct", {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},
        None, 16, []),
    "lws_vllm_tpu.yaml": (
        "kubernetes", "meta-llama/Llama-3.3-70B-Instruct", {"tensor_parallel_size": 16}, None, None, []),
    "makefile_vini_nous-llama3-8b.Makefile": (
        "makefile", "NousResearch/Meta-Llama-3-8B-Instruct", {"dtype": "auto"}, None, None, []),
    "nohup_multiagentsdebate_qwen2.5-14b_tp4.sh": (
        "shell", "Qwen/Qwen2.5-14B-Instruct",
        {"tensor_parallel_size": 4, "max_model_len": 16384, "gpu_memory_utilization": 0.9}, None, None, []),
    "prodstack_aws_spec_llama3.1-8b.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.1-8B", {"enable_prefix_caching": False}, None, 1, []),
    "prodstack_gcp_spec_basic.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.1-8B-Instruct",
        {"max_model_len": 4096, "gpu_memory_utilization": 0.8, "dtype": "bfloat16"}, None, 1, []),
    "prodstack_gke_offload-kv-local-disk_llama3.3-70b.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.3-70B-Instruct",
        {"tensor_parallel_size": 8, "max_num_batched_tokens": 2048, "gpu_memory_utilization": 0.9}, None, 8, []),
    "prodstack_oci_spec.yaml": (
        "helm-production-stack", "openai/gpt-oss-20b", {"enable_prefix_caching": False}, None, 1, []),
    "prodstack_terraform-eks_cpu-tinyllama.tpl.yaml": (
        "helm-production-stack", "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
        {"dtype": "bfloat16", "enable_prefix_caching": False}, None, 0, []),
    "prodstack_values-03-match-pv_llama3.1-8b.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.1-8B-Instruct",
        {"max_model_len": 4096, "enable_prefix_caching": False}, None, 1, []),
    "prodstack_values-04-multiple-models.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.1-8B-Instruct",
        {"max_model_len": 4096, "max_num_seqs": 32, "gpu_memory_utilization": 0.8}, None, 1, []),
    "prodstack_values-06-shared-storage_mistral-7b.yaml": (
        "helm-production-stack", "mistralai/Mistral-7B-Instruct-v0.2",
        {"max_model_len": 16384, "enable_prefix_caching": True}, None, 1, []),
    "prodstack_values-09-lora-helm_llama3.1-8b.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.1-8B-Instruct",
        {"max_model_len": 4096, "gpu_memory_utilization": 0.8, "dtype": "bfloat16"}, None, 1, []),
    "prodstack_values-13-tool-enabled_llama3.1-8b.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.1-8B-Instruct",
        {"tensor_parallel_size": 1, "max_model_len": 4096, "dtype": "bfloat16"}, None, 1, []),
    "prodstack_values-14-vllm-v1_llama3.1-8b.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.1-8B-Instruct",
        {"max_model_len": 4096, "gpu_memory_utilization": 0.8, "dtype": "bfloat16"}, None, 1, []),
    "prodstack_values-17-kv-aware_gpt-oss-20b.yaml": (
        "helm-production-stack", "openai/gpt-oss-20b",
        {"max_model_len": 8000, "gpu_memory_utilization": 0.9, "enable_prefix_caching": True}, None, 1, []),
    "prodstack_values-18-prefix-aware.yaml": (
        "helm-production-stack", "meta-llama/Llama-3.2-1B-Instruct",
        {"max_model_len": 16384, "enable_prefix_caching": True}, None, 1, []),
    "prodstack_values-23-semantic-router_qwen3-8b.yaml": (
        "helm-production-stack", "Qwen/Qwen3-8B", {"enable_prefix_caching": False}, None, 1, []),
    "prodstack_values-25-v100-single_qwen2.5-0.5b.yaml": (
        "helm-production-stack", "Qwen/Qwen2.5-0.5B-Instruct",
        {"tensor_parallel_size": 1, "max_model_len": 16384, "gpu_memory_utilization": 0.9}, None, 1, []),
    "prodstack_values-25-v100-tp4_qwen2.5-14b.yaml": (
        "helm-production-stack", "Qwen/Qwen2.5-14B-Instruct",
        {"tensor_parallel_size": 4, "max_model_len": 8192, "gpu_memory_utilization": 0.9}, None, 4, []),
    "recipes_md_deepseek_deepseek-v3.md": (
        "shell", "deepseek-ai/DeepSeek-R1-0528", {"tensor_parallel_size": 8, "enable_expert_parallel": True}, None,
        None, []),
    "recipes_md_deepseek_deepseek-v3_1.md": (
        "shell", "deepseek-ai/DeepSeek-V3.1", {"tensor_parallel_size": 8, "enable_expert_parallel": True}, None, None,
        []),
    "recipes_md_deepseek_deepseek-v3_2.md": (
        "shell", "deepseek-ai/DeepSeek-V3.2", {"tensor_parallel_size": 8}, None, None, []),
    "recipes_md_llama_llama3.3-70b.md": (
        "vllm-config-yaml", None,
        {"max_num_batched_tokens": 8192, "kv_cache_dtype": "fp8", "enable_prefix_caching": False}, None, None, []),
    "recipes_md_llama_llama4-scout.md": (
        "vllm-config-yaml", None,
        {"max_num_batched_tokens": 8192, "kv_cache_dtype": "fp8", "enable_prefix_caching": False}, None, None, []),
    "recipes_md_openai_gpt-oss.md": ("docker-run", "openai/gpt-oss-20b", {}, None, None, []),
    "recipes_md_qwen_qwen3-coder-480b-a35b.md": (
        "shell", "Qwen/Qwen3-Coder-480B-A35B-Instruct",
        {"tensor_parallel_size": 8, "max_model_len": 32000, "enable_expert_parallel": True}, None, None, []),
    "recipes_md_qwen_qwen3-vl.md": (
        "shell", "Qwen/Qwen3-VL-235B-A22B-Instruct-FP8", {"tensor_parallel_size": 8, "enable_expert_parallel": True},
        None, None, []),
    "recipes_md_qwen_qwen3.5.md": (
        "shell", "Qwen/Qwen3.6-35B-A3B", {"tensor_parallel_size": 8, "max_model_len": 262144}, None, None, []),
    "recipes_md_qwen_qwen3.md": (
        "shell", "Qwen/Qwen3-235B-A22B",
        {"tensor_parallel_size": 4, "max_model_len": 32768, "max_num_batched_tokens": 32768}, None, None, []),
    "shell_curator_bash-c-cmd_qwen2.5-32b_tp4.sh": (
        "shell", "Qwen/Qwen2.5-32B-Instruct",
        {"tensor_parallel_size": 4, "max_model_len": 16384, "max_num_seqs": 100}, None, None, []),
    "shell_enigmatom_gemma27.sh": (
        "shell",
        "/scratch_tmp/prj/inf_llmcache/hf_cache/models--google--gemma-2-27b-it/snapshots/aaf20e6b9f4c0fcf043f6fb2a2068419086d77b0",
        {"tensor_parallel_size": None, "max_model_len": 8192, "dtype": "bfloat16"}, None, None, ["$WORLDSIZE"]),
    "shell_enigmatom_llama3-70b.sh": (
        "shell",
        "/scratch_tmp/prj/inf_llmcache/hf_cache/models--unsloth--Llama-3.3-70B-Instruct-bnb-4bit/snapshots/74be54198eaf4f3c7fba1f4e9fa63725a810c7eb",
        {"pipeline_parallel_size": None, "max_model_len": 8192, "gpu_memory_utilization": 0.8}, None, None,
        ["$WORLDSIZE"]),
    "shell_enigmatom_llama3.1-8b_hf-snapshot_nvidia-smi-tp.sh": (
        "shell",
        "/scratch_tmp/prj/charnu/seacow_hf_cache/models--meta-llama--Meta-Llama-3.1-8B-Instruct/snapshots/0e9e39f249a16976918f6564b8830bc894c89659",
        {"tensor_parallel_size": None, "dtype": "bfloat16"}, None, None, ["$WORLDSIZE"]),
    "shell_enigmatom_mixtral.sh": (
        "shell", "mistralai/Mixtral-8x7B-Instruct-v0.1", {"tensor_parallel_size": 2, "dtype": "float16"}, None, None,
        []),
    "shell_enigmatom_qwen14.sh": (
        "shell", "Qwen/Qwen2.5-14B-Instruct", {"tensor_parallel_size": 1, "max_model_len": 8192, "dtype": "bfloat16"},
        None, None, []),
    "shell_gpt-oss-alignment_gpt-oss-20b_tp8.sh": (
        "shell", "openai/gpt-oss-20b", {"tensor_parallel_size": 8}, None, None, []),
    "shell_instance-scripts_gpt-oss-120b.sh": (
        "shell", "openai/gpt-oss-120b", {"max_model_len": 32768, "max_num_seqs": 400, "gpu_memory_utilization": 0.95},
        None, None, []),
    "shell_instance-scripts_gpt-oss-20b_trailing-backslash.sh": (
        "shell", "openai/gpt-oss-20b", {"max_num_seqs": 128, "gpu_memory_utilization": 0.2}, None, None, []),
    "shell_instance-scripts_qwen.sh": (
        "shell", "Qwen/Qwen2.5-7B-Instruct", {"max_num_seqs": 256, "gpu_memory_utilization": 0.95}, None, None, []),
    "shell_synth-data_llama3.1-405b-fp8_tp8.sh": (
        "shell", "meta-llama/Llama-3.1-405B-Instruct-FP8", {"tensor_parallel_size": 8, "gpu_memory_utilization": 1.0},
        None, None, []),
    "shell_t0-1_isambard_gemma3_tools.sh": (
        "shell", "google/gemma-3-27b-it", {"tensor_parallel_size": 2, "max_model_len": 131072}, None, None, []),
    "shell_t0-1_isambard_qwen_tools.sh": (
        "shell", "Qwen/Qwen2.5-32B-Instruct", {"tensor_parallel_size": 2, "max_model_len": 131072}, None, None, []),
    "shell_t0-1_spark_gpt-oss-20b_tools.sh": (
        "shell", "openai/gpt-oss-20b",
        {"tensor_parallel_size": 1, "max_model_len": 131072, "gpu_memory_utilization": 0.5}, None, None, []),
    "shell_vllm-tutorial_qwen3-8b_launch.sh": (
        "shell", "models/Qwen3-8B", {"tensor_parallel_size": 1, "max_model_len": 8192, "max_num_seqs": 64}, None,
        None, []),
    "shell_whucs_qwen3-8b-awq_local-path.sh": (
        "shell", "/root/autodl-tmp/Qwen/Qwen3-8B-AWQ", {"max_model_len": 8192, "quantization": "awq"}, None, None, []),
    "slurm_claireg808_deepseek-r1-distill-qwen-32b.sh": (
        "shell", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", {"max_model_len": 35904}, None, None, []),
    "uv-run_gemma3serving_gemma-3-27b-w4a16.sh": (
        "shell", "./gemma-3-27b-it-W4A16",
        {"max_model_len": 4096, "gpu_memory_utilization": 0.9, "quantization": "compressed-tensors"}, None, None, []),
    "uv-run_qwen-hotaisle_qwen3-0.6b_fp8kv.sh": (
        "shell", "Qwen/Qwen3-0.6B",
        {"tensor_parallel_size": 1, "max_model_len": 32768, "max_num_batched_tokens": 8192}, None, None, []),
    "uv-run_qwen-hotaisle_qwen3.5-397b-fp8_tp4.sh": (
        "shell", "Qwen/Qwen3.5-397B-A17B-FP8",
        {"tensor_parallel_size": 4, "max_model_len": 262144, "max_num_batched_tokens": 8192}, None, None, []),
}

# file -> words the refusal must contain (and why the refusal is right)
REFUSED = {
    # A KAITO preset holds no vLLM arguments: KAITO generates the command.
    "issue_kaito-2132_mistral-small-4-119b_workspace.yaml": ["KAITO", "preset", "no vLLM arguments"],
    # grown corpus (issue 23): public launch files found through the search tools
    "eks_ray-vllm-deepseek.yml": [
        "import_path vllm_serve:deployment, line 185", "does not run", "`vllm serve"],
    "gke_rayserve_tpu-v6e-singlehost_rayservice.yaml": [
        "import_path ai-ml.gke-ray.rayserve.llm.tpu.serve_tpu:model", "does not run", "`vllm serve"],
}


def corpus_names() -> list[str]:
    return [p.name for p in corpus_files()]


def test_the_table_covers_every_corpus_file():
    assert sorted(set(LOADS) | set(REFUSED)) == corpus_names()
    assert len(corpus_names()) == 152


@pytest.mark.parametrize("name", sorted(LOADS))
def test_corpus_file_loads_as_vllm_would_read_it(name):
    form, model, flags, gpu, gpu_count, unresolved = LOADS[name]
    d = load_deployment(str(CORPUS / name))
    assert d.form == form
    assert d.model == model
    for dest, value in flags.items():
        assert dest in d.flags, f"{dest} not read"
        assert d.flags[dest].value == value, f"{dest}: {d.flags[dest].value!r} != {value!r}"
        assert d.flags[dest].loc is not None and d.flags[dest].loc.line, f"{dest} has no line"
    assert d.context.gpu == gpu
    assert d.context.gpu_count == gpu_count
    assert sorted(p.text for p in d.placeholders) == sorted(unresolved)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_corpus_file_refused_with_its_reason(name):
    with pytest.raises(ReaderError) as err:
        load_deployment(str(CORPUS / name))
    text = err.value.render()
    for word in REFUSED[name]:
        assert word in text
    assert name in text  # names the file


def test_flag_lines_point_at_the_flag_in_the_file():
    d = load_deployment(str(CORPUS / "issue_vllm-14117_deepseek-r1_tp8_pp2_mtp.sh"))
    lines = (CORPUS / "issue_vllm-14117_deepseek-r1_tp8_pp2_mtp.sh").read_text().splitlines()
    for dest in ("tensor_parallel_size", "max_num_seqs", "num_speculative_tokens"):
        line = lines[d.flags[dest].loc.line - 1]
        assert "--" + dest.replace("_", "-") in line


def test_a_script_with_several_launches_reads_the_first_and_says_so():
    d = load_deployment(str(CORPUS / "recipes_deepseek-r1_8xh200_tp8_ep.sh"))
    assert "2 vLLM launches" in d.notes[0].message and "--pick" in d.notes[0].message
    from reader.config.context import LoadOptions
    second = load_deployment(str(CORPUS / "recipes_deepseek-r1_8xh200_tp8_ep.sh"), LoadOptions(pick=2))
    assert second.flags["data_parallel_size"].value == 8
    assert "tensor_parallel_size" not in second.flags


def test_image_tag_chooses_the_version():
    assert load_deployment(str(CORPUS / "docker_dockerapps_deepseek-v3_no_tp.ps1")).vllm_version_tag == "0.6.6"
    assert load_deployment(str(CORPUS / "prodstack_values-25-v100-tp2.yaml")).vllm_version_tag == "0.8.5"
    assert load_deployment(str(CORPUS / "aibrix_deepseek-r1_rayclusterfleet_tp16.yaml")).vllm_version_tag == "0.7.3"
    # Vertex's pytorch-vllm-serve:20250312_0916_RC01 names a build date: the release out by then
    assert load_deployment(str(CORPUS / "gke_gemma-3-27b-it_2xA100-40gb_deployment.yaml")).vllm_version_tag == "0.7.3"


def test_a_flag_the_version_lacks_is_kept_and_marked():
    d = load_deployment(str(CORPUS / "vllm_perf-benchmarks_serving-tests.json"))
    swap = d.flags["swap_space"]
    assert not swap.in_version and swap.versions_with_flag == "0.6.3 to 0.17.1"
    assert "swap_space" not in d.serving.model_dump(exclude_none=True)
