"""The memory kind's part of the store's double-claim guard: hugepages as shares of pools
(`holding.py`), one pool per NUMA node and page size."""

from __future__ import annotations

from collections.abc import Iterable

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from .holding import PoolShare


class HugepagePools:
    """`HoldsShares` for the memory kind (a base of `memory.MemoryKind`)."""

    def held_shares(self, config: VmConfiguration) -> Iterable[PoolShare]:
        for cs in config.cpu_sets:
            if cs.hugepages is not None and cs.hugepages.count:
                yield PoolShare(cs.numa_node, cs.hugepages.size_kib, cs.hugepages.count)

    def pools(self, host: ComputeHostDescriptor) -> Iterable[PoolShare]:
        for node in host.numa_nodes:
            for pool in node.memory.hugepages:
                yield PoolShare(node.id, pool.size_kib, pool.free)
