"""Hugepages, normal memory and memory bandwidth of each cpu-set (and of shared vCPUs), per node.

- hugepages of the requested size come from the node's pool of that size (never oversubscribed);
  a size chosen on the node (`large`/`any`) is resolved per node (`page_choice.backing`);
- the rest of the part's memory comes from the node's free normal memory; the node's
  `normal.oversubscription_ratio` only counts when the VM allows memory oversubscription too;
- `memory_bandwidth_gbps` of a cpu-set is charged to its node when the node states its bandwidth
  (a node without a bandwidth figure is not limited).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from functools import cache

import numpy as np
from ortools.sat.python import cp_model

from ...exact import KBPS_PER_GBPS, gbps_text, kbps
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.units import format_memory_kib
from ..reasons import Reason
from ..request import CpuSetDemand, Part, Request, SharedDemand
from .base import (
    UNLIMITED_KBPS,
    HostFree,
    IndexedFleet,
    IntArray,
    Vocabulary,
    by_class,
    node_parts,
)
from .direct import Assignment, DirectPart, NoAnswer
from .draft import AssignmentError, ConfigurationDraft, DescriptorDraft, HostDraft
from .filtering import FilterInput, NodeNeed
from .hugepage_pools import HugepagePools
from .kind import Decisions, Kind, RelaxModel
from .memory_charge import charge_normal, claim_pages
from .memory_direct import memory_direct
from .memory_free import MemoryNode, memory_claimed
from .memory_kubelet import MemoryKubelet
from .memory_table import MemoryTable
from .model import Layout, ModelContext
from .page_choice import Backing, backing, choice_need
from .scoring import Fullness, NodeFullness


@cache  # a handful of page sizes, named in every request's needs
def page_label(size_kib: int) -> str:
    text = format_memory_kib(size_kib)
    return text.replace("GiB", " GiB").replace("MiB", " MiB").replace("KiB", " KiB")


def _node(host: ComputeHostDescriptor, slot: int) -> MemoryNode:
    memory = host.numa_nodes[slot].memory
    strict = max(memory.normal_total_mib - memory.normal.reserved_mib - memory.normal.used_mib, 0)
    bandwidth = (
        None
        if memory.bandwidth_gbps is None
        else max(kbps(memory.bandwidth_gbps) - kbps(memory.bandwidth_used_gbps), 0)
    )
    return MemoryNode(
        hugepages_free={p.size_kib: p.free for p in memory.hugepages},
        normal_free_mib=strict,
        normal_free_over_mib=memory.normal_free_mib,
        normal_total_mib=max(memory.normal_total_mib - memory.normal.reserved_mib, 0),
        bandwidth_free_kbps=bandwidth,
    )


@dataclass(slots=True)
class MemoryCount:
    """One node's free memory in the counting model, taken from as instances are counted onto it:
    pages of the request's hugepage size, normal MiB, and bandwidth (kbit/s)."""

    pages: int
    normal: int
    bandwidth: int


class MemoryKind(HugepagePools, MemoryKubelet, Kind):
    name = "memory"
    reasons = (Reason.hugepages, Reason.memory, Reason.memory_bandwidth)
    family = "hugepages and memory of the nodes shared by the cpu-sets"

    def vocabulary(self, host: ComputeHostDescriptor) -> Iterable[tuple[str, Hashable]]:
        for node in host.numa_nodes:
            yield from (("page_sizes", p.size_kib) for p in node.memory.hugepages)

    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> MemoryTable:
        sizes = max(len(vocab.values("page_sizes")), 1)
        return MemoryTable(
            hugepages=by_class(hosts, nodes, sizes),
            normal=np.zeros((hosts, nodes), dtype=np.int64),
            normal_over=np.zeros((hosts, nodes), dtype=np.int64),
            bandwidth=np.full((hosts, nodes), UNLIMITED_KBPS, dtype=np.int64),
            normal_capacity=np.ones(hosts, dtype=np.int64),
            normal_free=np.zeros(hosts, dtype=np.int64),
        )

    def fill(
        self, t: MemoryTable, i: int, host: ComputeHostDescriptor, free: HostFree, vocab: Vocabulary
    ) -> None:
        t.fill(i, host, free.of(self), vocab)

    def fill_changed(
        self, t: MemoryTable, i: int, free: HostFree, before: HostFree, vocab: Vocabulary
    ) -> None:
        t.fill_changed(i, free.of(self), before.of(self), vocab)

    def free(self, host: ComputeHostDescriptor) -> tuple[MemoryNode, ...]:
        return tuple(_node(host, slot) for slot in range(len(host.numa_nodes)))

    def free_again(
        self,
        host: ComputeHostDescriptor,
        before: ComputeHostDescriptor,
        free_before: tuple[MemoryNode, ...],
    ) -> tuple[MemoryNode, ...]:
        return node_parts(
            host,
            before,
            free_before,
            lambda node, old, _part: node.memory is old.memory,
            lambda slot, _node_now: _node(host, slot),
        )

    def free_claimed(
        self,
        before: ComputeHostDescriptor,
        free_before: tuple[MemoryNode, ...],
        config: VmConfiguration,
        after: ComputeHostDescriptor | None,
    ) -> tuple[MemoryNode, ...] | None:
        return memory_claimed(before, free_before, config)

    def node_needs(self, inp: FilterInput, part: Part) -> list[NodeNeed]:
        t = inp.fleet.table(self)
        free_mem = t.normal_over if inp.request.memory_oversubscription else t.normal
        if isinstance(part, SharedDemand):
            return [_memory_need(part.memory_mib, free_mem)] if part.memory_mib else []
        out = []
        if part.page_choice is not None:
            sizes = list(inp.fleet.vocab.values("page_sizes"))
            out.append(choice_need(part, sizes, t.hugepages, free_mem))
        if part.hugepage_size_kib is not None and part.hugepage_count:
            out.append(_pages_need(inp, t, part.hugepage_size_kib, part.hugepage_count))
        if part.normal_mib:
            out.append(_memory_need(part.normal_mib, free_mem))
        if part.memory_bandwidth_kbps:
            need = part.memory_bandwidth_kbps
            out.append(
                NodeNeed(
                    Reason.memory_bandwidth,
                    f"{gbps_text(need)} Gbps free memory bandwidth",
                    t.bandwidth >= need,
                    t.bandwidth / KBPS_PER_GBPS,
                    need / KBPS_PER_GBPS,
                    "Gbps free memory bandwidth",
                )
            )
        return out

    def post_limits(self, ctx: ModelContext) -> None:
        req = ctx.request
        for slot, node_id in enumerate(ctx.free.node_ids):
            node = ctx.free.of(self)[slot]
            placed: list[tuple[Backing, CpuSetDemand, cp_model.IntVar]] = []
            for cs in req.cpu_sets:
                y = ctx.node_var(cs.id, node_id)
                if y is None:
                    continue
                backed = backing(cs, node.hugepages_free, _normal_free(node, req))
                if backed is None:
                    ctx.model.add(y == 0)
                else:
                    placed.append((backed, cs, y))
            if len(placed) >= 2:  # a lone cpu-set's node already passed the filter's checks
                _post_node(ctx, node, placed)

    def direct(self, a: Assignment) -> DirectPart | NoAnswer:
        return memory_direct(a, a.free.of(self))

    def counts(self, request: Request) -> bool:
        return all(cs.page_choice is None for cs in request.cpu_sets)

    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None:
        nodes = free.of(self)
        for cs in request.cpu_sets:
            node = nodes[free.slot(draft.cpu_sets[cs.id]["numa_node"])]
            backed = backing(cs, node.hugepages_free, _normal_free(node, request))
            if backed is None:
                raise AssignmentError(f"cpu-set {cs.id}: no page size of its node holds it")
            draft.cpu_sets[cs.id].update(
                memory_mib=cs.memory_mib,
                hugepages=(
                    {"size_kib": backed.size_kib, "count": backed.pages}
                    if backed.size_kib is not None
                    else None
                ),
                memory_bandwidth_gbps=(cs.memory_bandwidth_kbps / KBPS_PER_GBPS) or None,
            )

    def count_state(self, fleet: IndexedFleet, i: int, slot: int, request: Request) -> MemoryCount:
        t = fleet.table(self)
        normal = t.normal_over if request.memory_oversubscription else t.normal
        if request.shared is not None:
            return MemoryCount(pages=0, normal=int(normal[i, slot]), bandwidth=0)
        cs = request.cpu_sets[0]
        column = fleet.vocab.column("page_sizes", cs.hugepage_size_kib)
        return MemoryCount(
            pages=int(t.hugepages[i, slot, column]) if column is not None else 0,
            normal=int(normal[i, slot]),
            bandwidth=int(t.bandwidth[i, slot]),
        )

    def count_take(self, state: MemoryCount, request: Request, spread: bool) -> Reason | None:
        if request.shared is not None:
            if request.shared.memory_mib > state.normal:
                return Reason.memory
            state.normal -= request.shared.memory_mib
            return None
        cs = request.cpu_sets[0]
        if cs.hugepage_count > state.pages:
            return Reason.hugepages
        if cs.normal_mib > state.normal:
            return Reason.memory
        if cs.memory_bandwidth_kbps > state.bandwidth:
            return Reason.memory_bandwidth
        state.pages -= cs.hugepage_count
        state.normal -= cs.normal_mib
        state.bandwidth -= cs.memory_bandwidth_kbps
        return None

    def relax_add(
        self,
        model: RelaxModel,
        host: int,
        slot: int,
        x: cp_model.IntVar,
        request: Request,
        part: Part | None,
    ) -> None:
        if part is None:
            return
        mib = part.memory_mib if isinstance(part, SharedDemand) else part.normal_mib
        strict = 0 if request.memory_oversubscription else mib
        uses = [("strict", strict), ("normal", mib)]
        if isinstance(part, CpuSetDemand):
            uses.append(("membw", part.memory_bandwidth_kbps))
            if part.hugepage_size_kib:
                uses.append((f"pages{part.hugepage_size_kib}", part.hugepage_count))
        for name, per in uses:
            if per:
                model.use(self.name, host, slot, name, per * x)

    def relax_capacity(self, fleet: IndexedFleet, host: int, slot: int, name: str) -> int | None:
        t = fleet.table(self)
        cols = slice(None) if slot < 0 else slice(slot, slot + 1)
        exists = fleet.node_id[host, cols] >= 0

        def total(values: np.ndarray) -> int:
            return int(np.minimum(values[exists], UNLIMITED_KBPS).sum())

        if name == "strict":
            return total(t.normal[host, cols])
        if name == "normal":
            return total(np.maximum(t.normal[host, cols], t.normal_over[host, cols]))
        if name == "membw":
            return total(t.bandwidth[host, cols])
        column = fleet.vocab.column("page_sizes", int(name[5:]))
        return 0 if column is None else total(t.hugepages[host, cols, column])

    def fullness(self, table: MemoryTable) -> Fullness:
        return Fullness(
            "free memory", "MiB normal memory", table.normal_free, table.normal_capacity
        )

    def node_fullness(self, free: tuple[MemoryNode, ...], slot: int) -> NodeFullness:
        return NodeFullness(free[slot].normal_free_mib, free[slot].normal_total_mib)

    def describe(self, draft: DescriptorDraft, config: VmConfiguration) -> None:
        for cs in config.cpu_sets:
            entry = draft.cpu_sets[cs.id]
            entry["memory_mib"] = cs.memory_mib
            if cs.hugepages is not None and cs.hugepages.count:
                pages = cs.hugepages
                entry["hugepages"] = {"size": f"{pages.size_kib}KiB", "count": pages.count}
            if cs.memory_bandwidth_gbps:
                entry["memory_bandwidth_gbps"] = cs.memory_bandwidth_gbps

    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None:
        for index, cs in enumerate(config.cpu_sets):
            memory = draft.node_memory(cs.numa_node, f"cpu_sets[{index}].numa_node")
            if memory is None:
                continue
            if cs.hugepages is not None and cs.hugepages.count:
                claim_pages(draft, memory, cs.numa_node, index, cs.hugepages, sign)
            charge_normal(memory, sign * cs.normal_memory_mib)
            if cs.memory_bandwidth_gbps:
                memory["bandwidth_used_gbps"] = max(
                    memory.get("bandwidth_used_gbps", 0.0) + sign * cs.memory_bandwidth_gbps, 0.0
                )
        if config.shared is not None and config.shared.memory_mib:
            node_id = config.shared.numa_node
            if node_id is None:
                node_id = min(draft.nodes)
            memory = draft.node_memory(node_id, "shared.numa_node")
            if memory is not None:
                charge_normal(memory, sign * config.shared.memory_mib)


def _pages_need(inp: FilterInput, t: MemoryTable, size_kib: int, count: int) -> NodeNeed:
    label = page_label(size_kib)
    column = inp.fleet.vocab.column("page_sizes", size_kib)
    free = t.hugepages[:, :, column] if column is not None else np.zeros_like(t.normal)
    return NodeNeed(
        Reason.hugepages,
        f"{count} free {label} pages",
        free >= count,
        free,
        count,
        f"free {label} pages",
    )


def _memory_need(mib: int, free_mem: IntArray) -> NodeNeed:
    return NodeNeed(
        Reason.memory, f"{mib} MiB free memory", free_mem >= mib, free_mem, mib, "MiB free memory"
    )


def _normal_free(node: MemoryNode, request: Request) -> int:
    return node.normal_free_over_mib if request.memory_oversubscription else node.normal_free_mib


def _post_node(
    ctx: ModelContext, node: MemoryNode, placed: list[tuple[Backing, CpuSetDemand, cp_model.IntVar]]
) -> None:
    """The cpu-sets that may share the node within its pages, memory and bandwidth (a page size
    chosen on the node is the one the cpu-set takes there alone, as Nova takes it)."""
    m = ctx.model
    for size in {b.size_kib for b, _, _ in placed if b.size_kib}:
        m.add(
            sum(b.pages * y for b, _, y in placed if b.size_kib == size)
            <= node.hugepages_free.get(size, 0)
        )
    m.add(sum(b.normal_mib * y for b, _, y in placed) <= _normal_free(node, ctx.request))
    if node.bandwidth_free_kbps is not None:
        m.add(sum(cs.memory_bandwidth_kbps * y for _, cs, y in placed) <= node.bandwidth_free_kbps)


MEMORY = MemoryKind()

__all__ = ["MEMORY", "MemoryKind", "MemoryNode", "MemoryTable", "page_label"]
