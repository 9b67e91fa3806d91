"""Whether `--hf-overrides` changes the maximum length vLLM derives from the model's config.json, per release.

vLLM splits the overrides: flat values are applied while the config is loaded, mapping values (a `rope_scaling`
dict) afterwards, by setattr (ModelConfig.__post_init__ "Separate dict overrides from flat ones",
vllm/config/model.py @ v0.18.0 and v0.32.0). Then:

- v0.18.0 (with its transformers 4.57): the rope parameters were patched before the mapping is set, so a
  `rope_scaling` override never reaches the derived maximum.
- v0.32.0 and v0.33.0 (transformers 5): the override does reach the rope parameters, but _get_and_verify_max_len
  never scales by the factor of the rope types that keep max_position_embeddings already scaled (su, longrope,
  llama3, yarn, deepseek_yarn, deepseek_llama_scaling).

Seen on the real CPU builds: both refuse `--max-model-len 131072` for Qwen2.5-32B-Instruct with a YaRN factor 4
override ("derived max_model_len (max_position_embeddings=32768.0 ...)",
fixtures/differential/corpus-vllm-0.32.0.jsonl and -0.18.0.jsonl, shell_t0-1_isambard_qwen_tools.sh), and
0.32.0 accepts it with a linear factor 4 where 0.18.0 refuses (fixtures/differential/rope-overrides-vllm-*.json).
The releases between were not read, so for them nothing is said.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from ..versions import VersionTuple

# rope types whose factor _get_and_verify_max_len does not apply (vllm/config/model.py @ v0.32.0, v0.33.0)
UNSCALED_ROPE_TYPES = {"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"}
_ROPE_KEYS = {"rope_scaling", "rope_parameters"}


def keeps_derived_max_len(overrides: Any, version: VersionTuple) -> Optional[bool]:
    """True when vLLM at `version` derives the same maximum length with these overrides as without them; None
    when the overrides hold anything but rope mappings, or the release was not read."""
    mapping = _as_mapping(overrides)
    if not mapping or set(mapping) - _ROPE_KEYS or not all(isinstance(v, dict) for v in mapping.values()):
        return None
    if version[:2] == (0, 18):
        return True
    if version[:2] >= (0, 32):
        types = {str(v.get("rope_type", v.get("type", ""))) for v in mapping.values()}
        return types <= UNSCALED_ROPE_TYPES or None
    return None


def _as_mapping(value: Any) -> Optional[dict]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None
