"""The vectorised filter: every host and NUMA node at once, with counts.

Host-level checks run first, in a fixed order (processor, memory, hypervisor and capabilities,
vSwitch and unrestricted interfaces, impact, SMT); then, for each cpu-set, its node needs (core pairs,
cores or threads, hugepages, memory, memory bandwidth, ports and VFs) over every node. A host is out at
the first check it fails, which becomes its reason. The conditions are necessary ones: a host that
passes them all goes to the exact model, which may still find it infeasible (then that is its reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .constraints import capabilities, cpu, devices, impact, memory, nics
from .constraints.base import FilterInput, HostCheck, NodeNeed
from .index import BoolArray, FleetIndex, IntArray
from .options import Options
from .request import Request


@dataclass(frozen=True, slots=True)
class HostCheckRecord:
    check: HostCheck
    hosts: IntArray


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """Hosts on which no node meets every need of one cpu-set (or of the shared demand)."""

    cpu_set: int | None
    needs: tuple[NodeNeed, ...]
    hosts: IntArray
    many_cpu_sets: bool


@dataclass(frozen=True, slots=True)
class CountRecord:
    code: str
    summary: str
    hosts: IntArray
    needed: int
    available: IntArray


@dataclass
class FilterOutcome:
    fleet: FleetIndex
    request: Request
    passing: BoolArray
    node_ok: dict[int, BoolArray]  # cpu-set id -> (hosts x node slots)
    records: list[HostCheckRecord | NodeRecord | CountRecord] = field(default_factory=list)


def shared_needs(inp: FilterInput) -> list[NodeNeed]:
    f = inp.fleet
    demand = inp.request.shared
    assert demand is not None
    free_mem = f.normal_over if inp.request.memory_oversubscription else f.normal
    out = [
        NodeNeed(
            "shared_cpu",
            f"room for {demand.vcpus} vCPUs on shared PUs",
            f.shared_spare >= demand.vcpus - 1e-9,
            f.shared_spare,
            demand.vcpus,
            "vCPUs of spare shared capacity",
        )
    ]
    if demand.memory_mib:
        out.append(
            NodeNeed(
                "memory",
                f"{demand.memory_mib} MiB free memory",
                free_mem >= demand.memory_mib,
                free_mem,
                demand.memory_mib,
                "MiB free memory",
            )
        )
    return out


def run_filter(
    fleet: FleetIndex, request: Request, options: Options, consider: BoolArray
) -> FilterOutcome:
    inp = FilterInput(fleet, request, options)
    out = FilterOutcome(fleet, request, consider.copy(), {})
    alive = out.passing
    checks = (
        capabilities.checks(inp)
        + nics.host_checks(inp)
        + devices.host_checks(inp)
        + impact.host_checks(inp)
        + cpu.host_checks(inp)
    )
    for check in checks:
        hit = alive & check.failing
        if hit.any():
            out.records.append(HostCheckRecord(check, np.flatnonzero(hit)))
            alive &= ~hit
    exists = fleet.node_id >= 0
    many = len(request.cpu_sets) > 1
    for k, cs in enumerate(request.cpu_sets):
        emulator = 1 if request.emulator and k == 0 else 0
        needs = (
            cpu.node_needs(inp, cs, emulator)
            + memory.node_needs(inp, cs)
            + nics.node_needs(inp, cs.id)
            + devices.node_needs(inp, cs)
        )
        ok = exists.copy()
        for need in needs:
            ok &= need.ok
        out.node_ok[cs.id] = ok
        hit = alive & ~ok.any(axis=1)
        if hit.any():
            out.records.append(NodeRecord(cs.id, tuple(needs), np.flatnonzero(hit), many))
            alive &= ~hit
    if many and request.distinct_nodes:
        union = np.zeros_like(exists)
        for ok in out.node_ok.values():
            union |= ok
        count = union.sum(axis=1)
        hit = alive & (count < len(request.cpu_sets))
        if hit.any():
            out.records.append(
                CountRecord(
                    "numa_nodes",
                    f"have fewer than {len(request.cpu_sets)} NUMA nodes that can each take a cpu-set",
                    np.flatnonzero(hit),
                    len(request.cpu_sets),
                    count,
                )
            )
            alive &= ~hit
    if request.shared is not None:
        needs = shared_needs(inp)
        ok = exists.copy()
        for need in needs:
            ok &= need.ok
        out.node_ok[-1] = ok
        hit = alive & ~ok.any(axis=1)
        if hit.any():
            out.records.append(NodeRecord(None, tuple(needs), np.flatnonzero(hit), False))
            alive &= ~hit
    return out
