"""The search space: shapes within a node and --max-gpus, knobs moved only where the evidence says they bind."""
from __future__ import annotations

from reader.catalog.load import get_gpu, get_model
from reader.plan.space import Shape, Signals, knob_variants, model_max_len, shapes

LLAMA_8B = get_model("meta-llama/Llama-3.1-8B-Instruct")
BASE = {"max_num_seqs": 256, "max_num_batched_tokens": 8192, "enable_chunked_prefill": True,
        "kv_cache_dtype": "auto", "gpu_memory_utilization": 0.9, "speculative_config": None}


def test_shapes_stay_within_a_node_and_the_gpu_limit():
    found, _ = shapes([get_gpu("H100-SXM"), get_gpu("L40S")], LLAMA_8B, max_gpus=4, per_node=8)
    assert {s.gpus for s in found} == {1, 2, 4}
    assert Shape("L40S", 2, 2) in found and Shape("H100-SXM", 8, 1) not in found
    found, _ = shapes([get_gpu("H100-SXM")], LLAMA_8B, max_gpus=64, per_node=2)
    assert max(s.gpus for s in found) == 2


def test_tensor_parallel_sizes_that_do_not_divide_the_heads_are_left_out_and_said():
    model = get_model("Qwen/Qwen2.5-32B-Instruct")  # 40 attention heads
    found, left_out = shapes([get_gpu("H100-SXM")], model, max_gpus=16, per_node=16)
    assert all(model.num_attention_heads % s.tp == 0 for s in found)
    assert {s.tp for s in found} == {1, 2, 4, 8}
    assert left_out and "16" in left_out[0]


def test_a_shape_writes_only_the_parallel_sizes_above_one():
    assert Shape("H100-SXM", 1).flags() == {"tensor_parallel_size": None, "pipeline_parallel_size": None,
                                            "data_parallel_size": None}
    assert Shape("H100-SXM", 4, 2).flags()["tensor_parallel_size"] == 4
    assert Shape("H100-SXM", 4, 2).label == "H100-SXM TP4 PP2"


def test_max_model_len_holds_the_longest_request_in_whole_kibitokens():
    assert model_max_len(8000) == 8192
    assert model_max_len(8191) == 8192 and model_max_len(8192) == 9216


def knobs(signals, pinned=(), gpu="H100-SXM", values=None, step=2.0):
    return [c for _, c in knob_variants(values or BASE, set(pinned), get_gpu(gpu), LLAMA_8B, 8192, signals, step)]


def test_a_knob_that_did_not_bind_is_not_moved():
    assert knobs(Signals()) == [{"kv_cache_dtype": "fp8"}]


def test_each_signal_moves_its_knob():
    assert {"max_num_seqs": 512} in knobs(Signals(seqs_capped=True))
    assert {"max_num_seqs": 128} in knobs(Signals(preempted=True, kv_bound=True))
    assert {"gpu_memory_utilization": 0.95} in knobs(Signals(kv_bound=True))
    assert {"max_num_batched_tokens": 16384} in knobs(Signals(budget_full=True))
    itl = knobs(Signals(itl_binding=True, itl_tight=True))
    assert {"max_num_batched_tokens": 4096} in itl
    assert any("speculative_config" in c and c["speculative_config"]["method"] == "ngram" for c in itl)
    assert {"enable_chunked_prefill": False, "max_num_batched_tokens": 8192} in knobs(Signals(long_prompts=True))


def test_a_budget_below_max_num_seqs_takes_max_num_seqs_down_with_it():
    values = dict(BASE, max_num_seqs=1024, max_num_batched_tokens=1024)
    assert {"max_num_batched_tokens": 512, "max_num_seqs": 512} in knobs(Signals(itl_binding=True), values=values)


def test_finer_steps_move_by_half_again_in_round_numbers():
    assert {"max_num_batched_tokens": 5376} in knobs(Signals(itl_binding=True), step=1.5)  # 8192 / 1.5, to 256


def test_pinned_knobs_are_never_moved():
    every = Signals(seqs_capped=True, preempted=True, kv_bound=True, budget_full=True, itl_binding=True,
                    itl_tight=True, long_prompts=True)
    pinned = ("max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill", "kv_cache_dtype",
              "gpu_memory_utilization", "speculative_config")
    assert knobs(every, pinned=pinned) == []


def test_an_fp8_kv_cache_is_tried_only_on_gpus_with_fp8():
    assert {"kv_cache_dtype": "fp8"} not in knobs(Signals(), gpu="A100-80GB-SXM")
