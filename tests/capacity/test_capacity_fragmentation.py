"""The lesson's fragmentation exercise: 1,000 requests, outputs of mean 1,500 and sd 600 tokens,
(a) contiguous reservation at 8,192 tokens vs (b) paged 16-token blocks, on Llama 3.3 70B.

The lesson claims about 1.25 GB of BF16 KV per 8,192-token sequence and 82% waste.
"""
from __future__ import annotations

import pytest
from test_capacity_specs import llama33_70b

from reader.capacity.fragmentation import fragmentation, normal_lengths
from reader.capacity.kv import kv_layout
from reader.capacity.shapes import stage_layer_kinds

GiB = 1 << 30


def bytes_per_token(kv_bytes: float, tp: int = 1) -> float:
    m = llama33_70b()
    return kv_layout(m, stage_layer_kinds(m, [80], 0), tp, kv_bytes, 16).bytes_per_token_full


def test_lesson_exercise_contiguous_vs_paged():
    bpt = bytes_per_token(2.0)
    lengths = normal_lengths(1000, 1500, 600, low=1, high=8192)  # deterministic quantiles, no random draw
    rep = fragmentation(lengths, reserve_tokens=8192, block_size=16, bytes_per_token=bpt)
    per_seq = rep.bytes_per_reserved_sequence
    print(f"\nLlama 3.3 70B BF16: 80 layers x 2 x 8 KV heads x 128 x 2 B = {bpt:,.0f} B/token")
    print(f"one 8,192-token sequence: {per_seq:,.0f} B = {per_seq / 1e9:.2f} GB = {per_seq / GiB:.2f} GiB")
    print(f"{rep.num_requests} requests, mean {rep.mean_tokens:.1f} tokens ({rep.how})")
    print(f"(a) contiguous at 8,192: reserved {rep.contiguous_reserved_bytes / 1e9:,.1f} GB, used "
          f"{rep.used_bytes / 1e9:,.1f} GB, waste {100 * rep.contiguous_waste:.1f}%")
    print(f"(b) paged, 16-token blocks: allocated {rep.paged_allocated_bytes / 1e9:,.1f} GB, waste "
          f"{100 * rep.paged_waste:.2f}%")
    assert bpt == 327680
    assert per_seq == 8192 * 327680 == 2_684_354_560
    # 82% waste: a ratio, independent of bytes: 1 - 1500 / 8192 = 81.7%
    assert rep.contiguous_waste == pytest.approx(1 - 1500 / 8192, abs=0.002)
    assert round(100 * rep.contiguous_waste) == 82
    # paged waste is only the unfilled tail of the last block: ~7.5 of ~1,500 tokens
    assert 0.003 < rep.paged_waste < 0.007


def test_lesson_125_gb_is_half_the_bf16_figure():
    """Where our figure differs from '1.25 GB per sequence': BF16 at TP=1 is 2.68 GB (2.5 GiB). The lesson's
    1.25 is exactly 1,342,177,280 B = 1.25 GiB = half of it, which is what you get with an FP8 KV cache
    (1 B per element), or per GPU at TP=2 (4 of the 8 KV heads), or by counting K without V. It is not the
    BF16 size of one full sequence: that is off by 2x (and GB vs GiB adds another 7%)."""
    bf16 = 8192 * bytes_per_token(2.0)
    fp8 = 8192 * bytes_per_token(1.0)
    tp2 = 8192 * bytes_per_token(2.0, tp=2)
    print(f"\nBF16 TP1 {bf16 / GiB:.2f} GiB ({bf16 / 1e9:.2f} GB); FP8 TP1 {fp8 / GiB:.2f} GiB; BF16 per GPU at TP2 "
          f"{tp2 / GiB:.2f} GiB; lesson 1.25")
    assert fp8 == tp2 == 1.25 * GiB == bf16 / 2
    assert bf16 / 1e9 == pytest.approx(2.68, abs=0.01)
