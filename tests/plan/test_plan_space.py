"""The search space: shapes within a node and --max-gpus, and every combination of the knobs that decide the SLOs."""
from __future__ import annotations

from reader.catalog.load import get_gpu, get_model
from reader.plan.space import Shape, knob_grid, model_max_len, shapes

LLAMA_8B = get_model("meta-llama/Llama-3.1-8B-Instruct")


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
                                            "data_parallel_size": None, "enable_expert_parallel": None}
    assert Shape("H100-SXM", 4, 2).flags()["tensor_parallel_size"] == 4
    assert Shape("H100-SXM", 4, 2).label == "H100-SXM TP4 PP2"


def test_a_moe_model_is_also_searched_with_its_experts_spread_over_the_tensor_parallel_ranks():
    moe = get_model("Qwen/Qwen3-30B-A3B")
    found, _ = shapes([get_gpu("H100-SXM")], moe, max_gpus=4, per_node=8)
    with_ep = {(s.tp, s.pp) for s in found if s.ep}
    assert with_ep == {(s.tp, s.pp) for s in found if not s.ep and s.tp > 1}  # one rank holds every expert at TP1
    assert Shape("H100-SXM", 4, ep=True).flags()["enable_expert_parallel"] is True
    assert Shape("H100-SXM", 4, ep=True).label == "H100-SXM TP4 EP"
    dense, _ = shapes([get_gpu("H100-SXM")], LLAMA_8B, max_gpus=4, per_node=8)
    assert not any(s.ep for s in dense)
    without, _ = shapes([get_gpu("H100-SXM")], moe, max_gpus=4, per_node=8, expert_parallel=False)
    assert not any(s.ep for s in without)


def test_max_model_len_holds_the_longest_request_in_whole_kibitokens():
    assert model_max_len(8000) == 8192
    assert model_max_len(8191) == 8192 and model_max_len(8192) == 9216


def test_the_grid_is_every_combination_of_the_knobs_vllm_accepts():
    grid = knob_grid([512, 2048], [64, 1024], ["auto", "fp8"], chunking=[True], max_len=8192, pinned=set())
    assert {"max_num_batched_tokens": 512, "max_num_seqs": 64} in grid  # auto: vLLM's default, not written
    assert {"max_num_batched_tokens": 2048, "max_num_seqs": 1024, "kv_cache_dtype": "fp8"} in grid
    assert not [c for c in grid if c["max_num_seqs"] > c["max_num_batched_tokens"]]  # vLLM refuses those
    assert len(grid) == 2 * 3


def test_without_chunked_prefill_the_budget_covers_max_model_len():
    grid = knob_grid([512, 2048], [64], ["auto"], chunking=[True, False], max_len=8192, pinned=set())
    assert {"max_num_batched_tokens": 8192, "max_num_seqs": 64, "enable_chunked_prefill": False} in grid
    assert len(grid) == 3


def test_pinned_knobs_are_never_moved():
    grid = knob_grid([512, 2048], [64, 128], ["auto", "fp8"], chunking=[True], max_len=8192,
                     pinned={"max_num_seqs", "max_num_batched_tokens", "kv_cache_dtype", "enable_chunked_prefill"})
    assert grid == [{}]


def test_large_chunked_budgets_also_come_with_a_long_prefill_threshold():
    grid = knob_grid([512, 4096], [64], ["auto"], chunking=[True, False], max_len=8192, pinned=set(),
                     long_prefill=True)
    assert {"max_num_batched_tokens": 4096, "max_num_seqs": 64, "long_prefill_token_threshold": 1024} in grid
    assert not any("long_prefill_token_threshold" in c for c in grid if c["max_num_batched_tokens"] < 2048)
    assert not any("long_prefill_token_threshold" in c for c in grid if c.get("enable_chunked_prefill") is False)
