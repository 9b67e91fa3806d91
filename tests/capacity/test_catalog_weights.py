"""Weights in GiB for every catalog model, checked against its published parameter count and its format.

For each model the capacity model's weights on one GPU (TP 1, PP 1, dtype auto) must equal

    parameters x the bytes per parameter of the format,

summed over the parts of the model (attention, linear mixers, dense MLPs, routed and shared experts, LM
head, and the 16-bit embedding, norms and routers), where a quantized part stores weight_bits plus one
scale (and, for asymmetric formats, one zero point) per group, as its QuantFormat says. Two checks:

- format: against the model's own parameter count, within 1.5% (vLLM pads the vocabulary to a multiple
  of 64 and keeps a few small tensors we count at 16 bits);
- published: against the published parameter count, within the published figure's precision (half a
  unit of its last written digit, at least 3%; or the entry's stated tolerance) plus the same 1.5%.
  Where the published figure includes a vision encoder or MTP layers that vLLM's language model does not
  load, ours may be up to 25% below it, never above.

MoE models are also checked on their published active parameters. Published figures come from each
model folder's source.yaml (published_params) or, for the older entries, from
fixtures/catalog/published_params.yaml; both name their sources.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from reader.capacity.api import CapacityRequest, compute_capacity
from reader.catalog import load
from reader.catalog.model_files import read_model_path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = REPO / "reader" / "catalog" / "models"
FIXTURE = yaml.safe_load((REPO / "fixtures" / "catalog" / "published_params.yaml").read_text())
FORMAT_TOLERANCE = 0.015
INCLUDES_SLACK = 0.25  # a published figure may count a vision encoder or MTP layers vLLM's LM leaves out


def _folder_entries() -> dict[str, tuple]:
    out = {}
    for source in sorted(FOLDERS.glob("*/*/source.yaml")):
        meta = yaml.safe_load(source.read_text())
        out[meta["id"]] = (read_model_path(source.parent), meta.get("published_params"))
    return out


def _all_models() -> dict[str, tuple]:
    models = {spec.id: (spec, FIXTURE.get(spec.id)) for spec in load.list_models()}
    for model_id, (spec, published) in _folder_entries().items():
        models[model_id] = (spec, published or FIXTURE.get(model_id))
    return models


MODELS = _all_models()


def _precision(published: dict) -> float:
    """Half a unit of the last written digit of the published figure, relative to it (at least 3%)."""
    if published.get("tolerance"):
        return float(published["tolerance"])
    number = re.search(r"\d+(?:\.(\d+))?", str(published.get("as_written", "")))
    if not number:
        return 0.03
    value = float(number.group(0))
    decimals = len(number.group(1) or "")
    half_unit = 0.5 * 10 ** -decimals
    return max(0.03, half_unit / value) if value else 0.03


def _figure_precision(count: int) -> float:
    """Half a unit of the last digit of a count as published in billions (3B: 0.5B; 5.1B: 0.05B), at least 3%."""
    text = f"{count / 1e9:.3f}".rstrip("0").rstrip(".")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return max(0.03, 0.5 * 10 ** -decimals / (count / 1e9))


def _within(ours: float, published: float, tolerance: float, includes: bool) -> bool:
    low = published * (1 - tolerance - (INCLUDES_SLACK if includes else 0.0))
    return low <= ours <= published * (1 + tolerance)


def _parts(spec) -> dict[str, int]:
    """Parameters by part: the reader's own split, or (older entries) the same arithmetic written out."""
    if spec.params_by_part:
        return dict(spec.params_by_part)
    h, layers = spec.hidden_size, spec.num_hidden_layers
    if spec.mla is not None:
        m = spec.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        q = h * m.q_lora_rank + m.q_lora_rank * spec.num_attention_heads * qk if m.q_lora_rank else \
            h * spec.num_attention_heads * qk
        attention = (q + h * (m.kv_lora_rank + m.qk_rope_head_dim)
                     + m.kv_lora_rank * spec.num_attention_heads * (m.qk_nope_head_dim + m.v_head_dim)
                     + spec.num_attention_heads * m.v_head_dim * h)
    else:
        hd = spec.head_dim
        attention = h * (spec.num_attention_heads + 2 * spec.num_key_value_heads) * hd + spec.num_attention_heads * hd * h
    moe_layers = spec.moe.moe_layers_in(0, layers) if spec.moe else 0
    parts = {"embedding": spec.vocab_size * h, "attention": attention * layers,
             "dense_mlp": 3 * h * spec.intermediate_size * (layers - moe_layers),
             "lm_head": 0 if spec.tie_word_embeddings else spec.vocab_size * h, "norms": (2 * layers + 1) * h}
    if spec.moe:
        moe = spec.moe
        shared = (moe.shared_expert_intermediate_size or moe.moe_intermediate_size) * moe.shared_experts
        parts.update(experts=moe_layers * moe.num_experts * 3 * h * moe.moe_intermediate_size,
                     shared_experts=moe_layers * 3 * h * shared, router=moe_layers * h * moe.num_experts)
    return parts


def _bytes_per_param(spec, parts: dict[str, int]) -> float:
    """Average stored bytes per parameter under the checkpoint's own format (16-bit where not quantized)."""
    q = spec.quantization
    total = sum(parts.values())
    stored = 0.0
    for part, count in parts.items():
        fmt = q.formats.get(part) if q is not None else None
        if fmt is None:
            bits = 16.0
        else:
            bits = fmt.weight_bits + ((fmt.scale_bits + fmt.zero_bits) / fmt.group_size if fmt.group_size else 0.0)
        stored += count * bits / 8
    return stored / total


def _weights_bytes(spec) -> float:
    cap = compute_capacity(CapacityRequest(model=spec, gpu=load.get_gpu("B200"), vllm_version="0.32.0",
                                           max_model_len=4096, max_num_batched_tokens=4096, max_num_seqs=64,
                                           gpu_memory_utilization=0.9))
    return cap.workers[0].weights.value


def test_the_catalog_holds_at_least_120_models_each_with_a_published_count():
    assert len(MODELS) >= 120
    missing = [model_id for model_id, (_, published) in MODELS.items() if not published]
    assert not missing, f"no published parameter count for: {missing}"


@pytest.mark.parametrize("model_id", sorted(MODELS))
def test_weights_follow_the_published_count_and_the_format(model_id):
    spec, published = MODELS[model_id]
    parts = _parts(spec)
    per_param = _bytes_per_param(spec, parts)
    ours = _weights_bytes(spec)
    own_params = sum(parts.values())
    assert ours == pytest.approx(own_params * per_param, rel=FORMAT_TOLERANCE), (
        f"{model_id}: {ours / 2**30:.2f} GiB against {own_params / 1e9:.2f}B x {per_param:.3f} B")
    tolerance = _precision(published)
    includes = bool(published.get("includes"))
    expected = published["total"] * per_param
    assert _within(ours, expected, tolerance + FORMAT_TOLERANCE, includes), (
        f"{model_id}: {ours / 2**30:.2f} GiB against published {published['as_written']} x {per_param:.3f} B = "
        f"{expected / 2**30:.2f} GiB (tolerance {tolerance:.1%})")
    assert _within(spec.params_total, published["total"], tolerance, includes)


@pytest.mark.parametrize("model_id", sorted(m for m, (spec, pub) in MODELS.items() if spec.moe and pub and pub.get("active")))
def test_moe_active_parameters_follow_the_published_figure(model_id):
    # Publishers count "active" parameters three ways: with the embedding table and the LM head (our
    # params_active), with the LM head only (OpenAI's 5.1B for gpt-oss-120b), or with neither (MiniMax's 10B).
    spec, published = MODELS[model_id]
    table = spec.vocab_size * spec.hidden_size
    lm_head = 0 if spec.tie_word_embeddings else table
    conventions = (spec.params_active, spec.params_active - table, spec.params_active - table - lm_head)
    # a card's rounded active figure may declare its own tolerance (active_tolerance, with why)
    tolerance = published.get("active_tolerance") or _figure_precision(published["active"])
    assert any(_within(count, published["active"], tolerance, bool(published.get("includes"))) for count in conventions), (
        f"{model_id}: active {[round(c / 1e9, 2) for c in conventions]}B against the published "
        f"{published['active'] / 1e9:g}B active ({published['as_written']})")


def test_quantized_formats_carry_their_scale_overhead():
    # int4 with a 16-bit scale per 32 weights stores 4.5 bits; per 128 with a 4-bit zero point 4.156;
    # mxfp4 4.25; nvfp4 4.5 (an fp8 scale per 16)
    kimi = MODELS["moonshotai/Kimi-K2-Thinking"][0].quantization.formats["experts"]
    awq = MODELS["casperhansen/mixtral-instruct-awq"][0].quantization.formats["experts"]
    oss = MODELS["openai/gpt-oss-120b"][0].quantization.formats["experts"]
    nvfp4 = MODELS["nvidia/DeepSeek-V3.1-NVFP4"][0].quantization.formats["experts"]
    assert [f.bits_per_weight for f in (kimi, awq, oss, nvfp4)] == pytest.approx([4.5, 4.15625, 4.25, 4.5])
