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
