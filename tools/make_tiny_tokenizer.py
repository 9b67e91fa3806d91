"""Write the tiny test model's tokenizer (fixtures/live/tiny-llama): a word-level vocabulary over its 1,024 ids.

    python tools/make_tiny_tokenizer.py [MODEL_DIR]      (needs the `tokenizers` package: the vLLM venvs have it)

`vllm bench serve --dataset-name random` draws token ids below the tokenizer's vocabulary size, decodes them to
text and re-encodes the text to hit the requested prompt length, so the tokenizer must round-trip every id:
each id is one whitespace-separated word ("w17"), and text is split on whitespace only. Ids 0-2 are the
special tokens the model's config.json names (unk, bos 1, eos 2); the benchmark never samples them. No
post-processor, so a prompt gets no extra BOS and its token count is exactly what the benchmark asked for.
The output is deterministic: rerunning the script rewrites the same bytes.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

SPECIAL = {"<unk>": 0, "<s>": 1, "</s>": 2}


def build(model_dir: Path) -> None:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit

    vocab_size = json.loads((model_dir / "config.json").read_text())["vocab_size"]
    vocab = dict(SPECIAL)
    vocab.update({f"w{i}": i for i in range(len(SPECIAL), vocab_size)})
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = WhitespaceSplit()
    tokenizer.add_special_tokens(list(SPECIAL))
    tokenizer.save(str(model_dir / "tokenizer.json"), pretty=False)
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "<unk>", "bos_token": "<s>",
              "eos_token": "</s>", "model_max_length": 4096, "clean_up_tokenization_spaces": False}
    (model_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    here = Path(__file__).resolve().parents[1]
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else here / "fixtures" / "live" / "tiny-llama")
