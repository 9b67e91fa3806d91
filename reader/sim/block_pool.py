"""The KV block pool: free blocks, the reserved null block, and (with prefix caching) the cache
of full blocks by hash. It knows nothing of requests.

Block 0 is vLLM's null block and is never handed out, so `num_gpu_blocks - 1` blocks are usable
(vllm/v1/core/block_pool.py __init__ @ v0.32.0). The free count includes blocks that are free
but still cached (evictable): they are reused, and lose their hash, only when popped.

Two pools: `CountingBlockPool` when prefix caching is off (then which block a request holds
never matters, only how many), and `CachingBlockPool`, which keeps real block ids, reference
counts, the LRU free queue and the hash map, as vLLM does.
"""
from __future__ import annotations

from collections import deque


class CountingBlockPool:
    """Prefix caching off: only the number of free blocks matters."""

    caching = False

    def __init__(self, num_gpu_blocks: int) -> None:
        self.num_gpu_blocks = num_gpu_blocks
        self.num_free = num_gpu_blocks - 1  # minus the null block

    def usage(self) -> float:
        total = self.num_gpu_blocks - 1
        return 1.0 - self.num_free / total if total else 0.0


class CachingBlockPool:
    """Prefix caching on: block ids, reference counts, LRU free queue, hash -> blocks map.

    The free queue's head is reused first. Freed blocks go to its tail in the order given (the
    caller passes a request's blocks last-first, so its tail blocks are evicted first); with
    `unhashed_to_front` (vLLM 0.24.0+) freed blocks that carry no hash go to the head instead,
    since they can never be a cache hit (block_pool.py free_blocks @ v0.32.0).

    The free queue is a deque; a free block taken by a cache hit leaves a stale entry behind
    (counted in `stale`) that is skipped when it reaches the head. A block with stale entries is
    hashed and in use, so when it is freed again it goes to the tail, behind them.

    The hash map keeps, per hash, the block registered first (`first`) and any later duplicates in
    registration order (`dups`); a hit takes the earliest registered block still holding the hash.
    Evicting the first block of a hash promotes the next live duplicate; an evicted duplicate is
    left in `dups` and skipped (its `hash_of` no longer matches) when next looked at.
    """

    caching = True

    def __init__(self, num_gpu_blocks: int, unhashed_to_front: bool) -> None:
        self.num_gpu_blocks = num_gpu_blocks
        self.unhashed_to_front = unhashed_to_front
        self.queue: deque[int] = deque(range(1, num_gpu_blocks))
        self.stale = [0] * num_gpu_blocks
        self.num_stale = 0
        self.ref_cnt = [0] * num_gpu_blocks
        self.hash_of: list[object] = [None] * num_gpu_blocks
        self.first: dict[object, int] = {}
        self.dups: dict[object, list[int]] = {}
        # Blocks someone remembers as a cache hit (block -> {watcher id: the block's place in its run}),
        # and per watcher the first place whose block has since lost its hash; see
        # KVCacheManager._longest_hit.
        self.watch: dict[int, dict[int, int]] = {}
        self.stale_watchers: dict[int, int] = {}
        self.registrations = 0  # calls that may have added hashes

    @property
    def num_free(self) -> int:
        return len(self.queue) - self.num_stale

    @property
    def free_queue(self) -> list[int]:
        """The free blocks, head first (for tests and debugging)."""
        skip = list(self.stale)
        out = []
        for b in self.queue:
            if skip[b]:
                skip[b] -= 1
            else:
                out.append(b)
        return out

    def usage(self) -> float:
        total = self.num_gpu_blocks - 1
        return 1.0 - self.num_free / total if total else 0.0

    def get_cached_block(self, key: object) -> int | None:
        b = self.first.get(key)
        if b is not None and self.hash_of[b] == key:
            return b
        if self.dups:
            for d in self.dups.get(key, ()):
                if self.hash_of[d] == key:
                    return d
        return None

    def get_new_blocks(self, count: int) -> list[int]:
        """Pop `count` blocks from the head of the free queue; a cached one loses its hash."""
        pop = self.queue.popleft
        if self.num_stale:
            out = []
            stale = self.stale
            while len(out) < count:
                b = pop()
                if stale[b]:
                    stale[b] -= 1
                    self.num_stale -= 1
                else:
                    out.append(b)
        else:
            out = [pop() for _ in range(count)]
        hash_of = self.hash_of
        ref = self.ref_cnt
        first = self.first
        if self.watch:
            self._evicting(out)
        if not self.dups:
            # Every hash has one block, so a hashed block is first[hash].
            pop = first.pop
            for h in [h for h in map(hash_of.__getitem__, out) if h is not None]:
                pop(h, None)
            for b in out:
                hash_of[b] = None
                ref[b] = 1
            return out
        dups = self.dups
        for b in out:
            h = hash_of[b]
            if h is not None:
                hash_of[b] = None
                if first.get(h) == b:
                    if h in dups:
                        self._drop_first(h)
                    else:
                        del first[h]
            ref[b] = 1
        return out

    def _evicting(self, blocks: list[int]) -> None:
        watch = self.watch
        stale = self.stale_watchers
        for b in blocks:
            watchers = watch.pop(b, None)
            if watchers and self.hash_of[b] is not None:
                for r, place in watchers.items():
                    if place < stale.get(r, place + 1):
                        stale[r] = place

    def _drop_first(self, key: object) -> None:
        """The block registered first under `key` was evicted: the next live duplicate takes over."""
        dups = self.dups.pop(key, None) if self.dups else None
        if dups:
            live = [d for d in dups if self.hash_of[d] == key]
            if live:
                self.first[key] = live[0]
                if len(live) > 1:
                    self.dups[key] = live[1:]
                return
        del self.first[key]

    def touch(self, blocks: list[int]) -> None:
        """A cache hit reuses these blocks: take the free ones out of the free queue."""
        ref = self.ref_cnt
        for b in blocks:
            if ref[b] == 0:
                self.stale[b] += 1
                self.num_stale += 1
            ref[b] += 1

    def free_blocks(self, ordered: list[int]) -> None:
        """Drop one reference from each block; blocks reaching 0 become free (evict-first order)."""
        back: list[int] = []
        front: list[int] = []
        self._unref(ordered, back, front, self.unhashed_to_front)
        self._enqueue(back, front)

    def free_blocks_after_private(self, hashed: list[int], unhashed: list[int], rest: list[int]) -> None:
        """free_blocks(hashed + unhashed + rest) (all in evict-first order) with unhashed_to_front,
        where the first two lists are blocks only their (finishing) request referenced: they become
        free without the reference-count walk (their count is not read again before they are reused,
        when get_new_blocks() sets it)."""
        if rest:
            hashed = list(hashed)
            unhashed = list(unhashed)
            self._unref(rest, hashed, unhashed, True)
        self._enqueue(hashed, unhashed)

    def _unref(self, ordered: list[int], back: list[int], front: list[int], to_front: bool) -> None:
        """Drop one reference from each block; those reaching 0 join `front` (no hash, with
        to_front) or `back`."""
        ref = self.ref_cnt
        hash_of = self.hash_of
        for b in ordered:
            ref[b] -= 1
            if ref[b] == 0:
                if to_front and hash_of[b] is None:
                    front.append(b)
                else:
                    back.append(b)

    def _enqueue(self, back: list[int], front: list[int]) -> None:
        """Freed blocks: `back` to the tail of the free queue, `front` to its head, in order."""
        self.queue.extend(back)
        if front:
            self.queue.extendleft(reversed(front))

    def cache_blocks(self, blocks, keys) -> None:
        """Register full blocks under their hashes (they can now be prefix-cache hits)."""
        self.registrations += 1
        hash_of = self.hash_of
        first = self.first
        get = first.get
        for b, key in zip(blocks, keys):
            cur = get(key)
            if cur is None:
                hash_of[b] = key
                first[key] = b
            elif hash_of[cur] != key:
                hash_of[b] = key
                self._register_over_stale(key, b)
            elif cur != b:
                hash_of[b] = key
                self.dups.setdefault(key, []).append(b)

    def publish(self, blocks: list[int], keys) -> None:
        """Register full blocks whose hashes are registered nowhere yet (no duplicate checks): the
        private blocks of a request being preempted (see KVCacheManager._register)."""
        self.registrations += 1
        hash_of = self.hash_of
        for b, key in zip(blocks, keys):
            hash_of[b] = key
        self.first.update(zip(keys, blocks))

    def _register_over_stale(self, key: object, b: int) -> None:
        """`first[key]` lost the hash; live duplicates registered before b keep their precedence."""
        hash_of = self.hash_of
        live = [d for d in self.dups.pop(key, ()) if hash_of[d] == key and d != b]
        if live:
            self.first[key] = live[0]
            self.dups[key] = live[1:] + [b]
        else:
            self.first[key] = b
