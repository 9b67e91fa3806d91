"""Expert parallelism with EPLB's redundant experts: each GPU holds its share of the routed experts plus its share
of the redundant copies (vLLM 0.32.0 FusedMoE: global experts = logical + redundant, split over the EP ranks), so
redundancy costs weight memory that the KV cache no longer gets. The count is read from the config only where
vLLM uses it: with --enable-eplb and expert parallelism."""
from __future__ import annotations

import numpy as np
import pytest

from reader.batch import StepBatch
from reader.calibration.profile import default_calibration
from reader.capacity.api import CapacityRequest, compute_capacity
from reader.capacity.shapes import gpu_shapes, resolve_weight_format
from reader.capacity.steptime import StepTimeModel
from reader.catalog.load import get_gpu, get_model
from reader.config.from_cli import load_and_resolve, load_options
from reader.pipeline import capacity_request

GiB = 1 << 30


@pytest.fixture(scope="module")
def r1():
    return get_model("deepseek-ai/DeepSeek-R1")


def weights_gib(model, **kw) -> float:
    req = CapacityRequest(model=model, gpu=get_gpu("H200-SXM"), vllm_version="0.32.0", max_model_len=8192,
                          max_num_batched_tokens=8192, max_num_seqs=256, gpu_memory_utilization=0.9, **kw)
    return compute_capacity(req).workers[0].weights.value / GiB


def test_redundant_experts_add_to_each_gpus_share_of_the_routed_experts(r1):
    wfmt = resolve_weight_format(r1, None, "auto", get_gpu("H200-SXM"))
    plain = gpu_shapes(r1, get_gpu("H200-SXM"), wfmt, tp=1, ep=16).moe
    eplb = gpu_shapes(r1, get_gpu("H200-SXM"), wfmt, tp=1, ep=16, redundant_experts=32).moe
    assert (plain.local_experts, eplb.local_experts) == (16, 18)  # 256 / 16, (256 + 32) / 16
    assert eplb.num_experts == plain.num_experts == 256  # the model's experts are unchanged


def test_two_more_experts_per_gpu_cost_two_experts_of_fp8_weights_on_every_moe_layer(r1):
    plain = weights_gib(r1, data_parallel_size=16, enable_expert_parallel=True)
    eplb = weights_gib(r1, data_parallel_size=16, enable_expert_parallel=True, redundant_experts=32)
    moe_layers = r1.moe.moe_layers_in(0, r1.num_hidden_layers)  # 58 of 61
    one_expert = 3 * r1.hidden_size * r1.moe.moe_intermediate_size  # gate, up, down at one byte per FP8 weight
    assert eplb - plain == pytest.approx(2 * moe_layers * one_expert / GiB, rel=0.02)  # about 4.8 GiB


def test_without_expert_parallelism_redundant_experts_change_nothing(r1):
    assert weights_gib(r1, tensor_parallel_size=8, redundant_experts=32) == weights_gib(r1, tensor_parallel_size=8)


def test_without_expert_parallelism_data_parallel_ranks_still_slice_the_routed_experts_between_them():
    """vLLM flattens the MoE layer's tensor parallel group across DP (FusedMoEParallelConfig.make @ v0.18.0): with
    DP 2 x TP 1 each GPU holds half of every routed expert, and all of attention and the shared experts."""
    qwen = get_model("Qwen/Qwen3-235B-A22B")
    wfmt = resolve_weight_format(qwen, None, "auto", get_gpu("H200-SXM"))
    one, two = (gpu_shapes(qwen, get_gpu("H200-SXM"), wfmt, tp=1, dp=dp) for dp in (1, 2))
    assert two.moe.inter * 2 == one.moe.inter and two.moe.local_experts == one.moe.local_experts
    assert two.attn == one.attn
    alone, beside = weights_gib(qwen), weights_gib(qwen, data_parallel_size=2)
    assert beside < 0.55 * alone  # the routed experts are nearly all of a 235B-A22B model's weights


def serve(tmp_path, flags: str):
    config = tmp_path / "serve.sh"
    config.write_text(f"vllm serve deepseek-ai/DeepSeek-R1 --data-parallel-size 16 {flags}\n")
    return capacity_request(load_and_resolve(str(config), load_options(vllm_version="0.32.0", gpu="H200-SXM")))


def test_the_eplb_config_of_a_launch_reaches_the_capacity_model(tmp_path):
    req = serve(tmp_path, "--enable-expert-parallel --enable-eplb --eplb-config '{\"num_redundant_experts\": 32}'")
    assert req.redundant_experts == 32 and req.enable_expert_parallel


def test_redundant_experts_without_eplb_are_not_counted(tmp_path):
    # vLLM refuses them without --enable-eplb (ParallelConfig.__post_init__); no memory is charged for them
    assert serve(tmp_path, "--enable-expert-parallel --eplb-config '{\"num_redundant_experts\": 32}'"
                 ).redundant_experts == 0


def test_expert_parallelism_within_one_tensor_parallel_group_exchanges_no_tokens(r1):
    """With one data-parallel rank every GPU already holds every token: vLLM runs no all-to-all (its
    use_all2all_kernels asks for EP and dp_size > 1) and the TP all-reduce combines the experts. Across DP ranks
    the tokens travel, and that exchange costs link time."""
    cal = default_calibration("H200-SXM").replace(alltoall_latency_s=1e-5)
    prefill = StepBatch(np.array([4096]), np.array([0]), 1)

    def allreduce_s(**kw) -> float:
        return StepTimeModel(r1, get_gpu("H200-SXM"), cal, **kw).breakdown(prefill)["allreduce"]

    assert allreduce_s(tp=8, ep=8, dp=1) == pytest.approx(allreduce_s(tp=8, ep=1, dp=1))
    assert allreduce_s(tp=8, ep=16, dp=2) > allreduce_s(tp=8, ep=1, dp=2)
