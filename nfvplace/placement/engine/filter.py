"""The vectorised filter: every host and NUMA node at once, with counts.

Host-level checks run first (the kinds' `host_checks`, in the order `resources.HOST_CHECKS` says:
processor, memory type and hypervisor; interfaces bound to no node and the vSwitch; PCI devices;
impact limits; SMT; cache ways); then, for each part of the VM (each cpu-set, or its shared vCPUs),
every kind's node needs over every node (in the order `resources.NODE_NEEDS` says). A host is out at the first check it fails, which becomes its reason. The conditions are
necessary ones: a host that passes them all goes to the exact model, which may still find it
infeasible (then that is its reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..index import FleetIndex
from ..options import Options
from ..reasons import Reason
from ..request import SHARED, Part, Request
from ..resources import HOST_CHECKS, NODE_NEEDS
from ..resources.base import BoolArray, IntArray
from ..resources.filtering import FilterInput, HostCheck, NodeNeed
from ..resources.rows import rows_any, rows_sum


class _Hosts:
    """A record's hosts: the positions of its mask `hit` (an array of its own), listed when first
    read (a placement that succeeds never reads them)."""

    __slots__ = ("_hosts", "hit")

    def __init__(self, hit: BoolArray) -> None:
        self.hit = hit
        self._hosts: IntArray | None = None

    @property
    def hosts(self) -> IntArray:
        if self._hosts is None:
            self._hosts = np.flatnonzero(self.hit)
        return self._hosts


class HostCheckRecord(_Hosts):
    __slots__ = ("check",)

    def __init__(self, check: HostCheck, hit: BoolArray) -> None:
        super().__init__(hit)
        self.check = check


class NodeRecord(_Hosts):
    """Hosts on which no node meets every need of one part (a cpu-set, or the shared vCPUs)."""

    __slots__ = ("cpu_set", "many_cpu_sets", "needs")

    def __init__(
        self,
        cpu_set: int | None,
        needs: tuple[NodeNeed, ...],
        hit: BoolArray,
        many_cpu_sets: bool,
    ) -> None:
        super().__init__(hit)
        self.cpu_set = cpu_set  # None: the shared vCPUs
        self.needs = needs
        self.many_cpu_sets = many_cpu_sets


class CountRecord(_Hosts):
    __slots__ = ("available", "code", "needed", "summary")

    def __init__(
        self, code: Reason, summary: str, hit: BoolArray, needed: int, available: IntArray
    ) -> None:
        super().__init__(hit)
        self.code, self.summary, self.needed, self.available = code, summary, needed, available


@dataclass
class FilterOutcome:
    fleet: FleetIndex
    request: Request
    passing: BoolArray
    node_ok: dict[int, BoolArray]  # part id (cpu-set id, or -1 shared) -> (hosts x node slots)
    records: list[HostCheckRecord | NodeRecord | CountRecord] = field(default_factory=list)


def _host_checks(inp: FilterInput) -> list[HostCheck]:
    return [check for kind in HOST_CHECKS for check in kind.host_checks(inp)]


def run_filter(
    fleet: FleetIndex, request: Request, options: Options, consider: BoolArray
) -> FilterOutcome:
    inp = FilterInput(fleet, request, options)
    out = FilterOutcome(fleet, request, consider.copy(), {})
    for check in _host_checks(inp):
        hit = out.passing & check.failing
        if hit.any():
            out.records.append(HostCheckRecord(check, hit))
            out.passing ^= hit  # `hit` is of `passing`
    exists = fleet.node_id >= 0
    for cs in request.cpu_sets:
        _node_needs(inp, out, cs, exists, len(request.cpu_sets) > 1)
    _distinct_nodes(out, request, exists)
    if request.shared is not None:
        _node_needs(inp, out, request.shared, exists, False)
    return out


def _node_needs(
    inp: FilterInput, out: FilterOutcome, part: Part, exists: BoolArray, many: bool
) -> None:
    """Hosts on which no node meets every kind's needs of `part`."""
    needs = [need for kind in NODE_NEEDS for need in kind.node_needs(inp, part)]
    ok = exists & needs[0].ok if needs else exists.copy()
    for need in needs[1:]:
        ok &= need.ok
    out.node_ok[part.id] = ok
    hit = np.greater(out.passing, rows_any(ok))  # passing, and no node meets every need
    if hit.any():
        cpu_set = None if part.id == SHARED else part.id
        out.records.append(NodeRecord(cpu_set, tuple(needs), hit, many))
        out.passing ^= hit


def _distinct_nodes(out: FilterOutcome, request: Request, exists: BoolArray) -> None:
    """Cpu-sets on distinct nodes: hosts with fewer nodes that can each take one than cpu-sets."""
    if len(request.cpu_sets) < 2 or not request.distinct_nodes:
        return
    union = np.zeros_like(exists)
    for cs in request.cpu_sets:
        union |= out.node_ok[cs.id]
    count = rows_sum(union)
    hit = out.passing & (count < len(request.cpu_sets))
    if hit.any():
        out.records.append(
            CountRecord(
                Reason.numa_nodes,
                f"have fewer than {len(request.cpu_sets)} NUMA nodes that can each take a cpu-set",
                hit,
                len(request.cpu_sets),
                count,
            )
        )
        out.passing &= ~hit
