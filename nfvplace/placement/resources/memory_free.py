"""The memory kind's free part of a node (`MemoryNode`), and after a claim, worked out from the
configuration (`FreeClaimed`): each cpu-set's pages off its node's pool of their size, its normal
memory off the node's free figures, as `memory.claim` charges the descriptor and `memory._node`
would read it back."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration


@dataclass(frozen=True, slots=True)
class MemoryNode:
    hugepages_free: dict[int, int]  # page size KiB -> free pages
    normal_free_mib: int  # without oversubscription
    normal_free_over_mib: int  # with the node's memory oversubscription ratio
    normal_total_mib: int  # outside hugepage pools, less the host's reservation
    bandwidth_free_kbps: int | None  # None: no bandwidth figure (not limited)


def memory_claimed(
    before: ComputeHostDescriptor, free_before: tuple[MemoryNode, ...], config: VmConfiguration
) -> tuple[MemoryNode, ...] | None:
    """The part once `config` is claimed on `before`; None where only the claimed host tells:
    memory bandwidth (a sum of floats), a shared VM's memory, a free figure already at 0 (the part
    does not hold how far below it the use is), two pools of one page size."""
    if config.shared is not None and config.shared.memory_mib:
        return None
    nodes = list(free_before)
    slots = {node.id: j for j, node in enumerate(before.numa_nodes)}
    for cs in config.cpu_sets:
        j = slots.get(cs.numa_node)
        if j is None or cs.memory_bandwidth_gbps:
            return None
        part = nodes[j]
        pages = dict(part.hugepages_free)
        if cs.hugepages is not None and cs.hugepages.count:
            size = cs.hugepages.size_kib
            if size not in pages or len(pages) != len(before.numa_nodes[j].memory.hugepages):
                return None
            if pages[size] < cs.hugepages.count:  # the claim would conflict
                return None
            pages[size] -= cs.hugepages.count  # the claim took them within the pool's free pages
        normal = cs.normal_memory_mib
        if normal and min(part.normal_free_mib, part.normal_free_over_mib) <= 0:
            return None
        nodes[j] = replace(
            part,
            hugepages_free=pages,
            normal_free_mib=max(part.normal_free_mib - normal, 0),
            normal_free_over_mib=max(part.normal_free_over_mib - normal, 0),
        )
    return tuple(nodes)
