"""The calibrated constants applied to shapes they were not fitted on: 70B with TP, fp8, MoE, context."""
from __future__ import annotations

import numpy as np
import pytest
from test_capacity_specs import gpt_oss_120b, h100, h200, llama31_8b, llama33_70b

from reader.batch import StepBatch
from reader.calibration.profile import default_calibration
from reader.capacity.steptime import StepTimeModel


def decode(b: int, ctx: int) -> StepBatch:
    return StepBatch(np.ones(b, np.int64), np.full(b, ctx, np.int64), b)


def test_70b_bf16_decode_on_h100_is_weight_bytes_over_bandwidth():
    """Small-batch decode streams the weights once: time ~ 141 GB / 3.35 TB/s = 42 ms at the datasheet rate;
    we expect 1-2x that (achievable bandwidth is below the datasheet)."""
    stm = StepTimeModel(llama33_70b(), h100(), default_calibration(h100().id), tp=1)
    t = stm(decode(1, 512))
    ideal = 70.55e9 * 2 / 3.35e12
    print(f"\n70B bf16 B=1 on H100: {t * 1e3:.1f} ms; weights/bandwidth {ideal * 1e3:.1f} ms; ratio {t / ideal:.2f}")
    assert 1.0 < t / ideal < 2.0


def test_tp2_roughly_halves_linear_time_and_adds_allreduce():
    one = StepTimeModel(llama33_70b(), h100(), default_calibration(h100().id), tp=1).breakdown(decode(32, 1024))
    two = StepTimeModel(llama33_70b(), h100(), default_calibration(h100().id), tp=2).breakdown(decode(32, 1024))
    print(f"\nlinear TP1 {one['linear'] * 1e3:.1f} ms, TP2 {two['linear'] * 1e3:.1f} ms; "
          f"all-reduce TP2 {two['allreduce'] * 1e3:.2f} ms; total {one['total'] * 1e3:.1f} -> {two['total'] * 1e3:.1f} ms")
    assert 0.45 < two["linear"] / one["linear"] < 0.6
    assert one["allreduce"] == 0 and two["allreduce"] > 0
    assert 0.5 < two["total"] / one["total"] < 0.75


def test_fp8_halves_weight_bytes_on_hopper():
    bf16 = StepTimeModel(llama33_70b(), h100(), default_calibration(h100().id), tp=2)
    fp8 = StepTimeModel(llama33_70b(), h100(), default_calibration(h100().id), tp=2, quantization="fp8")
    w16 = sum(g.weight_bytes for g in bf16.shapes.attn + bf16.shapes.dense_mlp)
    w8 = sum(g.weight_bytes for g in fp8.shapes.attn + fp8.shapes.dense_mlp)
    t16, t8 = bf16(decode(8, 1024)), fp8(decode(8, 1024))
    p16, p8 = bf16(StepBatch(np.array([8192]), np.array([0]), 1)), fp8(StepBatch(np.array([8192]), np.array([0]), 1))
    print(f"\nweights/layer bf16 {w16 / 1e6:.0f} MB, fp8 {w8 / 1e6:.0f} MB; decode {t16 * 1e3:.1f} -> {t8 * 1e3:.1f} ms; "
          f"prefill 8192 {p16 * 1e3:.0f} -> {p8 * 1e3:.0f} ms")
    assert w8 * 2 == w16 and fp8.wfmt.fp8_compute
    assert 0.5 < t8 / t16 < 0.75  # weights halve, KV reads and overheads stay
    assert p8 < 0.8 * p16  # fp8 tensor cores on the GEMMs



def test_lowbit_compute_eff_moves_only_the_gemms_on_fp8_tensor_cores():
    """fp8 and fp4 GEMMs reach their own share of their peak (lowbit_compute_eff): halving it slows a compute-bound
    fp8 prefill's GEMMs twofold; a bf16 model's steps and an fp8 decode's weight streaming stay as they were."""
    base = default_calibration("H100-SXM")
    slow = base.replace(lowbit_compute_eff=0.5 * base.lowbit_compute_eff)
    prefill = StepBatch(np.array([8192]), np.array([0]), 1)
    fp8 = [StepTimeModel(llama33_70b(), h100(), tp=2, quantization="fp8", calibration=c) for c in (base, slow)]
    bf16 = [StepTimeModel(llama33_70b(), h100(), tp=2, calibration=c) for c in (base, slow)]
    linear = [m.breakdown(prefill)["linear"] for m in fp8]
    assert linear[1] / linear[0] == pytest.approx(2.0, rel=0.1)
    assert bf16[1](prefill) == bf16[0](prefill)
    assert fp8[1](decode(8, 1024)) == pytest.approx(fp8[0](decode(8, 1024)), rel=0.02)

def test_decode_step_grows_with_context():
    stm = StepTimeModel(llama31_8b(), h200(), default_calibration(h200().id))
    ts = [stm(decode(64, c)) for c in (256, 2048, 8192, 32768)]
    print("\n" + ", ".join(f"C={c}: {t * 1e3:.2f} ms" for c, t in zip((256, 2048, 8192, 32768), ts)))
    assert all(a < b for a, b in zip(ts, ts[1:]))


def test_moe_touches_more_experts_as_the_batch_grows():
    stm = StepTimeModel(gpt_oss_120b(), h200(), default_calibration(h200().id))
    moe = [stm.breakdown(decode(b, 1024))["moe"] for b in (1, 8, 64, 256)]
    print("\nMoE ms at B=1/8/64/256: " + ", ".join(f"{m * 1e3:.2f}" for m in moe))
    assert all(a < b for a, b in zip(moe, moe[1:]))
    # B=1 reads 4 of 128 experts per layer; by B=256 all are touched: far less than 256x the cost
    assert moe[-1] / moe[0] < 40


def test_graphs_remove_the_eager_launch_floor_and_pad_to_buckets():
    g = StepTimeModel(llama31_8b(), h200(), default_calibration(h200().id))
    e = StepTimeModel(llama31_8b(), h200(), default_calibration(h200().id), enforce_eager=True)
    b = decode(3, 512)
    bd = g.breakdown(b)
    print(f"\nB=3 graph {g(b) * 1e3:.2f} ms (padded to {bd['padded_tokens']:.0f}), eager {e(b) * 1e3:.2f} ms")
    assert bd["padded_tokens"] == 4 and e(b) > 1.5 * g(b)


def test_breakdown_adds_up_and_call_matches():
    stm = StepTimeModel(llama33_70b(), h100(), default_calibration(h100().id), tp=4)
    batch = StepBatch(np.array([2048, 1, 1, 1]), np.array([0, 900, 4000, 120]), 3)
    bd = stm.breakdown(batch)
    parts = sum(v for k, v in bd.items() if k not in ("total", "padded_tokens"))
    assert bd["total"] == pytest.approx(parts) == pytest.approx(stm(batch))



def test_gemm_shape_dim_slows_the_gemms_tensor_parallelism_narrows():
    """A GEMM keeps d / (d + gemm_shape_dim) of its compute efficiency for its narrower side d, relative to 8,192:
    Llama-3.3-70B's GEMMs are all at least 8,192 wide at TP1 and keep their time; at TP8 its attention output
    projection is 1,024 deep and its compute-bound prefill slows."""
    base = default_calibration("H100-SXM").replace(gemm_shape_dim=0.0)
    narrow = base.replace(gemm_shape_dim=1024.0)
    prefill = StepBatch(np.array([8192]), np.array([0]), 1)
    tp1 = [StepTimeModel(llama33_70b(), h100(), c, tp=1).breakdown(prefill)["linear"] for c in (base, narrow)]
    tp8 = [StepTimeModel(llama33_70b(), h100(), c, tp=8).breakdown(prefill)["linear"] for c in (base, narrow)]
    assert tp1[1] == pytest.approx(tp1[0], rel=1e-3)
    assert tp8[1] > 1.1 * tp8[0]
