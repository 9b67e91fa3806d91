"""KV waste of contiguous per-request reservation against paged blocks, for a length distribution.

Contiguous (pre-paging servers, static batching): every request reserves `reserve_len` tokens of KV
up front, so the waste is everything past its real length. Paged (vLLM): a request holds
ceil(len / block_size) blocks, so the waste is only the unfilled tail of its last block.
"""
from __future__ import annotations

from statistics import NormalDist
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..errors import ReaderError

if TYPE_CHECKING:  # numpy is imported where lengths are computed: `check` sizes memory without it
    import numpy as np


class FragmentationReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    num_requests: int
    mean_tokens: float  # mean real length (tokens in the KV cache at the end of each request)
    reserve_tokens: int  # contiguous reservation per request (max_model_len)
    block_size: int
    bytes_per_token: float
    used_bytes: float
    contiguous_reserved_bytes: float
    contiguous_waste: float  # fraction of the reservation never used
    paged_allocated_bytes: float
    paged_waste: float  # fraction of allocated blocks never used
    bytes_per_reserved_sequence: float  # one sequence at reserve_tokens
    how: str


def normal_lengths(n: int, mean: float, sd: float, low: int = 1, high: int | None = None) -> np.ndarray:
    """n lengths at the quantiles (i + 0.5) / n of a normal distribution, rounded and clipped.

    Deterministic (no random draw), so every run of a test prints the same figures.
    """
    import numpy as np

    if n <= 0 or mean <= 0 or sd < 0:
        raise ReaderError("length distribution needs n > 0, mean > 0, sd >= 0", key="workload")
    dist = NormalDist(mean, sd) if sd > 0 else None
    q = [(i + 0.5) / n for i in range(n)]
    xs = np.array([dist.inv_cdf(p) if dist else mean for p in q])
    return np.clip(np.rint(xs), low, high if high is not None else np.inf).astype(np.int64)


def fragmentation(lengths: np.ndarray, reserve_tokens: int, block_size: int, bytes_per_token: float
                  ) -> FragmentationReport:
    import numpy as np

    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size == 0 or reserve_tokens <= 0 or block_size <= 0:
        raise ReaderError("fragmentation needs lengths, a reservation and a block size", key="workload")
    lengths = np.minimum(lengths, reserve_tokens)  # a request can never exceed max_model_len
    used = float(lengths.sum())
    reserved = float(lengths.size * reserve_tokens)
    paged = float((np.ceil(lengths / block_size) * block_size).sum())
    how = (f"{lengths.size} requests, mean {lengths.mean():.0f} tokens; contiguous: 1 - used / "
           f"({lengths.size} x {reserve_tokens}); paged: 1 - used / sum(ceil(len / {block_size}) x {block_size}); "
           f"x {bytes_per_token:,.0f} B/token")
    return FragmentationReport(
        num_requests=int(lengths.size), mean_tokens=float(lengths.mean()), reserve_tokens=reserve_tokens,
        block_size=block_size, bytes_per_token=bytes_per_token, used_bytes=used * bytes_per_token,
        contiguous_reserved_bytes=reserved * bytes_per_token, contiguous_waste=1 - used / reserved,
        paged_allocated_bytes=paged * bytes_per_token, paged_waste=1 - used / paged,
        bytes_per_reserved_sequence=reserve_tokens * bytes_per_token, how=how)
