"""A host's free PUs, classified the way the CPU kind counts them.

For every NUMA node: free cores with no thread used (`whole_cores`, with their free threads: a
howtogroup pair, an isolated vCPU with its siblings kept idle, or up to that many `prefer` vCPUs),
free single-thread cores (no SMT), and free threads whose siblings are busy (only for `prefer` and
the emulator PU): used by a VM, or host-reserved. A host-reserved sibling runs the host's
housekeeping, the noisy neighbour `isolate` and `require` exist to avoid (as in Nova, which needs
every thread of such a core in its dedicated set and free).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import chain

from ....exact import rational
from ....models.chd import ComputeHostDescriptor, Cpu, CpuState, NumaNode
from ..base import node_parts, same_objects
from ..draft import places_of


@dataclass(frozen=True, slots=True)
class CpuNode:
    whole_cores: tuple[tuple[int, ...], ...]  # free threads of each core with no thread used
    single_cores: tuple[int, ...]  # PUs of free cores that have one thread
    half_busy: tuple[int, ...]  # free threads whose sibling is used by a VM or host-reserved
    eligible_threads: int
    smt: bool  # some core has more than one thread
    # every sibling looked up is a PU of this node (lint refuses others): the node's part depends
    # on its own PUs alone, and holds while they are the same objects
    self_contained: bool
    # worked out once from the fields above (the exact model and the policies read them often)
    free_threads: int = field(init=False, repr=False, compare=False)
    core_sizes: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """The distinct thread counts of the whole free cores (2 on SMT2 hosts), ascending."""

    def __post_init__(self) -> None:
        whole = sum(len(c) for c in self.whole_cores)
        free = whole + len(self.single_cores) + len(self.half_busy)
        object.__setattr__(self, "free_threads", free)
        object.__setattr__(self, "core_sizes", tuple(sorted({len(c) for c in self.whole_cores})))

    def whole_of_size(self, size: int) -> int:
        return sum(1 for c in self.whole_cores if len(c) == size)


@dataclass(frozen=True, slots=True)
class CpuFree:
    nodes: tuple[CpuNode, ...]  # by node slot
    smt: bool  # some core has more than one thread


def _classify(node: NumaNode, host: ComputeHostDescriptor) -> CpuNode:
    whole: dict[tuple[int, ...], None] = {}
    single: list[int] = []
    half_busy: list[int] = []
    eligible = 0
    own = {cpu.id: cpu for cpu in node.cpus}
    every: dict[int, Cpu] = {}  # the host's PUs, for a sibling on another node (lint's NFV405)
    contained = True
    for cpu in node.cpus:
        if not cpu.eligible:
            continue
        eligible += 1
        if cpu.state is not CpuState.free:
            continue
        free = [cpu.id]
        has_other = any_busy = False
        for s in cpu.siblings:
            if s == cpu.id:
                continue
            has_other = True
            other = own.get(s)
            if other is None:
                contained = False
                every = every or {pu.id: pu for pu in host.cpus}
                other = every.get(s)
            if other is not None and other.eligible and other.state is CpuState.free:
                free.append(s)
            else:
                any_busy = True  # used by a VM, or host-reserved
        if not has_other:
            single.append(cpu.id)
        elif any_busy:
            half_busy.append(cpu.id)
        else:
            whole[tuple(sorted(free))] = None
    smt = any(len(cpu.siblings) > 1 for cpu in node.cpus)
    return CpuNode(tuple(whole), tuple(single), tuple(half_busy), eligible, smt, contained)


def cpu_free(
    host: ComputeHostDescriptor, before: tuple[ComputeHostDescriptor, CpuFree] | None = None
) -> CpuFree:
    """Classify `host`'s free PUs per NUMA node (one pass over its PUs). With `before` (an earlier
    version of the host, same node ids), nodes whose PUs are the same objects keep their part."""
    if before is None:
        nodes = tuple(_classify(node, host) for node in host.numa_nodes)
    else:
        nodes = node_parts(
            host,
            before[0],
            before[1].nodes,
            lambda node, old, part: part.self_contained and same_objects(node.cpus, old.cpus),
            lambda _slot, node: _classify(node, host),
        )
        if nodes is before[1].nodes:
            return before[1]
    return CpuFree(nodes, any(node.smt for node in nodes))


def cpu_claimed(
    before: ComputeHostDescriptor, free_before: CpuFree, held: Collection[int]
) -> CpuFree | None:
    """`cpu_free` of `before` once the PUs `held` (all free on it) are given to a VM, worked out
    from `free_before` alone: each held PU leaves its class, and the free threads left of a whole
    core it broke become threads next to a used one (None: a PU not free, or a node whose cores
    reach into another, for which the host is read again)."""
    left = set(held)
    nodes = list(free_before.nodes)
    for j, part in enumerate(free_before.nodes):
        if not left:
            break
        taken = left.intersection(chain(part.single_cores, part.half_busy, *part.whole_cores))
        if not taken:
            continue
        if not part.self_contained:
            return None
        nodes[j] = _taken(part, taken, before.numa_nodes[j])
        left -= taken
    return None if left else CpuFree(tuple(nodes), free_before.smt)


def newly_busy(
    before: ComputeHostDescriptor, after: ComputeHostDescriptor, pus: Iterable[int]
) -> set[int] | None:
    """Which of `pus` (shared PUs a claim charged) it took from the free classes: free and
    eligible on `before`, not free on `after` (the claimed host, its PUs in their places); None
    when a PU is not on exactly one node (the host is read again then)."""
    places = [places_of(node) for node in before.numa_nodes]
    out: set[int] = set()
    for pu in pus:
        where = [(j, p[pu][1]) for j, p in enumerate(places) if pu in p]
        if len(where) != 1:
            return None
        j, k = where[0]
        cpus = after.numa_nodes[j].cpus
        if k >= len(cpus) or cpus[k].id != pu:
            return None
        old, new = before.numa_nodes[j].cpus[k], cpus[k]
        if old.eligible and old.state is CpuState.free and new.state is not CpuState.free:
            out.add(pu)
    return out


def _taken(part: CpuNode, taken: set[int], node: NumaNode) -> CpuNode:
    """`part` with the PUs `taken` used (`_classify` of the node once they are)."""
    whole: list[tuple[int, ...]] = []
    broken: list[int] = []
    for core in part.whole_cores:
        if taken.isdisjoint(core):
            whole.append(core)
        else:
            broken.extend(pu for pu in core if pu not in taken)
    half = [pu for pu in part.half_busy if pu not in taken]
    if broken:  # in the order `_classify` meets them: the node's PUs in order
        places = places_of(node)  # as the claim mapped them (a node of 192 PUs: not again)
        half = sorted(half + broken, key=lambda pu: places[pu][1])
    single = tuple(pu for pu in part.single_cores if pu not in taken)
    return CpuNode(
        tuple(whole), single, tuple(half), part.eligible_threads, part.smt, part.self_contained
    )


def free_charged(
    before: ComputeHostDescriptor,
    free_before: CpuFree,
    charges: Iterable[tuple[Fraction, Iterable[int]]],
) -> set[int] | None:
    """Which of the shared PUs charged (each set with the share of a vCPU each of its PUs takes)
    a claim takes from the free classes of `free_before`, told without the claimed host: every
    one of them, its state turned `shared` by the charge. None when a charge may leave one free
    (its share, against the ratio `before` holds for it, near 0: the claim keeps a PU used less
    than 1e-9 free) or the PU is not where `before` has it."""
    free = {pu for part in free_before.nodes for pu in _free_pus(part)}
    out: set[int] = set()
    for share, pus in charges:
        for pu in pus:
            if pu not in free:
                continue
            cpu = _cpu(before, pu)
            if cpu is None or share / (rational(cpu.oversubscription_ratio or 1.0) or 1) <= _SURE:
                return None
            out.add(pu)
    return out


_SURE = Fraction(1, 10**8)  # a usage this far above 1e-9 turns the PU shared, float error aside


def _free_pus(part: CpuNode) -> Iterable[int]:
    return chain(part.single_cores, part.half_busy, *part.whole_cores)


def _cpu(host: ComputeHostDescriptor, pu: int) -> Cpu | None:
    for node in host.numa_nodes:
        at = places_of(node).get(pu)
        if at is not None:
            return node.cpus[at[1]]
    return None
