"""What an L3 cache has free, as `cache_ways.py` counts it: each cache's free ways as contiguous
runs, and the classes of service a host has left (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...models.cache import CacheAllocation


@dataclass(frozen=True, slots=True)
class CacheFree:
    """One L3 cache's free ways, as contiguous runs."""

    id: int
    node_ids: frozenset[int]
    way_kib: int | None
    runs: tuple[tuple[int, int], ...]  # (first way, length) of each free run, ascending

    @property
    def largest(self) -> tuple[int, int]:
        """The largest free run (the highest one among equals); (0, 0) when none is free."""
        return max(self.runs, key=lambda run: (run[1], run[0]), default=(0, 0))

    @property
    def free_ways(self) -> int:
        return sum(length for _, length in self.runs)


@dataclass(frozen=True, slots=True)
class CachesFree:
    caches: tuple[CacheFree, ...]
    classes_free: int  # classes of service left for new VMs (-1: the host states no allocation)
    min_ways: int
    classes_known: bool = True  # the host states how many classes it has

    def of_node(self, node_id: int) -> CacheFree | None:
        return next((c for c in self.caches if node_id in c.node_ids), None)


def _runs(ways: int, taken: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    used = [False] * ways
    for first, count in taken:
        for way in range(max(first, 0), min(first + count, ways)):
            used[way] = True
    runs, start = [], None
    for way, busy in enumerate([*used, True]):
        if not busy and start is None:
            start = way
        elif busy and start is not None:
            runs.append((start, way - start))
            start = None
    return tuple(runs)


def caches_free(allocation: CacheAllocation | None) -> CachesFree:
    if allocation is None:
        return CachesFree((), -1, 1)
    owners = {a.owner for d in allocation.domains for a in d.allocations if a.owner}
    caches = tuple(
        CacheFree(
            d.id,
            frozenset(d.numa_nodes),
            d.way_kib,
            _runs(d.ways, ((a.first_way, a.ways) for a in d.allocations)),
        )
        for d in allocation.domains
    )
    if allocation.classes is None:
        return CachesFree(caches, 0, allocation.min_ways, classes_known=False)
    left = allocation.classes - 1 - allocation.classes_used - len(owners)
    return CachesFree(caches, max(left, 0), allocation.min_ways)
