"""L3 cache allocation rules of a host (Intel RDT CAT, `cache_allocation`) (NFV130-NFV139)."""

from __future__ import annotations

from collections.abc import Iterator

from ...models.cache import CacheWays
from ...models.chd import ComputeHostDescriptor
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "cache"
CLAUSE = "8.1.1.1"

WAYS_OUT_OF_RANGE = Rule(
    "NFV130",
    Severity.error,
    FAMILY,
    "An L3 cache allocation lies beyond the cache's ways",
    "give first_way and ways within 0..ways-1 (the bits of resctrl's cbm_mask)",
    CLAUSE,
)
WAYS_OVERLAP = Rule(
    "NFV131",
    Severity.error,
    FAMILY,
    "Two allocations of one L3 cache share ways (exclusive ways are given out once)",
    "make the ranges disjoint, or merge them into one allocation",
    CLAUSE,
)
CACHE_NODES = Rule(
    "NFV132",
    Severity.error,
    FAMILY,
    "An L3 cache names a NUMA node the host does not have, or a node is in two caches",
    "list each of the host's NUMA nodes under the one cache its PUs share",
    CLAUSE,
)
CLASSES_EXHAUSTED = Rule(
    "NFV133",
    Severity.error,
    FAMILY,
    "More classes of service are in use than the host has (the default class counts as one)",
    "check classes (num_closids), classes_used and the allocations' owners",
    CLAUSE,
)
RULES = (WAYS_OUT_OF_RANGE, WAYS_OVERLAP, CACHE_NODES, CLASSES_EXHAUSTED)


def check_chd(host: ComputeHostDescriptor) -> Iterator[Hit]:
    allocation = host.cache_allocation
    if allocation is None:
        return
    nodes = {node.id for node in host.numa_nodes}
    seen: dict[int, int] = {}
    for d, domain in enumerate(allocation.domains):
        path = ("cache_allocation", "domains", d)
        for node in domain.numa_nodes:
            if node not in nodes:
                yield CACHE_NODES.hit((*path, "numa_nodes"), f"the host has no NUMA node {node}")
            elif node in seen:
                yield CACHE_NODES.hit(
                    (*path, "numa_nodes"), f"NUMA node {node} is also in L3 cache {seen[node]}"
                )
            seen.setdefault(node, domain.id)
        yield from _ranges(path, domain.ways, domain.allocations)
    owners = {a.owner for d in allocation.domains for a in d.allocations if a.owner}
    used = 1 + allocation.classes_used + len(owners)
    if allocation.classes is not None and used > allocation.classes:
        yield CLASSES_EXHAUSTED.hit(
            ("cache_allocation", "classes"),
            f"{used} classes in use (the default, {allocation.classes_used} others and "
            f"{len(owners)} owners of allocations), the host has {allocation.classes}",
        )


def _ranges(
    path: tuple[str | int, ...], ways: int, allocations: tuple[CacheWays, ...]
) -> Iterator[Hit]:
    for k, a in enumerate(allocations):
        where = (*path, "allocations", k)
        if a.first_way + a.ways > ways:
            yield WAYS_OUT_OF_RANGE.hit(
                where, f"ways {a.first_way}-{a.last_way}, the cache has ways 0-{ways - 1}"
            )
        for j, b in enumerate(allocations[:k]):
            if a.first_way <= b.last_way and b.first_way <= a.last_way:
                yield WAYS_OVERLAP.hit(
                    where,
                    f"ways {a.first_way}-{a.last_way} overlap allocations[{j}] "
                    f"(ways {b.first_way}-{b.last_way})",
                )
