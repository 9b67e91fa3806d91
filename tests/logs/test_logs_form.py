"""A vLLM log is a config source: the loaders rebuild the launch it describes (the arguments the user gave,
the values vLLM resolved and logged, the release it printed), and the capacity model takes what it measured
instead of estimating it. Real logs only: the CPU server's recorded logs and public pastes."""
from __future__ import annotations

from pathlib import Path

import pytest

from reader.capacity.api import compute_capacity
from reader.config.context import LoadOptions
from reader.config.load import load_deployment
from reader.config.resolve import resolve
from reader.errors import ReaderError
from reader.pipeline import capacity_request

ROOT = Path(__file__).resolve().parents[2]
LIVE = ROOT / "fixtures" / "logs" / "live"
PUBLIC = ROOT / "fixtures" / "logs" / "public"
TINY = str(ROOT / "fixtures" / "live" / "tiny-llama" / "config.json")
GiB = 1 << 30


def load(path: Path, **options):
    return load_deployment(str(path), LoadOptions(**options))


def test_a_live_log_rebuilds_the_launch_that_ran():
    d = load(LIVE / "vllm-0.32.0-cpu-serve.log")
    assert d.form == "vllm-log" and d.vllm_version_tag == "0.32.0" and d.context.vllm_version_origin == "log"
    values = {dest: flag.value for dest, flag in d.flags.items()}
    assert values["max_model_len"] == 2048 and values["max_num_seqs"] == 16
    assert values["max_num_batched_tokens"] == 512 and values["enforce_eager"] is True
    assert values["block_size"] == 128  # the CPU platform's default, which the config line does not print
    assert d.model.endswith("fixtures/live/tiny-llama")
    assert d.log is not None and d.log.kv.kv_tokens.value == 1048576
    assert any("resolved and logged" in n.message for n in d.notes)


def test_a_negated_boolean_argument_survives():
    d = load(LIVE / "vllm-0.32.0-cpu-kv-bound.log")
    assert d.flags["enable_prefix_caching"].value is False
    assert d.flags["num_gpu_blocks_override"].value == 24


def test_an_args_namespace_gives_only_what_differs_from_the_release_defaults():
    d = load(PUBLIC / "gpustack-1800_qwen25-vl-7b_v084_namespace_3090.log")
    assert d.vllm_version_tag == "0.8.0"  # 0.8.4 is answered by the nearest checked release below it
    assert d.flags["port"].value == 40010 and d.flags["host"].value == "0.0.0.0"
    assert "allow_credentials" not in d.flags and "uvicorn_log_level" not in d.flags
    assert d.model.endswith("Qwen2.5-VL-7B-Instruct")
    assert d.env.get("VLLM_USE_V1") == "0"  # the log shows the V0 engine where V1 was already the default


def test_the_engine_config_line_alone_rebuilds_a_v0_launch():
    d = load(PUBLIC / "kserve-pr4470_qwen3-14b_v085post1_v0config.log")
    assert d.model == "Qwen/Qwen3-14B" and d.flags["max_model_len"].value == 4096
    assert d.flags["enable_chunked_prefill"].value is False and d.env.get("VLLM_USE_V1") == "0"
    r = resolve(d)
    assert r.engine == "v0" and r.model is not None and r.model.id == "Qwen/Qwen3-14B"


def test_a_terminal_paste_takes_the_command_line_typed_above_the_output():
    d = load(PUBLIC / "vllm-pr12569_llama31-70b-w8a8_v1_util098.log", vllm_version="0.7.1")
    assert d.model == "neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8"
    assert d.flags["gpu_memory_utilization"].value == 0.98 and d.flags["max_model_len"].value == 2048
    assert d.env["VLLM_USE_V1"] == "1"


def test_a_log_cut_before_its_config_is_refused_with_what_to_do():
    with pytest.raises(ReaderError) as err:
        load(PUBLIC / "vllm-21348_qwen3-235b-fp8_4xh100_tp4.log")
    assert "cut before them" in err.value.message and "read-log" in err.value.message


def test_a_script_that_quotes_log_lines_in_comments_stays_a_script():
    d = load(ROOT / "fixtures" / "corpus" / "issue_recipes-pr12_qwen3-coder-480b-fp8_h20_dp8_kv_too_small.sh")
    assert d.form != "vllm-log" and d.log is None


def test_the_capacity_model_takes_the_logged_memory():
    r = resolve(load(LIVE / "vllm-0.32.0-cpu-serve.log"), model_override=TINY)
    cap = compute_capacity(capacity_request(r))
    assert cap.workers[0].available_kv.value == GiB and not cap.workers[0].available_kv.estimated
    assert "measured" in cap.workers[0].available_kv.how
    assert cap.gpu_kv_cache_tokens.value == 1048576  # what vLLM logged: 1 GiB / 1 KiB per token
    estimate = compute_capacity(capacity_request(r, measured=False))
    assert estimate.workers[0].available_kv.estimated and estimate.workers[0].available_kv.value > 10 * GiB


def test_a_v0_profiler_log_gives_every_term():
    r = resolve(load(PUBLIC / "vllm-pr10511_llama3-8b_h100_tp1.log", vllm_version="0.6.5", gpu="H100-SXM"))
    w = compute_capacity(capacity_request(r)).workers[0]
    assert (round(w.total.value / GiB, 2), round(w.weights.value / GiB, 2)) == (79.22, 14.96)
    assert (round(w.non_torch.value / GiB, 2), round(w.activation_peak.value / GiB, 2)) == (1.79, 1.26)
    assert round(w.available_kv.value / GiB, 2) == 53.29
