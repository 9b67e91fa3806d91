"""What a model's name says when its files are out of reach.

Two readings, both guesses that the report states as such:
- `candidate_ids(path)`: the Hugging Face ids a path inside a serving container most likely holds,
  from its last components (`/models/deepseek-coder-33b-instruct` -> deepseek-ai/deepseek-coder-33b-instruct,
  the cache's `models--Qwen--Qwen1.5-7B-Chat` -> Qwen/Qwen1.5-7B-Chat, `./Qwen/Qwen3-8B` -> Qwen/Qwen3-8B);
- `quantization_from_name(name)`: the weight format a checkpoint's name announces (`-FP8`, `-AWQ`,
  `-GPTQ-Int4`, `-NVFP4`, `quantized.w8a8`, `-bnb-4bit`, ...) and the name without it;
- `named_base(name, known)`: the known model a re-upload or fine-tune is named after
  (`TheBloke/Llama-2-7B-Chat` -> llama-2-7b-chat-hf, `my-org/Qwen2.5-7B-Instruct-abliterated` ->
  qwen2.5-7b-instruct, `NousResearch/Hermes-3-Llama-3.1-8B` -> llama-3.1-8b).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

from .hf_cache import repo_id_from_folder
from .types import QuantSpec

# Hugging Face organisations that publish each family, for a bare folder name (first match wins).
# The organisation names are the publishers' own accounts on huggingface.co.
ORG_BY_NAME: tuple[tuple[str, str], ...] = (
    (r"nemotron", "nvidia"),
    (r"(meta-)?llama-?[234]|codellama|llama-guard", "meta-llama"),
    (r"qwen|qwq", "Qwen"),
    (r"deepseek", "deepseek-ai"),
    (r"mistral|mixtral|codestral|ministral|magistral|devstral|pixtral", "mistralai"),
    (r"gemma|codegemma|paligemma", "google"),
    (r"phi-", "microsoft"),
    (r"gpt-oss", "openai"),
    (r"kimi", "moonshotai"),
    (r"glm-4\.[5-9]|glm-[5-9]", "zai-org"),
    (r"minimax", "MiniMaxAI"),
    (r"yi-", "01-ai"),
    (r"falcon", "tiiuae"),
    (r"granite", "ibm-granite"),
    (r"olmo", "allenai"),
    (r"smollm", "HuggingFaceTB"),
    (r"distilgpt2", "distilbert"),
    (r"gpt2", "openai-community"),
    (r"internlm", "internlm"),
    (r"baichuan", "baichuan-inc"),
)

_SNAPSHOT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Candidate:
    repo_id: str
    why: str  # how the id was read from the path, for the report
    revision: Optional[str] = None  # a snapshot commit named in the path


def _parts(path: str) -> list[str]:
    return [p for p in re.split(r"[/\\]+", path.strip()) if p not in ("", ".", "..", "~")]


def candidate_ids(path: str, known_orgs: frozenset[str] = frozenset(), bare_match=None,
                  label: str = "the folder name") -> list[Candidate]:
    """Ids a path most likely names, best first; `bare_match(name)` maps a bare name to a known id."""
    parts = _parts(path)
    out: list[Candidate] = []
    for i, part in enumerate(parts):
        repo = repo_id_from_folder(part)
        if repo:
            rest = parts[i + 1:]
            revision = rest[1] if len(rest) >= 2 and rest[0] == "snapshots" and _SNAPSHOT.fullmatch(rest[1]) else None
            out.append(Candidate(repo, f"the Hugging Face cache folder name '{part}'", revision))
    if out or not parts:
        return out
    base = parts[-1]
    if len(parts) >= 2 and parts[-2].lower() in known_orgs | {o.lower() for _, o in ORG_BY_NAME}:
        out.append(Candidate(f"{parts[-2]}/{base}", f"the last two components of '{path.strip()}'"))
    matched = bare_match(base) if bare_match else None
    if matched:
        out.append(Candidate(matched, f"{label} '{base}'"))
    org = org_for(base)
    if org:
        out.append(Candidate(f"{org}/{base}", f"{label} '{base}' ({org} publishes this family)"))
    return _unique(out)


def org_for(name: str) -> Optional[str]:
    low = name.lower()
    return next((org for pattern, org in ORG_BY_NAME if re.match(pattern, low)), None)


def _unique(items: list[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item.repo_id.lower() not in seen:
            seen.add(item.repo_id.lower())
            out.append(item)
    return out


# ---------------------------------------------------------------------------------------------
# Quantization announced by the name

@dataclass(frozen=True)
class NameQuant:
    base: str  # the name without the quantization suffix
    suffix: str  # as written
    spec: QuantSpec
    words: str  # e.g. "FP8 weights (8 bits)"


# (suffix pattern at the end of the name, vLLM quantization method, bits per weight, modules, words).
# Bits are the payload; reader/capacity adds each method's scale overhead. The LM head stays in the
# model dtype for every format here, as in the usual exports (vLLM skips ParallelLMHead for fp8).
_SUFFIXES: tuple[tuple[str, str, float, str, str], ...] = (
    (r"[-_.]fp8[-_]dynamic", "compressed-tensors", 8.0, "all_but_lm_head", "FP8 weights, dynamic activation scales"),
    (r"[-_.](quantized\.)?w8a8([-_.]?(fp8|int8))?", "compressed-tensors", 8.0, "all_but_lm_head", "W8A8 (8-bit weights)"),
    (r"[-_.](quantized\.)?w8a16", "compressed-tensors", 8.0, "all_but_lm_head", "W8A16 (8-bit weights)"),
    (r"[-_.](quantized\.)?w4a16", "compressed-tensors", 4.0, "all_but_lm_head", "W4A16 (4-bit weights)"),
    (r"[-_.](quantized\.)?w4a8", "compressed-tensors", 4.0, "all_but_lm_head", "W4A8 (4-bit weights)"),
    (r"[-_.]nvfp4", "modelopt_fp4", 4.0, "all_but_lm_head", "NVFP4 weights (4 bits plus scales)"),
    (r"[-_.]fp4", "modelopt_fp4", 4.0, "all_but_lm_head", "FP4 weights (NVFP4-style, 4 bits plus scales)"),
    (r"[-_.]mxfp4", "mxfp4", 4.0, "experts_only", "MXFP4 expert weights"),
    (r"[-_.]fp8([-_.](static|e4m3|block|kv))*", "fp8", 8.0, "all_but_lm_head", "FP8 weights (8 bits)"),
    (r"[-_.]awq([-_.]int4|[-_.]4bit)?", "awq", 4.0, "all_but_lm_head", "AWQ 4-bit weights"),
    (r"[-_.]gptq[-_.]int8|[-_.]gptq[-_.]8bit", "gptq", 8.0, "all_but_lm_head", "GPTQ 8-bit weights"),
    (r"[-_.]gptq([-_.]int4|[-_.]4bit)?|[-_.]4bit[-_.]gptq", "gptq", 4.0, "all_but_lm_head", "GPTQ 4-bit weights"),
    (r"[-_.]bnb[-_.]4bit|[-_.]unsloth[-_.]bnb[-_.]4bit", "bitsandbytes", 4.0, "all_but_lm_head",
     "bitsandbytes 4-bit weights"),
    (r"[-_.]bnb[-_.]8bit", "bitsandbytes", 8.0, "all_but_lm_head", "bitsandbytes 8-bit weights"),
    (r"[-_.]int4", "gptq", 4.0, "all_but_lm_head", "4-bit integer weights (GPTQ-style)"),
    (r"[-_.]int8", "gptq", 8.0, "all_but_lm_head", "8-bit integer weights (GPTQ-style)"),
)
_GGUF = re.compile(r"[-_.]gguf(/|$)", re.IGNORECASE)


def quantization_from_name(name: str) -> Optional[NameQuant]:
    """The quantization the repository name announces, or None when it announces none."""
    text = name.rstrip("/")
    head, _, base = text.rpartition("/")
    for pattern, method, bits, modules, words in _SUFFIXES:
        match = re.search(f"(?:{pattern})$", base, re.IGNORECASE)
        if match and match.start() > 0:
            spec = QuantSpec(method=method, weight_bits=bits, quantized_modules=modules)
            stripped = base[:match.start()]
            return NameQuant(base=f"{head}/{stripped}" if head else stripped, suffix=match.group(0).lstrip("-_."),
                             spec=spec, words=words)
    return None


# ---------------------------------------------------------------------------------------------
# The base model a re-upload or fine-tune is named after

# A size in a name (`8B`, `0.5b`, `135M`, `8x7B`): a base found inside a longer name must carry one, so
# that a family word alone ("llama", "qwen") never stands for a model.
_SIZE_TOKEN = re.compile(r"(^|-)(\d+x)?\d+(\.\d+)?[bm]($|-)")


def _bare_key(name: str) -> str:
    """Lower-cased repository name, `_` read as `-`, without the `-hf` that Meta's conversions carry."""
    key = name.rstrip("/").rsplit("/", 1)[-1].lower().replace("_", "-")
    return key[:-3] if key.endswith("-hf") else key


def named_base(name: str, known: Iterable[str]) -> Optional[str]:
    """The known repository name (as given in `known`) that `name` is a variant of, or None.

    Three readings, first hit wins: the name with trailing words dropped one at a time (`-Instruct-abliterated`,
    `-Chat`, `-v2`) is a known name; else the longest known name that carries a size and sits inside the
    name between separators (a fine-tune that names its base, `Hermes-3-Llama-3.1-8B`); else a known name
    whose family prefix starts the name and whose size is one of its words (`Llama-3.1-Tulu-3-8B`)."""
    by_key: dict[str, str] = {}
    for item in known:
        by_key.setdefault(_bare_key(item), item)
    key = _bare_key(name)
    words = key.split("-")
    for end in range(len(words), 1, -1):
        hit = by_key.get("-".join(words[:end]))
        if hit is not None:
            return hit
    inside = [k for k in by_key if _SIZE_TOKEN.search(k) and k != key and re.search(f"(^|-){re.escape(k)}($|-)", key)]
    if inside:
        return by_key[max(inside, key=len)]
    return _same_family_and_size(key, by_key)


def _same_family_and_size(key: str, by_key: dict[str, str]) -> Optional[str]:
    """A fine-tune that keeps its base's family prefix and size with words between (`llama-3.1-tulu-3-8b` ->
    llama-3.1-8b): the known name with the longest such family, the shortest of those."""
    words = set(key.split("-"))
    best: Optional[tuple[int, int, str]] = None
    for known in by_key:
        size = _SIZE_TOKEN.search(known)
        family = known[:size.start()].rstrip("-") if size else ""
        if not family or not key.startswith(family + "-") or size.group(0).strip("-") not in words:
            continue
        rank = (-len(family), len(known), known)
        best = rank if best is None or rank < best else best
    return by_key[best[2]] if best else None


def is_gguf(name: str) -> bool:
    return bool(_GGUF.search(name.rstrip("/")))


__all__ = ["candidate_ids", "Candidate", "org_for", "quantization_from_name", "NameQuant", "named_base", "is_gguf",
           "ORG_BY_NAME"]
