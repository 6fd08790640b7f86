"""The memory kind's part of the kubelet's counts (`kubelet.py`): the memory manager's pools."""

from __future__ import annotations

from collections.abc import Iterable

from ...models.chd import ComputeHostDescriptor, NumaNode
from .kubelet import MIB, KubeletPool, hugepages_name


class MemoryKubelet:
    """`KubeletCounts` for the memory kind (a base of `memory.MemoryKind`)."""

    def kubelet_pools(self, host: ComputeHostDescriptor, node: NumaNode) -> Iterable[KubeletPool]:
        """Memory and each hugepage size, counted only when the memory manager is Static (the
        CHD's hypervisor pins NUMA memory); memory in use on the node is read as given to that
        node alone (NodeResourceTopology does not say the groups)."""
        hypervisor = host.hypervisor
        if hypervisor is None or "numa_memory_pinning" not in {
            str(c) for c in hypervisor.capabilities
        }:
            return ()
        memory = node.memory
        used = memory.normal.used_mib > 0 or any(p.used > 0 for p in memory.hugepages)
        normal = KubeletPool(
            "memory",
            "memory",
            (memory.normal_total_mib - memory.normal.reserved_mib) * MIB,
            memory.normal_free_mib * MIB,
            in_use=used,
        )
        pages = (
            KubeletPool(
                "memory",
                hugepages_name(p.size_kib),
                p.total * p.size_kib * 1024,
                p.free * p.size_kib * 1024,
                in_use=used,
            )
            for p in memory.hugepages
        )
        return (normal, *pages)
