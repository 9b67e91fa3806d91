"""The waiting queue: FCFS (a deque; preempted requests go to the front) or priority (a heap
ordered by (priority, arrival_time, request id), where a preempted request simply re-enters by
its key), as vllm/v1/core/sched/request_queue.py @ v0.32.0."""
from __future__ import annotations

import heapq
from collections import deque

from .request import RequestTable


class FCFSQueue:
    def __init__(self) -> None:
        self._q: deque[int] = deque()

    def add(self, r: int) -> None:
        self._q.append(r)

    def prepend(self, r: int) -> None:
        self._q.appendleft(r)

    def peek(self) -> int:
        return self._q[0]

    def pop(self) -> int:
        return self._q.popleft()

    def remove(self, r: int) -> None:
        self._q.remove(r)

    def order(self) -> list[int]:
        return list(self._q)

    def __len__(self) -> int:
        return len(self._q)

    def __bool__(self) -> bool:
        return bool(self._q)


class PriorityQueue:
    def __init__(self, reqs: RequestTable) -> None:
        self._reqs = reqs
        self._heap: list[tuple[int, float, str, int]] = []

    def _key(self, r: int) -> tuple[int, float, str, int]:
        reqs = self._reqs
        return (int(reqs.priority[r]), float(reqs.arrival[r]), reqs.ids[r], r)

    def add(self, r: int) -> None:
        heapq.heappush(self._heap, self._key(r))

    prepend = add

    def peek(self) -> int:
        return self._heap[0][3]

    def pop(self) -> int:
        return heapq.heappop(self._heap)[3]

    def remove(self, r: int) -> None:
        self._heap = [k for k in self._heap if k[3] != r]
        heapq.heapify(self._heap)

    def order(self) -> list[int]:
        return [k[3] for k in sorted(self._heap)]

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)


def make_queue(policy: str, reqs: RequestTable):
    return PriorityQueue(reqs) if policy == "priority" else FCFSQueue()
