"""The draft model of speculative decoding, as far as its config.json says what vLLM checks about it.

vLLM builds a second ModelConfig for a draft (`SpeculativeConfig.__post_init__`) and refuses one whose
vocabulary differs from the target's, whose context is shorter than `max_model_len` asks, whose heads the
draft's tensor parallel size does not divide, or whose `n_predict` does not divide `num_speculative_tokens`.
Those checks need the draft's own figures: they come from its config.json when the draft is a local folder or
file, or from the catalog when it names a catalog model. Anything else (a Hub id we do not ship) is unknown,
and the rules that need it are skipped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel

from ..errors import ReaderError

# what vLLM puts in `model` for the methods that have no draft model of their own
NOT_A_DRAFT = {"ngram", "[ngram]", "ngram_gpu", "suffix", "extract_hidden_states"}


class DraftModel(BaseModel):
    model_type: Optional[str] = None
    architectures: Optional[list[str]] = None
    vocab_size: Optional[int] = None
    max_position_embeddings: Optional[int] = None
    num_attention_heads: Optional[int] = None
    n_predict: Optional[int] = None
    from_file: bool = False  # read from a local config.json (so a missing n_predict is known to be missing)


def read_draft(name: Optional[str]) -> Optional[DraftModel]:
    """The draft's figures, or None when the draft cannot be read (the rules that need them are then unknown)."""
    if not isinstance(name, str) or not name.strip() or name.strip() in NOT_A_DRAFT:
        return None
    path = Path(name.strip()).expanduser()
    if path.exists():
        return _from_file(path)
    from ..catalog import load as catalog

    spec = catalog.find_model(name)
    if spec is None:
        return None
    return DraftModel(model_type=spec.model_type, architectures=list(spec.architectures), vocab_size=spec.vocab_size,
                      max_position_embeddings=spec.max_position_embeddings,
                      num_attention_heads=spec.num_attention_heads)


def _from_file(path: Path) -> Optional[DraftModel]:
    from ..catalog.hf_config import read_json
    from ..catalog.model_files import find_model_files

    try:
        files = find_model_files(path)
        config = read_json(files.config) if files.config is not None else None
    except ReaderError:
        config = None
    if config is None:
        return None  # vLLM reads the draft on the server; a file we cannot read here is not the user's error
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    archs = config.get("architectures")
    return DraftModel(model_type=_text(config.get("model_type")),
                      architectures=[a for a in archs if isinstance(a, str)] if isinstance(archs, list) else None,
                      vocab_size=_int(text.get("vocab_size")),
                      max_position_embeddings=_int(text.get("max_position_embeddings")),
                      num_attention_heads=_int(text.get("num_attention_heads")), n_predict=_int(config.get("n_predict")),
                      from_file=True)


def _int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None
