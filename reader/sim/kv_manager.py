"""KV cache manager: the blocks each request holds, allocation for exactly the tokens computed,
the admission gates, and prefix-cache lookups. The scheduler touches blocks only through this.

Mirrors vLLM's KVCacheManager + FullAttentionManager for one full-attention group with
block_size == hash block size (vllm/v1/core/kv_cache_manager.py allocate_slots and
single_type_kv_cache_manager.py @ v0.32.0).
"""
from __future__ import annotations

import numpy as np

from .block_pool import CachingBlockPool, CountingBlockPool
from .request import RequestTable, TokenContent

ALLOC_OK = 0
ALLOC_NO_BLOCKS = 1      # this step's tokens (plus watermark) do not fit the free blocks
ALLOC_FULL_SEQUENCE = 2  # the full-sequence admission gate refused (scheduler_reserve_full_isl)


class KVCacheManager:
    def __init__(self, reqs: RequestTable, *, num_gpu_blocks: int, block_size: int, max_model_len: int,
                 enable_caching: bool, unhashed_to_front: bool, content: TokenContent | None,
                 drop_last_hit_block: bool = False) -> None:
        self.reqs = reqs
        self.block_size = block_size
        self.max_model_len = max_model_len
        self.caching = enable_caching
        self.pool = (CachingBlockPool(num_gpu_blocks, unhashed_to_front) if enable_caching
                     else CountingBlockPool(num_gpu_blocks))
        self.content = content
        # EAGLE drafters need the last matched block recomputed (find_longest_cache_hit).
        self.drop_last_hit_block = drop_last_hit_block
        self.held = np.zeros(reqs.n, dtype=np.int64)      # blocks held per request
        self.blocks: list[list[int]] = [[] for _ in range(reqs.n)] if enable_caching else []
        self.num_cached = np.zeros(reqs.n, dtype=np.int64)  # full blocks registered in the cache
        # First block index whose content only that request can have.
        self.unique_from = (np.array([content.unique_from(r) for r in range(reqs.n)], dtype=np.int64)
                            if enable_caching else None)
        self.prefix_queries = 0
        self.prefix_hits = 0
        self._hit_memo: dict[int, tuple[list[int], int, int]] = {}

    # ---- counts -------------------------------------------------------------------------
    @property
    def num_free(self) -> int:
        return self.pool.num_free

    def usage(self) -> float:
        return self.pool.usage()

    # ---- prefix cache -------------------------------------------------------------------
    def get_computed_blocks(self, r: int) -> tuple[list[int], int]:
        """Longest run of cached full blocks from the start, at most num_tokens - 1 tokens
        (the last token is always computed, for its logits)."""
        if not self.caching:
            return [], 0
        bs = self.block_size
        limit = (int(self.reqs.num_tokens[r]) - 1) // bs
        hits = self._longest_hit(r, limit)  # read-only: the remembered list itself
        if self.drop_last_hit_block and hits:
            hits = hits[:-1]
        return hits, len(hits) * bs

    def _longest_hit(self, r: int, limit: int) -> list[int]:
        """The cached blocks of r's longest hit, remembered between calls: a request blocked at the
        head of the queue is looked up every step, and its prompt can be thousands of blocks. The
        remembered run stays right until one of its blocks loses its hash (the pool reports that);
        blocks registered since can only extend it, so the walk resumes where it stopped, and with
        no registration since, there is nothing to walk."""
        pool = self.pool
        memo = self._hit_memo.get(r)
        hits = memo[0] if memo is not None else []
        cut = pool.stale_watchers.pop(r, None) if pool.stale_watchers else None
        if cut is not None:
            # Cut the run at its first block that lost its hash: the blocks before it are still the
            # ones a lookup finds (the earliest registered block holding a hash stays the answer).
            del hits[cut:]
        elif memo is not None and memo[1] == limit and memo[2] == pool.registrations:
            return hits
        if len(hits) > limit:
            del hits[limit:]
        start = len(hits)
        get = pool.get_cached_block
        for key in self.content.block_hashes(r, start, limit):
            b = get(key)
            if b is None:
                break
            hits.append(b)
        if len(hits) > start:
            watch = pool.watch
            for place in range(start, len(hits)):
                b = hits[place]
                watchers = watch.get(b)
                if watchers is None:
                    watch[b] = {r: place}
                else:
                    watchers[r] = place
        self._hit_memo[r] = (hits, limit, pool.registrations)
        return hits

    def record_prefix_lookup(self, r: int, hit_tokens: int) -> None:
        """Counted at admission, as vLLM 0.32 does (vllm:prefix_cache_queries / _hits, in tokens)."""
        if self.caching:
            self.prefix_queries += int(self.reqs.num_tokens[r])
            self.prefix_hits += hit_tokens

    # ---- allocation ---------------------------------------------------------------------
    def _blocks_to_allocate(self, r: int, num_tokens: int, hit_blocks: list[int]) -> int:
        bs = self.block_size
        need = max(-(-num_tokens // bs) - int(self.held[r]) - len(hit_blocks), 0)
        if hit_blocks:
            # Hit blocks sitting free (evictable) leave the free queue when reused.
            need += list(map(self.pool.ref_cnt.__getitem__, hit_blocks)).count(0)
        return need

    def allocate_slots(self, r: int, num_new_tokens: int, *, hit_tokens: int = 0, hit_blocks: list[int] = (),
                       lookahead: int = 0, full_sequence_must_fit: bool = False, watermark_blocks: int = 0) -> int:
        """Give request r slots for its computed tokens, prefix hits, `num_new_tokens` and
        `lookahead` draft slots. Returns ALLOC_OK, or why nothing was allocated."""
        reqs = self.reqs
        mml = self.max_model_len
        computed = int(reqs.num_computed[r]) + hit_tokens
        total_computed = min(computed, mml)
        free = self.pool.num_free
        if full_sequence_must_fit:
            full = min(int(reqs.num_tokens[r]), mml)
            if self._blocks_to_allocate(r, full, hit_blocks) + watermark_blocks > free:
                return ALLOC_FULL_SEQUENCE
        slots = min(total_computed + num_new_tokens + lookahead, mml)
        if self._blocks_to_allocate(r, slots, hit_blocks) + watermark_blocks > free:
            return ALLOC_NO_BLOCKS
        new = -(-slots // self.block_size) - int(self.held[r]) - len(hit_blocks)
        if not self.caching:
            if new > 0:
                self.pool.num_free -= new
                self.held[r] += new
            return ALLOC_OK
        mine = self.blocks[r]
        if hit_blocks:
            self.pool.touch(hit_blocks)
            mine.extend(hit_blocks)
            self.num_cached[r] = len(mine)
        if new > 0:
            mine.extend(self.pool.get_new_blocks(new))
        self.held[r] = len(mine)
        self._cache_blocks(r, min(total_computed + num_new_tokens, int(reqs.num_tokens[r])))
        return ALLOC_OK

    def _cache_blocks(self, r: int, num_tokens: int) -> None:
        """Register r's blocks that are full of tokens scheduled so far (before they are computed:
        a request admitted later in the same step already hits them)."""
        full = num_tokens // self.block_size
        done = int(self.num_cached[r])
        if done >= full:
            return
        self._register(r, self.blocks[r], done, full, int(self.unique_from[r]), int(self.reqs.num_preemptions[r]))
        self.num_cached[r] = full

    def _register(self, r: int, mine: list[int], start: int, stop: int, unique_from: int, preempted: int) -> None:
        """Register blocks start..stop-1 of r. Blocks whose content only r has, while r has never
        been preempted, are left out ("private"): no other request can hit them, and r itself looks
        them up only after a preemption, when free() publishes them. Until then they count as cached
        where vLLM would see a hash: the order in which free() returns them (_free_with_private)."""
        split = stop if preempted else max(start, min(unique_from, stop))
        if split > start:
            self.pool.cache_blocks(mine[start:split], self.content.block_hashes(r, start, split))

    # ---- the running batch at once (fast path) -------------------------------------------
    def blocks_needed(self, idx: np.ndarray, computed: np.ndarray, n: np.ndarray, lookahead: int) -> np.ndarray:
        """New blocks each running request needs for n more tokens (0 where n == 0)."""
        bs = self.block_size
        slots = np.minimum(computed + n + lookahead, self.max_model_len)
        need = (slots + (bs - 1)) // bs - self.held[idx]
        np.maximum(need, 0, out=need)
        need[n == 0] = 0
        return need

    def commit_running(self, idx: np.ndarray, computed: np.ndarray, n: np.ndarray, need: np.ndarray) -> None:
        """Apply blocks_needed() for requests already known to fit, in running order."""
        if not self.caching:
            total = int(need.sum())
            if total:
                self.held[idx] += need
                self.pool.num_free -= total
            return
        bs = self.block_size
        upto = np.minimum(computed + n, self.reqs.num_tokens[idx]) // bs
        cached = self.num_cached[idx]
        # Only requests that cross into a new block or fill one do anything (most decodes neither).
        active = np.flatnonzero((need > 0) | ((upto > cached) & (n > 0)))
        if active.size == 0:
            return
        rows = idx[active]
        blocks = self.blocks
        register = self._register
        need_active = need[active]
        # One pop for the whole batch, handed out in running order: the same blocks each request
        # would have popped in turn (registering a request's blocks evicts nothing in between).
        fresh = self.pool.get_new_blocks(int(need_active.sum()))
        pos = 0
        for r, k, u, c, uf, pre in zip(rows.tolist(), need_active.tolist(), upto[active].tolist(),
                                       cached[active].tolist(), self.unique_from[rows].tolist(),
                                       self.reqs.num_preemptions[rows].tolist()):
            mine = blocks[r]
            if k:
                mine.extend(fresh[pos:pos + k])
                pos += k
            if u > c:
                register(r, mine, c, u, uf, pre)
        self.held[rows] += need_active
        self.num_cached[rows] = np.maximum(cached[active], upto[active])

    # ---- release --------------------------------------------------------------------------
    def free(self, r: int, preempting: bool = False) -> None:
        """Release all of r's blocks, last block first (so its tail is evicted first)."""
        if self.caching:
            mine = self.blocks[r]
            if preempting and not self.reqs.num_preemptions[r]:
                # r may come back for its own blocks: enter its private ones in the hash map.
                start, stop = int(self.unique_from[r]), int(self.num_cached[r])
                if start < stop:
                    self.pool.publish(mine[start:stop], self.content.block_hashes(r, start, stop))
            if mine:
                if not preempting and not self.reqs.num_preemptions[r] and self.pool.unhashed_to_front:
                    self._free_with_private(r, mine)
                else:
                    mine.reverse()
                    self.pool.free_blocks(mine)
                self.blocks[r] = []
            self.num_cached[r] = 0
        else:
            self.pool.num_free += int(self.held[r])
        self.held[r] = 0

    def _free_with_private(self, r: int, mine: list[int]) -> None:
        """free() of a finished request that was never preempted: its private blocks (see
        _register) are referenced by it alone, and those below num_cached carry a hash, the rest
        none; only the blocks before them need the reference-count walk."""
        uf = min(int(self.unique_from[r]), len(mine))
        nc = max(int(self.num_cached[r]), uf)
        shared = mine[:uf]
        shared.reverse()
        self.pool.free_blocks_after_private(mine[uf:nc][::-1], mine[nc:][::-1], shared)

    def free_many(self, idx: np.ndarray) -> None:
        if self.caching:
            for r in idx.tolist():
                self.free(r)
            return
        self.pool.num_free += int(self.held[idx].sum())
        self.held[idx] = 0
