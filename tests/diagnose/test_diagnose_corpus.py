"""What `vllm-reader diagnose` makes of every real public config in fixtures/corpus, offline.

Only the shipped catalog and an empty Hugging Face cache answer (online, the Hub would also resolve the models the
catalog lacks). Outcomes: "full" (a diagnosis from a simulation), "no-start" ("vLLM would not start", from a rule
error or the capacity model), "exit-2" (bad input, one paragraph). Options are only what the file lacks and vLLM
would need too (the model, for a --config YAML that leaves it to the command line). The GPU is never given: a file
that does not name it is diagnosed on the assumed H100-SXM, loudly. The workload is short (60 chat requests), so
the whole table runs in seconds. `done` is the issue's measure: a full diagnosis, or a correct would-not-start
verdict; at least 95% of the corpus must be done, and every refusal must say what the user has to add and why
no tool could know it (REFUSALS).
"""
from __future__ import annotations

import pytest
import yaml
from differential.corpus import CORPUS, corpus_files

from reader.config.from_cli import load_and_resolve, load_options
from reader.diagnose.run import diagnose
from reader.render.report import render_diagnosis
from reader.errors import ReaderError

INDEX = yaml.safe_load((CORPUS / "INDEX.yaml").read_text(encoding="utf-8"))
WORKLOAD = "{preset: chat, num_requests: 60}"

# file -> (outcome, options, words of the verdict or the error, done, why; what a better answer still lacks)
ASSUMED_H100 = "on the assumed H100-SXM (the file names no GPU)"
DIAGNOSE = {
    "aibrix_brixbench_dynamo_qwen3-32b_4p8d.yaml": ("full", {}, "", True, "model inferred from /models/Qwen3-32B"),
    "aibrix_brixbench_qwen3-8b_pd-1p1d-tp2.yaml": ("full", {}, "", True, "the StormService's first role (prefill)"),
    "aibrix_brixbench_vllm_qwen3-32b_tp4_replicas2.yaml": (
        "full", {}, "", True, "2 replicas read; figures are one replica's"),
    "aibrix_deepseek-r1_local-nvme.yaml": (
        "full", {}, "", True, "TP 8 x PP 2 through Ray, model from /models/deepseek-r1"),
    "aibrix_deepseek-r1_rayclusterfleet_tp16.yaml": ("full", {}, "", True, "TP16 over two 8-GPU nodes"),
    "aibrix_deepseek-r1_tcp.yaml": ("full", {}, "", True, "as above, over TCP instead of RDMA"),
    "conda_korgym_deepseek-r1-distill-qwen-32b_pp2_tp4.sh": (
        "full", {}, "", True, "after `conda activate`; model inferred from the path; underscore flags"),
    "conda_korgym_llama3.1-8b-instruct.sh": ("full", {}, "", True, "the script is named llama_70B but serves the 8B"),
    "conda_korgym_qwen2.5-14b-instruct_tp2.sh": ("full", {}, "", True, ""),
    "conda_korgym_qwen2.5-32b.sh": ("full", {}, "", True, ""),
    "conda_korgym_qwen2.5-72b-instruct_pp2_tp4.sh": ("full", {}, "", True, ""),
    "docker_dagnaputra_qwen2.5-7b.sh": ("full", {}, "", True, ""),
    "docker_dockerapps_deepseek-v3_no_tp.ps1": (
        "no-start", {}, "No available memory", True, "671B FP8 on one GPU, as the corpus notes say"),
    "docker_openreinforcedagent_bnb_v0.7.2.sh": (
        "exit-2", {}, "could not be resolved", False,
        "a local fine-tune at /workspace/vllm-models/vllm-0: no name to infer the model from; the file lacks "
        "which model it is (exit 2 names the path and --model, as it should)"),
    "docker_rx-labs_llama3-8b-instruct_env-model.sh": (
        "full", {}, "", True, "--model $MODEL from the script's own variable"),
    "eks_ai-on-eks_llama4-scout_lws_tp4_pp2_g6.yaml": (
        "no-start", {}, "No available memory", True, "109B BF16 weights exceed 8 x L4 (the corpus notes' case)"),
    "eks_ray-vllm-deepseek.yml": (
        "exit-2", {}, "import_path vllm_serve:deployment", False,
        "the RayService runs the blueprint's own vllm_serve.py, which builds the engine from env vars"),
    "gke_adk-vllm_deploy-llm_l4.yaml": (
        "no-start", {}, "max seq len (32768)", True,
        "vLLM 0.8.5 from the image; Llama-3.1-8B's 15 GiB of BF16 weights on one L4 leave about 2 GiB of KV at 0.9, "
        "less than the 4 GiB one 32768-token request needs (the estimated maximum is 16160)"),
    "gke_gemma-2-27b-it_l4.yaml": ("full", {}, "", True, "TP 4 over L4s"),
    "gke_gemma-2-27b_l4.yaml": ("full", {}, "", True, ""),
    "gke_gemma-2-9b-it_l4.yaml": ("full", {}, "", True, ""),
    "gke_gemma-2-9b_l4.yaml": ("full", {}, "", True, ""),
    "gke_gemma-3-12b-it_l4.yaml": ("full", {}, "", True, "max_num_seqs 4 binds"),
    "gke_gemma-3-27b-it_2xA100-40gb_deployment.yaml": (
        "full", {}, "", True,
        "vLLM 0.7.3 from the Vertex image's build date (20250312; 0.8.0 came out 2025-03-18), said as inferred; "
        "--swap-space still exists there"),
    "gke_gemma-3-27b-it_a100-80gb.yaml": ("full", {}, "", True, "max_num_seqs 4 binds"),
    "gke_gemma-3-4b-it_l4.yaml": ("full", {}, "", True, "max_num_seqs binds"),
    "gke_llama4-maverick-fp8_h100.yaml": (
        "full", {}, "", True, "the Secret's `hf_api_token: {{HF_TOKEN}}` slot no longer hides the Deployment"),
    "gke_llama4-maverick-instruct_h200.yaml": ("full", {}, "", True, "BF16 Maverick over 8 H200s"),
    "gke_llama4-scout-instruct_h100.yaml": ("full", {}, "", True, "as above"),
    "gke_mix-train-inference_gemma-3-12b-it_l4.yaml": ("full", {}, "", True, ""),
    "gke_multihost_deepseek-r1_a3_hdml_local-path.yaml": (
        "full", {}, "", True, "model inferred from /models/DeepSeek-R1; the GPU is not in this variant: H100 assumed"),
    "gke_multihost_deepseek-r1_a3_lws_tp8_pp2.yaml": (
        "full", {}, "", True, "TP 8 x PP 2 over a LeaderWorkerSet of two A3s"),
    "gke_multihost_llama3.1-405b_a3_hdml_local-path.yaml": (
        "full", {}, "", True,
        "model inferred from the Hyperdisk ML path /models/Meta-Llama-3.1-405B-Instruct; GPU not in this variant: H100"
        " assumed"),
    "gke_multihost_llama3.1-405b_a3_lws_tp8_pp2.yaml": ("full", {}, "", True, ""),
    "gke_rayserve_tpu-v6e-singlehost_rayservice.yaml": (
        "exit-2", {}, "import_path ai-ml.gke-ray.rayserve.llm.tpu.serve_tpu:model", False,
        "the engine is built by the sample's own Python (serve_tpu.py) from env vars; the file holds no engine "
        "arguments"),
    "gke_vllm-tpu_llama3.1-70b_v6e.yaml": (
        "full", {}, "", True,
        "a TPU v6e slice, which the GPU tables do not hold: on the assumed H100-SXM (the file names no GPU)"),
    "issue_gpustack-2259_gemma-3-27b_tp3.sh": (
        "no-start", {}, "32 attention heads, which tensor_parallel_size 3 does not divide", True,
        "the real start-up failure; model inferred from the ModelScope folder name"),
    "issue_kaito-2132_mistral-small-4-119b_workspace.yaml": (
        "exit-2", {}, "KAITO", False, "a KAITO preset holds no vLLM arguments (refused with the reason)"),
    "issue_qwen-295_qwen1.5-7b-chat_default_maxlen.sh": (
        "full", {}, "", True, "model inferred from the hub-cache folder name (models--Qwen--Qwen1.5-7B-Chat)"),
    "issue_recipes-pr12_qwen3-coder-480b-fp8_h20_dp8_kv_too_small.sh": (
        "no-start", {}, "No available memory", True,
        f"the real failure was on H20s (KV cache too small); {ASSUMED_H100} the FP8 weights leave no KV memory at "
        "all"),
    "issue_vllm-10439_qwen2.5-0.5b_docker_v0.6.4.sh": ("full", {}, "", True, "model inferred from the path"),
    "issue_vllm-14117_deepseek-r1_tp8_pp2_mtp.sh": (
        "no-start", {}, "replaced by --speculative-config", True,
        "the real start-up failure (PP x MTP at its own release, tests/rules); at 0.33.0 the legacy flags are refused"),
    "issue_vllm-17431_qwen3-8b_a800_v1_low_gpu_util.sh": ("full", {}, "", True, "model inferred from the path"),
    "issue_vllm-27508_gpt-oss-120b_h100_tp1.sh": (
        "no-start", {}, "max seq len (131072)", True, "the real start-up failure (KV cache too small)"),
    "issue_vllm-34076_qwen3-coder-30b-fp8_pp2_heterogeneous.sh": (
        "full", {}, "", True, "model inferred from the path; the two stages' different GPUs are not read (helper 14)"),
    "issue_vllm-4358_mixtral-awq_spec_ray_fp8kv.sh": (
        "no-start", {}, "replaced by --speculative-config", True,
        "refused at the newest release (assumed) for its legacy flags"),
    "issue_vllm-4429_deepseek-coder-33b_2xL40.sh": (
        "full", {}, "", True,
        f"model inferred from the folder name; {ASSUMED_H100} it fits (the real failure was on 2 x L40 at 0.4.1, "
        "which the script does not say)"),
    "koyeb_example-vllm_llama3.1-8b_revision-expansion.Dockerfile": ("full", {}, "", True, ""),
    "kserve_helm-vllm-kserve_values_modelcar-granite-3.3-2b.yaml": (
        "exit-2", {}, "could not be resolved", False,
        "the model car names ibm-granite/granite-3.3-2b-instruct, which is not in the shipped catalog, and the suite "
        "runs offline (exit 2 names the inferred id and --model)"),
    "kserve_llmisvc_gemma3-4b_ngram_a10.yaml": ("full", {}, "", True, ""),
    "kserve_llmisvc_gpt-oss_config-default.yaml": (
        "no-start", {}, "--disable-log-requests was removed in vLLM 0.17.0", True,
        "the LLMInferenceServiceConfig's template passes --disable-log-requests; no release named: refused at the "
        "newest (assumed)"),
    "kserve_llmisvc_gpt-oss_prefix-cache.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True, "as above"),
    "kserve_llmisvc_qwen3-32b-fp8_eagle3_h100.yaml": (
        "full", {}, "", True, ""),
    "kserve_storage_hf_isvc.yaml": (
        "full", {}, "", True, "an hf:// storageUri served by the Hugging Face runtime's vLLM"),
    "kubeai_model_deepseek-r1-mi300x.yaml": (
        "no-start", {}, "does not accept --max-seq-len-to-capture", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so; the flag ended "
        "with 0.10.2"),
    "kubeai_model_gemma-2-9b-it-fp8-l4.yaml": ("full", {}, "", True, "FP8 from the name (VR906)"),
    "kubeai_model_llama-3.1-405b-instruct-fp8-a100-80b.yaml": (
        "no-start", {}, "--num-scheduler-steps (multi-step scheduling) was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_llama-3.1-405b-instruct-fp8-h100.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_llama-3.1-405b-instruct-fp8-mi300x.yaml": (
        "no-start", {}, "does not accept --max-seq-len-to-capture", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_llama-3.1-70b-instruct-awq-int4-gh200.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_llama-3.1-70b-instruct-fp8-1-h100.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_llama-3.1-70b-instruct-fp8-gh200.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so; "
        "--enable-chunked-prefill=false is refused too (VR123)"),
    "kubeai_model_llama-3.1-70b-instruct-fp8-h100.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_llama-3.1-70b-instruct-fp8-l4.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so; and VR123 as "
        "above"),
    "kubeai_model_llama-3.1-70b-instruct-fp8-mi300x.yaml": (
        "no-start", {}, "does not accept --max-seq-len-to-capture", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_llama-3.1-8b-instruct-cpu.yaml": (
        "no-start", {}, "the estimated maximum model length is 32640", True,
        "VLLM_CPU_KVCACHE_SPACE=4 gives exactly one 32768-token request's 4 GiB, less the null block the start-up "
        "check holds back (0.29.0 on): the real CPU build (0.32.0) refuses with the same figures "
        "(fixtures/differential/corpus-vllm-0.32.0.jsonl)"),
    "kubeai_model_llama-3.1-8b-instruct-fp8-l4.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_llama-3.1-8b-instruct-tpu.yaml": (
        "no-start", {}, "--swap-space was removed in vLLM 0.18.0", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_llama-3.1-supernova-lite-l4.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so; the refusal needs"
        " no model (arcee-ai's fine-tune is not in the catalog: VR904)"),
    "kubeai_model_llama-3.3-70b-instruct-bf16-gh200.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_llama-4-maverick-430k-h100.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_mistral-small-24b-instruct-h100.yaml": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the Model names no image (KubeAI's chart picks it): the newest release is assumed, said so"),
    "kubeai_model_qwen2.5-7b-instruct-l4.yaml": ("full", {}, "", True, ""),
    "llmd_pd-disagg_gpt-oss-120b_patch-decode.yaml": ("full", {}, "", True, ""),
    "llmd_wide-ep-lws_decode_leaderworkerset.yaml": (
        "no-start", {}, "max seq len (163840)", True,
        f"DP 16 from $((LWS_GROUP_SIZE * DP_SIZE_LOCAL)) with the controller's group size (2), EP 16 with EPLB's 32 "
        f"redundant experts (18 per GPU); {ASSUMED_H100} about 61 GiB of FP8 weights leave too little KV for "
        "R1's 163840 positions (the guide is for larger GPUs)"),
    "lws_docs_tas.md": ("full", {}, "", True, "the LeaderWorkerSet in the topology-aware scheduling guide"),
    "lws_vllm_gpu.yaml": ("full", {}, "", True, "Llama-3.1-405B, TP 8 x PP 2 over a group of two"),
    "lws_vllm_tpu.yaml": (
        "full", {}, "", True,
        "TPU slices, which the GPU tables do not hold: on the assumed H100-SXM (the file names no GPU)"),
    "makefile_tiered-kv-cache_llama3.1-8b_uv-run.Makefile": ("full", {}, "", True, ""),
    "makefile_vini_nous-llama3-8b.Makefile": (
        "full", {}, "", True, "NousResearch's re-upload read with Meta-Llama-3-8B's shape (VR905)"),
    "nohup_multiagentsdebate_qwen2.5-14b_tp4.sh": ("full", {}, "", True, "behind `nohup ... &`"),
    "nvidia-dynamo_vllm_disagg_dynamographdeployment.yaml": ("full", {}, "", True, ""),
    "prodstack_aws_spec_llama3.1-8b.yaml": ("full", {}, "", True, ""),
    "prodstack_gcp_spec_basic.yaml": ("full", {}, "", True, ""),
    "prodstack_gie_gpu-deployment.yaml": (
        "no-start", {}, "--compilation-config 3 is a bare optimization level", True,
        "vLLM's parser refuses `--compilation-config 3` from 0.9.2 (VR122; the real 0.32.0 and 0.18.0 refuse it)"),
    "prodstack_gke_offload-kv-local-disk_llama3.3-70b.yaml": ("full", {}, "", True, "LMCache offload not modelled"),
    "prodstack_multi-round-qa_model.yaml": ("full", {}, "", True, ""),
    "prodstack_oci_spec.yaml": ("full", {}, "", True, ""),
    "prodstack_terraform-eks_cpu-tinyllama.tpl.yaml": ("full", {}, "", True, "the CPU build (--device cpu)"),
    "prodstack_values-02-basic-config.yaml": ("full", {}, "", True, ""),
    "prodstack_values-03-match-pv_llama3.1-8b.yaml": ("full", {}, "", True, ""),
    "prodstack_values-04-multiple-models.yaml": ("full", {}, "", True, "the first of two modelSpecs (--pick chooses)"),
    "prodstack_values-05-cpu-offloading.yaml": ("full", {}, "", True, ""),
    "prodstack_values-06-shared-storage_mistral-7b.yaml": ("full", {}, "", True, ""),
    "prodstack_values-09-lora-helm_llama3.1-8b.yaml": ("full", {}, "", True, ""),
    "prodstack_values-13-tool-enabled_llama3.1-8b.yaml": ("full", {}, "", True, ""),
    "prodstack_values-14-vllm-v1_llama3.1-8b.yaml": ("full", {}, "", True, ""),
    "prodstack_values-15b-pipeline-parallel-ray.yaml": ("full", {}, "", True, "GPT-2 layers"),
    "prodstack_values-16-disagg-prefill.yaml": ("full", {}, "", True, ""),
    "prodstack_values-17-kv-aware_gpt-oss-20b.yaml": (
        "full", {}, "", True,
        "lmcache/vllm-openai:v0.3.9post2 is an LMCache release: no vLLM release named, newest assumed"),
    "prodstack_values-18-prefix-aware.yaml": ("full", {}, "", True, ""),
    "prodstack_values-23-semantic-router_qwen3-8b.yaml": (
        "full", {}, "", True, "as above (lmcache/vllm-openai:v0.3.7)"),
    "prodstack_values-25-v100-single_qwen2.5-0.5b.yaml": ("full", {}, "", True, ""),
    "prodstack_values-25-v100-tp2.yaml": ("full", {}, "", True, "V100 not read from the values (helper 14)"),
    "prodstack_values-25-v100-tp4_qwen2.5-14b.yaml": ("full", {}, "", True, ""),
    "recipes_deepseek-r1_8xh200_tp8_ep.sh": (
        "no-start", {}, "No available memory", True,
        f"{ASSUMED_H100}: 671B FP8 exceeds 8 x 80 GB; the recipe is for H200, which the script does not say"),
    "recipes_gpt-oss-120b_8xh100_eval.sh": ("full", {}, "", True, ""),
    "recipes_gpt-oss-120b_h100_tp1_oom_workaround.sh": (
        "no-start", {}, "max seq len (131072)", True, "the recipe's known limitation; issue 27508 hit it"),
    "recipes_gpt-oss-120b_mi300x_rocm.sh": ("full", {}, "", True, "MI300X not in the script: H100 assumed"),
    "recipes_gpt-oss_blackwell.yaml": (
        "no-start", {"model": "openai/gpt-oss-120b"}, "No available memory", True,
        f"a --config YAML without the model; {ASSUMED_H100}, one GPU cannot hold gpt-oss-120b as 27508 found "
        "(the recipe is for B200)"),
    "recipes_gpt-oss_eagle3_hopper.yaml": (
        "no-start", {"model": "openai/gpt-oss-120b"}, "No available memory", True,
        f"as above, with the EAGLE3 draft; {ASSUMED_H100}"),
    "recipes_kimi-k2-thinking_tp8_dcp8.sh": (
        "no-start", {}, "No available memory", True,
        f"{ASSUMED_H100}: about 590 GB of INT4 experts exceed 8 x 80 GB; the recipe is for H200"),
    "recipes_llama3.3_hopper.yaml": (
        "no-start", {"model": "nvidia/Llama-3.3-70B-Instruct-FP8"}, "No available memory", True,
        f"{ASSUMED_H100}: 67.7 GiB of FP8 weights and the profile run fill 0.92 of 80 GB"),
    "recipes_llama4_blackwell.yaml": (
        "no-start", {"model": "nvidia/Llama-4-Scout-17B-16E-Instruct-FP4"}, "max seq len (10485760)", True,
        "the default max_model_len is Scout's 10M positions, which no single GPU's KV cache holds"),
    "recipes_md_deepseek_deepseek-v3.md": (
        "no-start", {}, "No available memory", True,
        "DeepSeek-R1-0528 FP8 over 8 GPUs on the assumed H100-SXM (the file names no GPU); the guide is for H200/B200"),
    "recipes_md_deepseek_deepseek-v3_1.md": (
        "no-start", {}, "No available memory", True, "as above, on the assumed H100-SXM (the file names no GPU)"),
    "recipes_md_deepseek_deepseek-v3_2.md": (
        "no-start", {}, "No available memory", True, "as above, on the assumed H100-SXM (the file names no GPU)"),
    "recipes_md_llama_llama3.3-70b.md": (
        "no-start", {"model": "nvidia/Llama-3.3-70B-Instruct-FP8"}, "No available memory", True,
        "the guide's --config YAML comes first and leaves the model to the command "
        "(nvidia/Llama-3.3-70B-Instruct-$DTYPE); on the assumed H100-SXM (the file names no GPU) with TP 1, as "
        "recipes_llama3.3_hopper.yaml"),
    "recipes_md_llama_llama4-scout.md": (
        "no-start", {"model": "nvidia/Llama-4-Scout-17B-16E-Instruct-FP4"}, "max seq len (10485760)", True,
        "as recipes_llama4_blackwell.yaml: Scout's 10M default positions fit no single GPU's KV cache"),
    "recipes_md_openai_gpt-oss.md": ("full", {}, "", True, "the first launch is `docker run` of gpt-oss-20b"),
    "recipes_md_qwen_qwen3-coder-480b-a35b.md": (
        "no-start", {}, "No available memory", True,
        "480B BF16 over 8 GPUs on the assumed H100-SXM (the file names no GPU)"),
    "recipes_md_qwen_qwen3-vl.md": (
        "full", {}, "", True, "Qwen3-VL-235B-A22B-Instruct-FP8 sized from its BF16 base with FP8 weights (VR906)"),
    "recipes_md_qwen_qwen3.5.md": ("full", {}, "", True, "the first launch serves Qwen3.6-35B-A3B"),
    "recipes_md_qwen_qwen3.md": (
        "no-start", {}, "--swap-space was removed in vLLM 0.18.0", True,
        "the guide's first launch still passes --swap-space 16; no release named: at the newest (assumed) it is "
        "refused"),
    "recipes_qwen3-coder-480b_fp8_dp8_ep.sh": (
        "no-start", {}, "No available memory", True,
        f"{ASSUMED_H100}"),
    "recipes_qwen3-next_mtp.sh": (
        "no-start", {}, "needs chunked prefill", True,
        "the recipe's --no-enable-chunked-prefill beside prefix caching, on by default for the hybrid model: the real "
        "0.32.0 refused it (VR217)"),
    "recipes_qwen3.8-27b_nvfp4_2x5090.sh": (
        "full", {}, "", True,
        "the NVFP4 export's own config.json is not stored: Qwen3.8-27B's shape with NVFP4 weights from the name "
        "(VR906); the recipe measured 10.64 GiB per GPU of unsloth's mixed NVFP4/FP8 weights at TP 2, we assume "
        "8.75 GiB of uniform NVFP4"),
    "shell_curator_bash-c-cmd_qwen2.5-32b_tp4.sh": (
        "full", {}, "", True, "the command is a variable run through `bash -c \"${CMD}\"`"),
    "shell_enigmatom_gemma27.sh": (
        "full", {}, "", True, "model inferred from the hub-cache snapshot path; TP from `nvidia-smi` stays unknown"),
    "shell_enigmatom_llama3-70b.sh": (
        "no-start", {}, "--load-format bitsandbytes is not one of the values", True,
        "unsloth's bnb-4bit re-upload with --load-format bitsandbytes, which 0.33.0 no longer lists (VR120); no "
        "release named: the newest assumed"),
    "shell_enigmatom_llama3.1-8b_hf-snapshot_nvidia-smi-tp.sh": (
        "full", {}, "", True, "TP is $WORLDSIZE from `nvidia-smi --list-gpus | wc -l`: unknown, said; TP 1 assumed"),
    "shell_enigmatom_mixtral.sh": ("full", {}, "", True, "Mixtral-8x7B-Instruct sized from Mixtral-8x7B-v0.1"),
    "shell_enigmatom_qwen14.sh": ("full", {}, "", True, ""),
    "shell_gpt-oss-alignment_gpt-oss-20b_tp8.sh": ("full", {}, "", True, "`python -u -m vllm.entrypoints...`"),
    "shell_instance-scripts_gpt-oss-120b.sh": ("full", {}, "", True, ""),
    "shell_instance-scripts_gpt-oss-20b_trailing-backslash.sh": (
        "no-start", {}, "--disable-log-requests was removed", True,
        "the script ends in a continuation, which bash drops; --disable-log-requests is refused at the newest release "
        "(assumed)"),
    "shell_instance-scripts_qwen.sh": ("full", {}, "", True, ""),
    "shell_synth-data_llama3.1-405b-fp8_tp8.sh": (
        "no-start", {}, "fbgemm_fp8 is deprecated", True, "the checkpoint's fbgemm_fp8, refused without the flag (VR412)"),
    "shell_t0-1_isambard_gemma3_tools.sh": ("full", {}, "", True, "GH200 not in the script: H100 assumed"),
    "shell_t0-1_isambard_qwen_tools.sh": (
        "no-start", {}, "max_model_len 131072 is longer than Qwen/Qwen2.5-32B-Instruct supports", True,
        "--hf-overrides' YaRN factor 4 does not raise the 32768 positions vLLM derives (reader/config/hf_overrides.py);"
        " the real 0.32.0 and 0.18.0 refuse it (fixtures/differential/corpus-vllm-*.jsonl)"),
    "shell_t0-1_spark_gpt-oss-20b_tools.sh": ("full", {}, "", True, "--hf-overrides with YaRN rope scaling"),
    "shell_vllm-tutorial_qwen3-8b_launch.sh": (
        "full", {}, "", True, "model inferred from the relative path models/Qwen3-8B"),
    "shell_whucs_qwen3-8b-awq_local-path.sh": ("full", {}, "", True, "Qwen3-8B's shape with AWQ weights (VR906)"),
    "skypilot_serve-openai-api_llama2-7b_L4.sky.yaml": ("full", {}, "", True, ""),
    "skypilot_vllm-multinode_llama4-maverick_tp8_pp2.sky.yaml": (
        "full", {}, "", True, ""),
    "slurm_claireg808_deepseek-r1-distill-qwen-32b.sh": (
        "no-start", {}, "max seq len (35904)", True,
        "--gres=gpu:80g:1 names an 80 GB GPU, not its kind: on the assumed H100-SXM (the file names no GPU); 32B BF16 "
        "weights leave 4.3 GiB of KV, less than one 35904-token request needs (8.8 GiB)"),
    "uv-run_gemma3serving_gemma-3-27b-w4a16.sh": (
        "full", {}, "", True,
        "`uv run python -m vllm.entrypoints...`; gemma-3-27b-it's shape, W4A16 from the folder name"),
    "uv-run_qwen-hotaisle_qwen3-0.6b_fp8kv.sh": ("full", {}, "", True, "`uv run vllm serve` after env assignments"),
    "uv-run_qwen-hotaisle_qwen3.5-397b-fp8_tp4.sh": (
        "no-start", {}, "No available memory", True,
        "the repo serves it on Hot Aisle's MI300X (192 GB each), which the script does not say: on the assumed "
        "H100-SXM (the file names no GPU) the FP8 weights fill four 80 GB GPUs"),
    "vllm_docs_serve_args_config.yaml": ("full", {}, "", True, ""),
    "vllm_perf-benchmarks_serving-tests-rocm.json": ("full", {}, "", True, ""),
    "vllm_perf-benchmarks_serving-tests.json": (
        "no-start", {}, "--swap-space was removed", True,
        "no release named anywhere: at the newest (assumed, said so) --swap-space is refused"),
}

# Every refusal: (the input the user must add, why no tool could know it), both as the message says them.
REFUSALS = {
    "docker_openreinforcedagent_bnb_v0.7.2.sh": (
        "Name the model with --model", "does not exist here and its name matches no known model"),
    "eks_ray-vllm-deepseek.yml": (
        "give them as the equivalent `vllm serve MODEL --option ...` command",
        "builds the vLLM engine in its own Python code, which vllm-reader does not run"),
    "gke_rayserve_tpu-v6e-singlehost_rayservice.yaml": (
        "give them as the equivalent `vllm serve MODEL --option ...` command",
        "builds the vLLM engine in its own Python code, which vllm-reader does not run"),
    "issue_kaito-2132_mistral-small-4-119b_workspace.yaml": (
        "write the equivalent `vllm serve` line", "KAITO generates the vLLM command from the preset"),
    "kserve_helm-vllm-kserve_values_modelcar-granite-3.3-2b.yaml": (
        "Name the model with --model", "were found nowhere"),
}


def corpus_names() -> list[str]:
    return [p.name for p in corpus_files()]


def test_the_diagnose_table_covers_every_corpus_file():
    assert set(DIAGNOSE) == set(corpus_names())
    for outcome, options, words, done, why in DIAGNOSE.values():
        assert outcome in ("full", "no-start", "exit-2") and set(options) <= {"model"}
        assert not (done and outcome == "exit-2")
        assert done or why, "every config not done says what it lacks (a refusal, or a verdict vLLM contradicts)"


def test_the_index_records_each_files_outcome():
    assert {e["file"]: e["diagnose_outcome"] for e in INDEX["files"]} == {
        name: row[0] for name, row in DIAGNOSE.items()}


def test_at_least_95_percent_get_a_diagnosis_or_a_would_not_start_verdict():
    done = sum(1 for row in DIAGNOSE.values() if row[3])
    assert done / len(DIAGNOSE) >= 0.95, f"{done} of {len(DIAGNOSE)}"


def test_every_refusal_is_explained():
    assert set(REFUSALS) == {name for name, row in DIAGNOSE.items() if row[0] == "exit-2"}


@pytest.mark.parametrize("name", sorted(DIAGNOSE))
def test_diagnose_outcome(name):
    outcome, options, words, _, _ = DIAGNOSE[name]
    try:
        resolved = load_and_resolve(str(CORPUS / name), load_options(workload=WORKLOAD, **options))
        d = diagnose(resolved, whatifs=False)
    except ReaderError as err:
        text = " ".join(err.render().split())
        assert outcome == "exit-2", text
        assert words in text
        what_to_add, why_no_tool_knows = REFUSALS[name]
        assert what_to_add in text and why_no_tool_knows in text
        return
    assert outcome == ("full" if d.starts else "no-start"), d.verdict.headline
    if outcome == "full":
        assert d.baseline is not None and d.verdict.default
        curve = d.load_curve  # issue 24: every full diagnosis shows a capacity, the binding order and a chart
        assert curve is not None and curve.points and curve.headline.startswith(("one replica", "no load"))
        assert "xychart-beta" in render_diagnosis(d).split("## Load curve")[1]
    else:
        assert words in d.verdict.headline


def test_a_refusal_the_capacity_model_cannot_size_still_renders_every_format(tmp_path):
    # 32 heads and TP 3: vLLM refuses before sizing anything, and so does the capacity model
    import json
    import subprocess
    import sys

    config = str(CORPUS / "issue_gpustack-2259_gemma-3-27b_tp3.sh")
    outputs = {}
    for fmt in ("markdown", "json", "sarif"):
        run = subprocess.run([sys.executable, "-m", "reader", "diagnose", config, "--format", fmt],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
        outputs[fmt] = run.stdout
    assert "vLLM would not start" in outputs["markdown"]
    assert "**KV cache:** not sized" in outputs["markdown"]  # no figures from a config vLLM refuses
    assert json.loads(outputs["json"])["starts"] is False
    assert "VR501" in outputs["sarif"]
