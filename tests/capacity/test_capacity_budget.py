"""Token-budget arithmetic: decode seats, prefill chunks, steps to the first token, N_max."""
from __future__ import annotations

import pytest

from reader.capacity.budget import budget_report, decode_seats, n_max, prefill_chunks, steps_to_first_token
from reader.errors import ReaderError


def test_decode_seats_are_bounded_by_budget_and_max_num_seqs():
    assert decode_seats(8192, 256) == 256
    assert decode_seats(128, 256) == 128  # the budget binds
    assert decode_seats(8192, 1024, spec_tokens=3) == 1024 and decode_seats(2048, 1024, spec_tokens=3) == 512


def test_prefill_chunks_take_what_the_decodes_leave():
    assert prefill_chunks(5000, 2048, running_decodes=48) == [2000, 2000, 1000]
    assert steps_to_first_token(5000, 2048, running_decodes=48) == 3
    assert prefill_chunks(5000, 8192) == [5000]
    assert prefill_chunks(1000, 2048, long_prefill_threshold=256) == [256, 256, 256, 232]
    with pytest.raises(ReaderError, match="chunked prefill"):
        prefill_chunks(5000, 2048, chunked=False)


def test_report_and_n_max():
    rep = budget_report(2048, 256, running_decodes=100, prompt_lens=[512, 4096, 32768], num_blocks=26000,
                        block_size=16, mean_context=2000, p99_context=12000)
    print("\n" + rep.how)
    for r in rep.prompts:
        print(f"  prompt {r.prompt_len:>6}: {r.steps_to_first_token} steps, chunks {r.chunks[:3]}...")
    assert rep.prefill_tokens_per_step == 1948
    assert [r.steps_to_first_token for r in rep.prompts] == [1, 3, 17]
    assert rep.n_max_mean == pytest.approx(26000 * 16 / 2000) == n_max(26000, 16, 2000)
