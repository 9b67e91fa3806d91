"""The maximum length vLLM derives from a model's config.json, and the max_model_len it picks when none is given.

vLLM (_get_and_verify_max_len, vllm/config/model.py @ v0.18.0 and v0.32.0) starts from the smallest length key
(the ModelSpec's max_position_embeddings), then:

- multiplies it by the RoPE scaling factor, except for the rope types whose max_position_embeddings is already the
  scaled length (su, longrope, llama3; from the change below also yarn, deepseek_yarn, deepseek_llama_scaling) and
  for Gemma 3, whose 128K is already scaled;
- v0.18.0: a YaRN mapping restarts from its own original_max_position_embeddings before the factor. v0.32.0 never
  scales YaRN (vLLM #56446, "stop re-scaling max_model_len", merged 2026-09-11; the releases between 0.18.0 and
  0.32.0 were not read: the older rule is kept below 0.32.0);
- with no max_model_len given, a LongRoPE model (Phi-3/3.5/4 128K) runs at its top-level
  original_max_position_embeddings (4,096 for Phi-3-mini-128k), not at the derived maximum.

Asked of the real CPU builds (tools/differential/rope_lengths.py, fixtures/differential/rope-lengths-vllm-*.json; tests/live/test_live_rope_overrides.py asks again):
TinyLlama's 2,048 positions with linear x4 derive 8,192 at both releases, dynamic x2 4,096, YaRN x4 from 2,048
8,192 at 0.18.0 and 2,048 at 0.32.0; Phi-3-mini-128k defaults to 4,096 at both and accepts 131,072 when given.
"""
from __future__ import annotations

from ..catalog.types import ModelSpec
from ..versions import VersionTuple

SOURCE = "vllm/config/model.py _get_and_verify_max_len @ v0.18.0 and v0.32.0"
_ALREADY_SCALED = {"su", "longrope", "llama3"}
_ALREADY_SCALED_FROM_0_32 = _ALREADY_SCALED | {"yarn", "deepseek_yarn", "deepseek_llama_scaling"}


def derived_max_len(model: ModelSpec, version: VersionTuple) -> int:
    """The longest max_model_len vLLM accepts for the model without VLLM_ALLOW_LONG_MAX_MODEL_LEN."""
    length, rope = model.max_position_embeddings, model.rope_scaling
    if rope is None or "gemma3" in model.model_type:
        return length
    scaled_already = _ALREADY_SCALED_FROM_0_32 if version >= (0, 32) else _ALREADY_SCALED
    if rope.type in scaled_already:
        return length
    if rope.type == "yarn" and rope.original_max_position_embeddings:
        length = rope.original_max_position_embeddings
    return int(length * (rope.factor or 1.0))


def default_max_len(model: ModelSpec, version: VersionTuple) -> tuple[int, str]:
    """max_model_len when the user gives none, and why."""
    derived = derived_max_len(model, version)
    if model.max_len_assumed:
        return derived, (f"vLLM's assumption for a config.json that names no length ({derived:,}; "
                         "_get_and_verify_max_len, vllm/config/model.py)")
    rope = model.rope_scaling
    if rope is not None and rope.type == "longrope" and model.original_max_position_embeddings:
        return (model.original_max_position_embeddings,
                f"the model's original_max_position_embeddings: vLLM runs a LongRoPE model at its pre-scaling "
                f"length unless --max-model-len asks for more (up to {derived:,})")
    if derived != model.max_position_embeddings:
        return derived, (f"the length vLLM derives from the model's config.json: {rope.type} RoPE scaling "
                         f"(factor {rope.factor or 1:g}) of its {model.max_position_embeddings:,} positions")
    return derived, "the model's max_position_embeddings (derived from its config.json)"
