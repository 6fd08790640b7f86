"""The memory kind's columns in the fleet index: free hugepages per page size, free normal memory
(strict and with oversubscription) and free memory bandwidth per node, and each host's sums."""

from __future__ import annotations

from dataclasses import dataclass

from ...models.chd import ComputeHostDescriptor
from .base import UNLIMITED_KBPS, IntArray, Table, Vocabulary
from .memory_free import MemoryNode


@dataclass(frozen=True, slots=True)
class MemoryTable(Table):
    hugepages: IntArray  # hosts x slots x page sizes: free pages
    normal: IntArray  # hosts x slots: free normal MiB, strict
    normal_over: IntArray  # ... with oversubscription
    bandwidth: IntArray  # hosts x slots: free kbit/s (UNLIMITED_KBPS: no figure)
    normal_capacity: IntArray  # per host: normal MiB less reservations (at least 1)
    normal_free: IntArray  # per host: free normal MiB, strict, summed over nodes

    def fill(
        self,
        i: int,
        host: ComputeHostDescriptor,
        nodes: tuple[MemoryNode, ...],
        vocab: Vocabulary,
    ) -> None:
        self.hugepages[i] = 0
        self.normal[i] = 0
        self.normal_over[i] = 0
        self.bandwidth[i] = UNLIMITED_KBPS
        for j, node in enumerate(nodes):
            self._node(i, j, node, vocab)
        self.normal_free[i] = sum(node.normal_free_mib for node in nodes)  # the row's sum
        self.normal_capacity[i] = max(
            sum(n.memory.normal_total_mib - n.memory.normal.reserved_mib for n in host.numa_nodes),
            1,
        )

    def fill_changed(
        self,
        i: int,
        nodes: tuple[MemoryNode, ...],
        before: tuple[MemoryNode, ...],
        vocab: Vocabulary,
    ) -> None:
        """Row i, filled from `before` (the same nodes), once the part is `nodes`: the nodes whose
        part is not the same object written again (the capacity no claim writes)."""
        for j, node in enumerate(nodes):
            if node is not before[j]:
                self._node(i, j, node, vocab)
        self.normal_free[i] = sum(node.normal_free_mib for node in nodes)

    def _node(self, i: int, j: int, node: MemoryNode, vocab: Vocabulary) -> None:
        self.hugepages[i, j] = 0
        for size, pages in node.hugepages_free.items():
            self.hugepages[i, j, vocab.column("page_sizes", size)] = pages
        self.normal[i, j] = node.normal_free_mib
        self.normal_over[i, j] = node.normal_free_over_mib
        free_kbps = node.bandwidth_free_kbps
        self.bandwidth[i, j] = UNLIMITED_KBPS if free_kbps is None else free_kbps
