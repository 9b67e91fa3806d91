"""The capacity renderer shows each KV figure next to the formula's inputs, in text, Markdown and JSON."""
from __future__ import annotations

import json

import pytest
from test_capacity_specs import gpt_oss_120b, h100, h200, llama31_8b

from reader.capacity.api import CapacityRequest, compute_capacity
from reader.errors import ReaderError
from reader.render.capacity_view import render_capacity


def example(model=llama31_8b, gpu=h200, **kw):
    base = dict(model=model(), gpu=gpu(), vllm_version="0.20.0", max_model_len=32768, max_num_batched_tokens=16384,
                max_num_seqs=1024, gpu_memory_utilization=0.92, workload_mean_context=1800, workload_p99_context=9000,
                workload_context_sd=700)
    base.update(kw)
    return compute_capacity(CapacityRequest(**base))


def test_text_shows_inputs_next_to_results():
    cap = example()
    text = render_capacity(cap, "text")
    print("\n" + text)
    assert "2 (K,V) x 8 KV heads/GPU" in text  # the formula's inputs next to the bytes per token
    assert f"GPU KV cache size: {cap.gpu_kv_cache_tokens.value:,.0f} tokens" in text
    assert "fragmentation" in text and "(estimate)" in text


def test_markdown_and_json():
    cap = example(model=gpt_oss_120b, gpu=h100, vllm_version="0.11.0", max_model_len=131072,
                  max_num_batched_tokens=1024, gpu_memory_utilization=0.95)
    md = render_capacity(cap, "markdown")
    print("\n" + md)
    assert "| figure | value | how |" in md and "**Start-up fails**" in md
    data = json.loads(render_capacity(cap, "json"))
    assert data["startup_error"]["kind"] == "max_len_too_long"
    assert data["workers"][0]["weights"]["how"]
    with pytest.raises(ReaderError):
        render_capacity(cap, "html")
