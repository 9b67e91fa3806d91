"""Is this text a vLLM log? A cheap first look, so config loading pays nothing for the question."""
from __future__ import annotations

import re

# Strings only vLLM's logger or its start-up and stats messages print.
_MARKERS = re.compile(
    r"(?:DEBUG|INFO|WARNING|ERROR) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./\-]+\.py:\d+\]"
    r"|LLM engine \(v?[^)]*\) with config: |non-default args: \{|Avg prompt throughput: "
    r"|Available KV cache memory: |KV cache size: [\d,]+ tokens|# (?:GPU|cuda) blocks: \d+"
    r"|Loading model weights took |Model loading took |Memory profiling results|max seq len \(\d+\)")


def may_be_log(text: str) -> bool:
    return _MARKERS.search(text[:4_000_000]) is not None


# Files whose form is a config even when they quote log lines (in comments, in strings).
_CONFIG_SUFFIXES = (".json", ".yaml", ".yml", ".sh", ".bash", ".zsh", ".ps1", ".toml", ".md")
_COMMENT = re.compile(r"^\s*#(?! ?(?:GPU|cuda|CUDA|CPU) blocks)")


def is_log(text: str, path: str | None = None) -> bool:
    """A vLLM log rather than a config: vLLM's messages, outside comment lines."""
    if path and str(path).lower().endswith(_CONFIG_SUFFIXES) or not may_be_log(text):
        return False
    from .read import read_log

    body = "\n".join("" if _COMMENT.match(line) else line for line in text[:2_000_000].splitlines())
    return read_log(body).is_vllm_log
