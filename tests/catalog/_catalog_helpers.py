"""Shared helpers for the catalog tests (no test functions here)."""
from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
HF_FIXTURES = REPO / "fixtures" / "hf_configs"
REFERENCE_FIGURES = yaml.safe_load((REPO / "fixtures" / "catalog" / "reference_figures.yaml").read_text())


def kv_bytes_per_token_bf16(spec) -> int:
    """KV-cache bytes per token if every layer kept every token (MLA: one latent per layer)."""
    if spec.mla is not None:
        return spec.num_hidden_layers * (spec.mla.kv_lora_rank + spec.mla.qk_rope_head_dim) * 2
    return 2 * spec.num_hidden_layers * spec.num_key_value_heads * spec.head_dim * 2
