"""The memory kind's free part of a node (`MemoryNode`), and after a claim, worked out from the
configuration (`FreeClaimed`): each cpu-set's pages off its node's pool of their size, its normal
memory off the node's free figures, as `memory.claim` charges the descriptor and `memory._node`
would read it back."""

from __future__ import annotations

from dataclasses import dataclass

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
    memory bandwidth (a sum of floats), a free figure already at 0 (the part does not hold how far
    below it the use is), two pools of one page size. A shared VM's memory is normal memory of its
    node (the host's first when it names none), as `memory.claim` charges it."""
    nodes = list(free_before)
    slots = {node.id: j for j, node in enumerate(before.numa_nodes)}
    for cs in config.cpu_sets:
        j = slots.get(cs.numa_node)
        if j is None or cs.memory_bandwidth_gbps:
            return None
        pages = dict(nodes[j].hugepages_free)
        if cs.hugepages is not None and cs.hugepages.count:
            size = cs.hugepages.size_kib
            if size not in pages or len(pages) != len(before.numa_nodes[j].memory.hugepages):
                return None
            if pages[size] < cs.hugepages.count:  # the claim would conflict
                return None
            pages[size] -= cs.hugepages.count  # the claim took them within the pool's free pages
        part = _normal_taken(_with(nodes[j], pages=pages), cs.normal_memory_mib)
        if part is None:
            return None
        nodes[j] = part
    shared = config.shared
    if shared is not None and shared.memory_mib:
        node_id = min(slots) if shared.numa_node is None else shared.numa_node
        j = slots.get(node_id)
        part = None if j is None else _normal_taken(nodes[j], shared.memory_mib)
        if j is None or part is None:
            return None
        nodes[j] = part
    return tuple(nodes)


def _normal_taken(part: MemoryNode, normal: int) -> MemoryNode | None:
    """`part` once `normal` MiB more are used (None: a free figure already at 0)."""
    if not normal:
        return part
    if min(part.normal_free_mib, part.normal_free_over_mib) <= 0:
        return None
    return _with(
        part,
        normal=max(part.normal_free_mib - normal, 0),
        over=max(part.normal_free_over_mib - normal, 0),
    )


def _with(
    part: MemoryNode,
    *,
    pages: dict[int, int] | None = None,
    normal: int | None = None,
    over: int | None = None,
) -> MemoryNode:
    """`dataclasses.replace(part, ...)` built directly: a claim kept pending makes one or two a
    cpu-set, and `replace` (it reads the fields anew each time) costs several times the build."""
    return MemoryNode(
        part.hugepages_free if pages is None else pages,
        part.normal_free_mib if normal is None else normal,
        part.normal_free_over_mib if over is None else over,
        part.normal_total_mib,
        part.bandwidth_free_kbps,
    )
