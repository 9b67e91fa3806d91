"""Request state, one numpy column per field (request i is row i).

The scheduler's hot loop reads and writes whole columns at once, so the state is a table of
arrays rather than one object per request. What the prompt *contains* matters only for prefix
caching; `TokenContent` gives the block hash chain of a request (see the two kinds below).
"""
from __future__ import annotations

import numpy as np

# Request status (vllm/v1/request.py RequestStatus, reduced to what the scheduler distinguishes).
PENDING = 0     # not arrived yet
WAITING = 1     # in the waiting queue, never scheduled
RUNNING = 2
PREEMPTED = 3   # in the waiting queue after a recompute preemption
FINISHED = 4
REJECTED = 5    # refused at arrival (prompt too long for max_model_len), as vLLM's input processor does


class RequestTable:
    """Columns of per-request state. Token counts follow vLLM's Request:
    num_tokens = prompt + generated output; num_computed tokens already in the KV cache (or being
    computed this step); num_spec draft tokens attached for the next step."""

    __slots__ = ("ids", "n", "prompt_len", "max_tokens", "priority", "arrival", "num_tokens",
                 "num_output", "num_computed", "num_spec", "status", "num_preemptions",
                 "is_prefill_chunk", "lingering", "high_water")

    def __init__(self, ids: list[str], prompt_len, max_tokens, priority=None, arrival=None) -> None:
        n = len(ids)
        self.ids = list(ids)
        self.n = n
        self.prompt_len = np.asarray(prompt_len, dtype=np.int64).copy()
        self.max_tokens = np.asarray(max_tokens, dtype=np.int64).copy()
        self.priority = (np.zeros(n, dtype=np.int64) if priority is None
                         else np.asarray(priority, dtype=np.int64).copy())
        # arrival_time as vLLM sees it: orders the priority queue and picks the priority victim.
        self.arrival = (np.arange(n, dtype=np.float64) if arrival is None
                        else np.asarray(arrival, dtype=np.float64).copy())
        self.num_tokens = self.prompt_len.copy()
        self.num_output = np.zeros(n, dtype=np.int64)
        self.num_computed = np.zeros(n, dtype=np.int64)
        self.num_spec = np.zeros(n, dtype=np.int64)
        self.status = np.zeros(n, dtype=np.int8)
        self.num_preemptions = np.zeros(n, dtype=np.int64)
        self.is_prefill_chunk = np.zeros(n, dtype=bool)
        # Async scheduling: finished in the step still in flight; skipped until released.
        self.lingering = np.zeros(n, dtype=bool)
        # Tokens computed when last preempted (the most so far): scheduling below it is recomputation.
        self.high_water = np.zeros(n, dtype=np.int64)


class TokenContent:
    """Block hashes of a request's token sequence (prompt, then generated tokens).

    `block_hash(r, i)` identifies the content of block i of request r *and of every block before
    it* (vLLM chains each block's hash to its parent's, kv_cache_utils.py hash_block_tokens), so
    two requests share block i exactly when their first (i+1)*block_size tokens are equal. It is
    only asked for blocks that are full of known tokens.
    """

    def block_hash(self, r: int, i: int) -> object:  # pragma: no cover - interface
        raise NotImplementedError

    def block_hashes(self, r: int, start: int, stop: int):
        """Hashes of blocks start..stop-1 of request r."""
        return [self.block_hash(r, i) for i in range(start, stop)]

    def on_tokens_generated(self, r: int, count: int) -> None:
        """Request r appended `count` generated tokens."""

    def unique_from(self, r: int) -> int:
        """First block index from which r's blocks can only ever match r itself (a large number
        when that cannot be promised)."""
        return 1 << 40


class ExplicitTokens(TokenContent):
    """Real token ids (the oracle's scenarios): hash = interned (parent hash, block tokens)."""

    def __init__(self, prompts: list[list[int]], block_size: int, sampled_token_id: int) -> None:
        self.tokens = [list(p) for p in prompts]
        self.block_size = block_size
        self.sampled_token_id = sampled_token_id
        self.hashes: list[list[int]] = [[] for _ in prompts]
        self._intern: dict[tuple, int] = {}

    def block_hash(self, r: int, i: int) -> int:
        chain = self.hashes[r]
        bs = self.block_size
        toks = self.tokens[r]
        while len(chain) <= i:
            j = len(chain)
            parent = chain[-1] if chain else -1
            key = (parent, tuple(toks[j * bs:(j + 1) * bs]))
            h = self._intern.get(key)
            if h is None:
                h = self._intern[key] = len(self._intern)
            chain.append(h)
        return chain[i]

    def on_tokens_generated(self, r: int, count: int) -> None:
        self.tokens[r].extend([self.sampled_token_id] * count)


class SharedPrefixContent(TokenContent):
    """Synthetic prompts: the first prefix_len[r] tokens come from shared prefix group[r]
    (the same tokens for every request of the group; a shorter prefix is a prefix of a longer
    one), everything after is unique to the request (including its generated tokens).

    Hashes are plain ints: r * _P + i for block i of request r's own content, -(g * _P + i) - 1 for
    block i of group g's prefix. _P is a prime above any block count, so hashes are unique and their
    low bits vary (dict slots are picked by the low bits)."""

    _P = 1_048_583  # prime > 2**20 blocks (16M tokens of 16) per request

    def __init__(self, group, prefix_len, block_size: int) -> None:
        self.group = np.asarray(group, dtype=np.int64)
        self.prefix_len = np.asarray(prefix_len, dtype=np.int64)
        self.block_size = block_size
        self._group = self.group.tolist()
        # blocks wholly inside the shared prefix, per request
        self._shared = np.where(self.group >= 0, self.prefix_len // block_size, 0).tolist()

    def unique_from(self, r: int) -> int:
        return self._shared[r]

    def block_hash(self, r: int, i: int) -> int:
        g = int(self.group[r])
        if g >= 0 and (i + 1) * self.block_size <= self.prefix_len[r]:
            return -(g * self._P + i) - 1
        return r * self._P + i

    def block_hashes(self, r: int, start: int, stop: int):
        g = self._group[r]
        mid = min(max(self._shared[r], start), stop)
        base = r * self._P
        unique = range(base + mid, base + stop)
        if mid == start:
            return unique
        gbase = -(g * self._P) - 1
        return [*range(gbase - start, gbase - mid, -1), *unique]
