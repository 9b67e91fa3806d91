"""The public vLLM logs of fixtures/logs/public (pasted in GitHub issues and pull requests, each with its
source in INDEX.yaml), read as they are: every one is recognised as a vLLM log, and the table below
states what a careful reader of each one finds in it, whatever wraps its lines (kubectl and CI
timestamps, docker compose columns, systemd's journal, Ray and Ray Serve tags, TorchServe prefixes,
k9s borders, Markdown quotes, ANSI colours in caret notation, GitHub's line wrapping, cut first
characters) and whatever release printed it (0.6.x to 0.32).
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from reader.logs.read import read_log

PUBLIC = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "public"
INDEX = yaml.safe_load((PUBLIC / "INDEX.yaml").read_text())["logs"]


def read(name: str):
    return read_log((PUBLIC / name).read_text(), name)


def mem(reading, field: str, worker: int = 0):
    figure = getattr(reading.workers[worker], field)
    return None if figure is None else figure.value


def test_the_index_names_every_log_once_with_its_source():
    files = sorted(p.name for p in PUBLIC.glob("*.log"))
    listed = [entry["file"] for entry in INDEX]
    assert sorted(listed) == files
    assert len(set(listed)) == len(listed)
    for entry in INDEX:
        assert entry["url"].startswith("https://"), entry["file"]
        assert entry.get("posted_by"), entry["file"]
    assert len(files) >= 70


@pytest.mark.parametrize("entry", INDEX, ids=lambda e: e["file"])
def test_every_public_log_is_recognised_as_a_vllm_log(entry):
    reading = read(entry["file"])
    assert reading.is_vllm_log
    assert reading.records >= 1


# ---- what each log says -------------------------------------------------------------------------

def test_v0_profiler_table_of_0_6_5_is_read_term_by_term():
    r = read("vllm-pr10511_llama3-8b_h100_tp1.log")
    assert (mem(r, "total"), mem(r, "utilization"), mem(r, "weights")) == (79.22, 0.90, 14.96)
    assert (mem(r, "non_torch"), mem(r, "activation_peak"), mem(r, "available_kv")) == (1.79, 1.26, 53.29)
    assert r.engine == "v0" and r.release is None and r.release_range == "0.6.5"


def test_a_cut_profiler_table_keeps_what_it_has():
    r = read("vllm-pr10511_llama3-8b_h100_tp2_cut.log")
    assert mem(r, "weights") == 7.48 and mem(r, "non_torch") == 3.58 and mem(r, "available_kv") is None
    assert any("ends during start-up" in note for note in r.notes)


def test_v0_6_4_one_line_profile_counts_the_weights_out_of_the_torch_peak():
    ok = read("vllm-10517_llama31-8b_rtx3090_v064_20k.log")
    assert mem(ok, "weights") == 14.9888 and mem(ok, "activation_peak") == pytest.approx(17.06 - 14.9888)
    assert (mem(ok, "total"), mem(ok, "non_torch"), mem(ok, "available_kv")) == (23.58, 0.35, 3.81)
    assert ok.kv.num_gpu_blocks.value == 1952 and ok.kv.max_concurrency.value == 1.56  # pasted without its '#'
    assert ok.release_range == "0.6.4" and ok.refusal is None
    bad = read("vllm-10517_llama31-8b_rtx3090_v064_29k_fails.log")
    assert bad.refusal.kind == "max_len_too_long"
    assert (bad.refusal.max_model_len, bad.refusal.kv_tokens) == (29000, 23648)
    assert mem(bad, "activation_peak") == pytest.approx(17.98 - 14.9888)  # a longer profiling run, a larger peak


def test_v0_profiler_lines_of_several_workers_are_kept_apart():
    r = read("vllm-pr14447_v0-multiproc_24gb_tp4.log")
    assert len(r.workers) == 3
    assert {(w.weights.value, w.non_torch.value, w.activation_peak.value, w.available_kv.value)
            for w in r.workers} == {(21.21, 0.20, 0.37, 1.57)}
    assert r.workers[0].requested.value == 23.35 and r.workers[0].utilization.value == 0.99


def test_a_negative_kv_budget_is_read_as_printed():
    r = read("vllm-13882_qwen25-7b-quant_rtx4060_v0_negative-kv.log")
    assert mem(r, "available_kv") == -1.05 and r.kv.num_gpu_blocks.value == 0  # '# cuda blocks: 0'
    assert (mem(r, "total"), mem(r, "utilization"), mem(r, "requested")) == (8.00, 0.70, 5.60)


def test_ray_aggregator_columns_and_repeat_suffixes_are_stripped():
    r = read("open-reasoner-zero-23_ray-cluster_v0-memory.log")
    actor = next(w for w in r.workers if w.worker.startswith("LLMActor"))
    assert (actor.total.value, actor.utilization.value, actor.requested.value) == (79.11, 0.95, 75.15)
    assert (actor.weights.value, actor.non_torch.value, actor.activation_peak.value) == (15.41, 5.24, 0.80)
    assert actor.available_kv is None  # the paste stops inside that number
    ray = next(w for w in r.workers if w.worker.startswith("RayWorkerWrapper"))
    assert ray.weights.value == 15.4136


def test_ray_serve_replica_tags_and_nested_ray_task_tags():
    serve = read("vllm-12742_qwen25-vl-7b_v073dev_ray-serve-prefix.log")
    assert serve.release == "0.7.3" and serve.engine == "v0"
    assert serve.engine_config.values["max_seq_len"] == 40000
    assert serve.engine_config.values["enable_prefix_caching"] is False  # 'Fals' + 'e' joined across the wrap
    nested = read("marin-pr2350_ray-task-nested-prefix_tpu.log")
    assert nested.processes == ["EngineCore_DP0"] and nested.headers == 4


def test_the_newest_memory_summary_line_and_graph_pool_line():
    r = read("club-3090-1087_qwen38-27b-fp8_2x5090_memory-summary.log")
    tp0, tp1 = r.workers
    assert tp0.worker == "main" and tp1.worker.startswith("Worker_TP1")
    assert (tp0.free_at_start.value, tp0.total.value, tp0.utilization.value, tp0.requested.value) == \
        (30.27, 31.4, 0.92, 28.88)
    assert (tp0.consumed.value, tp0.activation_peak.value, tp0.cudagraph.value, tp0.available_kv.value) == \
        (15.03, 1.59, 0.09, 12.26)
    assert (tp1.cudagraph.value, tp1.cudagraph_estimate.value) == (0.09, 0.13)


def test_v1_kv_lines_through_a_systemd_journal():
    r = read("1cat-vllm-237_journald_v100x4.log")
    assert mem(r, "available_kv") == 5.35
    assert r.kv.kv_tokens.value == 215401 and r.kv.max_concurrency.value == 26.29 and r.kv.concurrency_for_len == 8192


def test_v1_kv_lines_with_a_stage_tag():
    r = read("vllm-omni-pr1160_stage-prefix.log")
    assert mem(r, "available_kv") == 100.43 and r.kv.kv_tokens.value == 2925232
    assert r.started  # 'init engine ... took'


def test_v1_0_7_block_count_before_kv_tokens_were_printed():
    r = read("vllm-pr12569_llama31-70b-w8a8_v1_util098.log")
    assert r.kv.num_gpu_blocks.value == 1381 and r.kv.max_concurrency.value == 10.79
    assert mem(r, "weights") == 67.7229 and r.engine == "v1" and r.release_range == "0.7.0..0.7.3"


def test_weights_through_a_k9s_pane_and_a_docker_compose_column():
    assert mem(read("vllm-12568_llama-guard-3-8b_v081_k9s-box.log"), "weights") == 14.9888
    compose = read("vllm-17469_qwen3-30b-a3b_tp4_v085_compose-vllmworker.log")
    assert [w.worker for w in compose.workers] == [f"VllmWorker rank={i}" for i in range(4)]
    assert {w.weights.value for w in compose.workers} == {14.2474}


def test_torchserve_prefix_and_a_release_older_than_the_tables():
    r = read("pytorch-serve-pr3343_llama32-3b_v061dev_torchserve-prefix.log")
    assert r.release == "0.6.1" and r.release_printed == "0.6.1.dev238+ge2c6e0a82" and r.engine == "v0"
    assert r.engine_config.values["model"] == "meta-llama/Llama-3.2-3B-Instruct"
    assert r.engine_config.values["served_model_name"] == "meta-llama/Llama-3.2-3B-Instruct"  # joined at '-3B'
    assert r.engine_config.values["max_seq_len"] == 131072
    blocks = read("pytorch-serve-pr3315_v0-tp2_gpu-blocks_torchserve.log")
    assert blocks.kv.num_gpu_blocks.value == 61913 and blocks.kv.num_cpu_blocks.value == 4096


def test_a_paste_that_starts_inside_the_level_word():
    r = read("vllm-8031_mistral-small-24b-awq_v083_v0_cut-first-chars.log")
    assert r.release == "0.8.3" and r.engine == "v0"
    assert r.engine_config.values["quantization"] == "awq" and r.engine_config.values["max_seq_len"] == 8192
    assert r.engine_config.values["num_scheduler_steps"] == 1  # 'num_s' + 'cheduler_steps' joined


def test_engine_config_values_are_typed_as_vllm_meant_them():
    r = read("vllm-16141_qwen25-0.5b-awq_v083_config.log")
    values = r.engine_config.values
    assert values["dtype"] == "float16" and values["load_format"] == "auto" and values["seed"] is None
    assert values["quantization"] == "awq_marlin" and values["enable_prefix_caching"] is True
    assert values["chunked_prefill_enabled"] is True and values["device_config"] == "cuda"
    assert r.engine_config.truncated and "compilation_config" in r.engine_config.dropped


def test_non_default_args_keep_lists_mappings_and_object_reprs():
    r = read("club-3090-295_qwen36-27b-int4_2x3090_tp2_mtp.log")
    args = r.args.values
    assert args["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 3}
    assert args["served_model_name"] == ["qwen3.6-27b-autoround"] and args["tensor_parallel_size"] == 2
    lmcache = read("lmcache-pr2522_llama32-1b_nondefault-args.log")
    assert lmcache.args.values["kv_transfer_config"].startswith("KVTransferConfig(kv_connector='LMCacheConnectorV1'")
    assert lmcache.resolved["max_model_len"].value == 1024 and lmcache.resolved["max_num_batched_tokens"].value == 8192


def test_an_args_namespace_and_a_namespace_whose_start_is_cut():
    full = read("gpustack-1800_qwen25-vl-7b_v084_namespace_3090.log")
    assert full.release == "0.8.4" and full.args.form == "args Namespace"
    assert full.args.values["model_tag"].endswith("Qwen2.5-VL-7B-Instruct") and full.args.values["port"] == 40010
    cut = read("vllm-18163_llama31-8b_a100-40gb_namespace-args.log")
    assert cut.args.truncated and cut.args.values["gpu_memory_utilization"] == 0.9
    assert cut.args.values["max_seq_len_to_capture"] == 8192 and "e" not in cut.args.values


def test_refusals_in_every_wording():
    spark = read("spark-vllm-docker-396_minimax-m27-awq_v0291rc1_fails.log").refusal
    assert (spark.kind, spark.max_model_len, spark.needed_gib, spark.available_gib, spark.estimated_max_model_len) == \
        ("max_len_too_long", 196608, 23.25, 22.5, 190272)  # one message over three quoted lines
    xpu = read("intel-arc-b70-4_xpu_fails_traceback.log").refusal
    assert (xpu.kind, xpu.max_model_len, xpu.needed_gib, xpu.available_gib) == ("max_len_too_long", 100000, 4.26, 4.25)
    old = read("vllm-25350_kv-fp8_maxlen221k_fails.log").refusal  # the 'models's' wording of older releases
    assert (old.max_model_len, old.needed_gib, old.available_gib, old.estimated_max_model_len) == \
        (221000, 10.12, 5.59, 122080)
    v0 = read("qwen-295_qwen15-7b_v0_maxlen-too-long.log").refusal
    assert (v0.kind, v0.max_model_len, v0.kv_tokens) == ("max_len_too_long", 32768, 7344)
    free = read("vllm-33297_free-memory_caret-ansi.log").refusal
    assert (free.kind, free.free_gib, free.total_gib, free.utilization, free.requested_gib) == \
        ("free_memory", 1.53, 22.05, 0.9, 19.84)
    h200 = read("vllm-23192_mixtral-fp8_h200_free-memory_enginecore0.log").refusal
    assert (h200.free_gib, h200.total_gib, h200.requested_gib) == (7.34, 139.72, 125.75)


def test_an_engine_that_failed_without_its_cause_in_the_paste():
    r = read("vllm-26612_qwen3vl-30b-a3b_a800_enginecore-failed.log")
    assert r.refusal is not None and r.refusal.kind == "other" and "failed to start" in r.refusal.message
    assert mem(r, "available_kv") == 13.69


def test_v1_stats_lines_with_kubectl_timestamps():
    r = read("tt-inference-3359_stats_kubectl-timestamps.log")
    assert [s.running for s in r.stats] == [9, 9, 10, 10, 10]
    assert [s.waiting for s in r.stats] == [0, 1, 0, 0, 0]
    assert [s.kv_usage_pct for s in r.stats] == [62.8, 68.8, 74.5, 79.9, 82.0]
    assert [s.seconds for s in r.stats] == [0, 10, 20, 30, 40]
    assert r.stats[-1].prefix_hit_pct is None  # cut before it
    assert r.started


def test_v1_stats_with_a_waiting_queue_and_a_full_cache():
    r = read("vllm-43295_stats_waiting-queue.log")
    assert max(s.waiting for s in r.stats) == 43 and max(s.kv_usage_pct for s in r.stats) == 98.4
    full = read("vllm-pr25787_stats_kv100.log").stats[0]
    assert (full.running, full.waiting, full.kv_usage_pct, full.prefix_hit_pct) == (260, 475, 100.0, 0.2)


def test_v0_stats_lines_and_preemption_warnings():
    r = read("tenstorrent-vllm-55_v0-stats_debug.log")
    assert [s.kv_usage_pct for s in r.stats] == [92.1, 92.7, 93.5, 94.2, 94.9]
    assert {s.swapped for s in r.stats} == {0} and r.engine == "v0"
    pending = read("vllm-3094_v0-stats_pending.log").stats[0]
    assert (pending.running, pending.waiting, pending.kv_usage_pct) == (2, 3, 82.1)
    limo = read("limo-29_v0-preemption-warning.log").preemptions
    assert (limo.warnings, limo.cumulative, limo.mode) == (1, 101, "RECOMPUTE")


def test_the_banner_release_and_blog_quotes():
    r = read("myoceane-blog_gpt-oss-20b_a100_v0190.log")
    assert r.release == "0.19.0" and mem(r, "weights") == 13.72 and mem(r, "available_kv") == 36.56
    assert r.args.values["gpu_memory_utilization"] == 0.65


def test_a_log_that_says_nothing_about_memory_says_so():
    r = read("vllm-19680_stats_v1-no-prefix.log")
    assert r.workers == [] and r.engine_config is None and r.args is None
    assert any("cannot be rebuilt" in note for note in r.notes)
