"""One engine step's batch, as the step-time model sees it.

The simulator builds one per step; the step-time model turns it into seconds. It is the only
type the two share, so the simulator knows nothing of GPUs and the step-time model nothing of
scheduling.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class StepBatch:
    """Requests scheduled in one step.

    new_tokens[i]  tokens request i computes this step (prefill chunk, 1 for a decode, 1+k with k drafts)
    past_tokens[i] tokens of request i already in the KV cache before this step (its context)
    sampled        rows that go through the LM head (decodes, and prefills whose last chunk ends this step)
    """

    new_tokens: np.ndarray
    past_tokens: np.ndarray
    sampled: int

    @property
    def num_seqs(self) -> int:
        return int(self.new_tokens.size)

    @property
    def num_tokens(self) -> int:
        return int(self.new_tokens.sum())
