"""The memory kind's part of the exact model with the cpu-sets' nodes fixed, without CP-SAT
(`ModelDirect`, `direct.py`): `MemoryKind.post_limits` with its node booleans known. Limits only,
no cost and nothing read back, so the answer is exact: its part, or infeasible."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, cast

from ..request import CpuSetDemand, Request
from .direct import NOTHING, Assignment, DirectPart, NoAnswer
from .page_choice import Backing, backing


class MemoryNodeFree(Protocol):
    """What this reads of the memory kind's part of a node (`memory.MemoryNode`)."""

    @property
    def hugepages_free(self) -> Mapping[int, int]: ...
    @property
    def normal_free_mib(self) -> int: ...
    @property
    def normal_free_over_mib(self) -> int: ...
    @property
    def bandwidth_free_kbps(self) -> int | None: ...


def _normal_free(node: MemoryNodeFree, request: Request) -> int:
    return node.normal_free_over_mib if request.memory_oversubscription else node.normal_free_mib


Placed = list[tuple[Backing | None, CpuSetDemand]]


def _placed(a: Assignment, nodes: Sequence[MemoryNodeFree]) -> list[tuple[int, int, Placed, bool]]:
    """Per node (slot, id): the backing of each cpu-set that may take it, and whether the model
    posts the node's limits (two or more backed), once per model (the nodes do not change it)."""
    out = []
    for slot, node_id in enumerate(a.free.node_ids):
        node = nodes[slot]
        placed = [
            (backing(cs, node.hugepages_free, _normal_free(node, a.request)), cs)
            for cs in a.request.cpu_sets
            if node_id in a.allowed[cs.id]
        ]
        out.append((slot, node_id, placed, sum(1 for b, _ in placed if b is not None) >= 2))
    return out


def memory_direct(a: Assignment, nodes: Sequence[MemoryNodeFree]) -> DirectPart | NoAnswer:
    """A cpu-set only where a page size of its node holds it; the cpu-sets of a node that more
    than one may take within its pages, memory and bandwidth (`_post_node`)."""
    model = a.memo.get("memory")
    if model is None:
        model = a.memo["memory"] = _placed(a, nodes)
    for slot, node_id, placed, posted in cast(list[tuple[int, int, Placed, bool]], model):
        here = [(b, cs) for b, cs in placed if a.nodes[cs.id] == node_id]
        if any(b is None for b, _ in here):
            return NoAnswer.infeasible
        if posted and not _holds(nodes[slot], here, a.request):
            return NoAnswer.infeasible
    return NOTHING


def _holds(node: MemoryNodeFree, here: Placed, request: Request) -> bool:
    taken = [(b, cs) for b, cs in here if b is not None]
    for size in {b.size_kib for b, _ in taken if b.size_kib}:
        pages = sum(b.pages for b, _ in taken if b.size_kib == size)
        if pages > node.hugepages_free.get(size, 0):
            return False
    if sum(b.normal_mib for b, _ in taken) > _normal_free(node, request):
        return False
    need = sum(cs.memory_bandwidth_kbps for _, cs in taken)
    return node.bandwidth_free_kbps is None or need <= node.bandwidth_free_kbps
