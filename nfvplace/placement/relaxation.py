"""The node-count relaxation of a joint placement: an upper bound on what fits, and a plan.

Every member of a batch or VNF is a number of identical instances. The relaxation chooses how many
instances of each member go to each NUMA node (each host, for members with several cpu-sets), under
necessary conditions only, summed over the members that share a node:

- a member goes only where the single-VM filter lets one instance go (host checks, node needs);
- whole free cores >= howtogroup pairs; cores (whole, single-thread, sibling unusable) >= pairs plus
  isolated vCPUs; free threads >= every thread the instances take (a pair two, any other vCPU and the
  emulator PU one);
- free hugepages of each size, normal memory (strict and with oversubscription), memory bandwidth;
- for every port speed class, free VFs (and whole ports) on ports at least that fast >= the SR-IOV
  (dedicated) interfaces that need that speed or more, and the unused bandwidth of such ports that
  still have a free VF >= the bandwidth of those SR-IOV interfaces;
- oversubscribed plain VMs: the node's spare shared vCPUs and its normal memory;
- per host: the vSwitch's free bandwidth and each member's instances-per-host limit;
- at most the member's count.

Any real placement meets them all, so the largest total the relaxation admits (CP-SAT's proven bound)
bounds every placement from above. Its best solution is also a *plan*: hosts and nodes for each
member that joint placement (`mode="max"`) then tries to realise with the exact engine.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from ..models.vmd import InterfaceMode, ThreadPolicy, VmDescriptor
from .batch import Member
from .filter import run_filter
from .hostview import EPS, node_ports
from .index import UNLIMITED_KBPS, FleetIndex
from .options import Options
from .request import Request, build_request
from .variants import split


@dataclass(frozen=True, slots=True)
class Relaxation:
    bound: int  # no placement of these members places more instances
    optimal: bool  # the plan reaches the bound
    plan: dict[int, dict[int, int]]  # shape -> host -> instances planned there
    nodes: dict[tuple[int, int], set[int]]  # (shape, host) -> NUMA node ids planned for it
    shape_of: tuple[int, ...] = ()  # member -> its shape (members alike but for their names)


def shapes(members: Sequence[Member]) -> tuple[list[tuple[VmDescriptor, int]], tuple[int, ...]]:
    """Members that differ only by name are one shape (a batch of 200 VMs has a handful): the
    shapes (a descriptor, the summed count) and each member's shape."""
    found: dict[str, int] = {}
    out: list[tuple[VmDescriptor, int]] = []
    shape_of = []
    for member in members:
        vm = member.vm
        limited = vm.impact is not None and vm.impact.max_instances_per_host is not None
        key = vm.model_dump_json(exclude=None if limited else {"name"})
        if key not in found:
            found[key] = len(out)
            out.append((vm, 0))
        k = found[key]
        out[k] = (out[k][0], out[k][1] + member.count)
        shape_of.append(k)
    return out, tuple(shape_of)


@dataclass
class _Demand:
    """One member's use of a node (or of a host, for members with several cpu-sets)."""

    pairs: int = 0
    cores: int = 0  # pairs + isolated vCPUs
    threads: int = 0
    pages: dict[int, int] | None = None  # page size KiB -> count
    strict_mib: int = 0  # normal memory without oversubscription
    over_mib: int = 0  # normal memory with oversubscription
    bandwidth_kbps: int = 0
    shared_vcpus: int = 0
    vfs: tuple[tuple[float, int], ...] = ()  # (speed, kbit/s) each SR-IOV interface needs
    ports: tuple[float, ...] = ()  # speed each dedicated interface needs


def _parts(request: Request) -> list[tuple[int, _Demand]]:
    """(node_ok key, demand) of each part of one instance that sits on one node: each cpu-set (the
    emulator PU with the first), or the shared vCPUs."""
    parts = []
    for k, cs in enumerate(request.cpu_sets):
        pairs, singles = len(cs.pairs), len(cs.singles)
        d = _Demand(
            pairs=pairs,
            cores=pairs + (singles if cs.policy is ThreadPolicy.isolate else 0),
            threads=2 * pairs + singles + int(request.emulator and k == 0),
            pages={cs.hugepage_size_kib: cs.hugepage_count} if cs.hugepage_size_kib else {},
            bandwidth_kbps=cs.memory_bandwidth_kbps,
        )
        _memory(d, cs.normal_mib, request.memory_oversubscription)
        mine = request.interfaces_of(cs.id)
        d.vfs = tuple(
            (i.speed_gbps, i.bandwidth_kbps) for i in mine if i.mode is InterfaceMode.sriov
        )
        d.ports = tuple(i.speed_gbps for i in mine if i.mode is InterfaceMode.dedicated)
        parts.append((cs.id, d))
    if request.shared is not None:
        d = _Demand(shared_vcpus=request.shared.vcpus)
        _memory(d, request.shared.memory_mib, request.memory_oversubscription)
        parts.append((-1, d))
    return parts


def _memory(d: _Demand, mib: int, oversubscribed: bool) -> None:
    if oversubscribed:
        d.over_mib = mib
    else:
        d.strict_mib = mib


def _unbound(request: Request) -> _Demand:
    """The interfaces of one instance that may take a port of any node (counted per host)."""
    free = [i for i in request.interfaces if not i.restricted]
    return _Demand(
        vfs=tuple((i.speed_gbps, i.bandwidth_kbps) for i in free if i.mode is InterfaceMode.sriov),
        ports=tuple(i.speed_gbps for i in free if i.mode is InterfaceMode.dedicated),
    )


class _Model:
    """The CP-SAT model: variables per (member, host, slot), usage summed per slot."""

    def __init__(self, fleet: FleetIndex) -> None:
        self.fleet = fleet
        self.model = cp_model.CpModel()
        self.use: dict[tuple[int, int, str], list[cp_model.LinearExprT]] = defaultdict(list)

    def add(self, host: int, slot: int, x: cp_model.IntVar, demand: _Demand) -> None:
        """`x` instances' worth of `demand` on node slot `slot` of `host` (-1: the host)."""
        key = (host, slot)
        for name, per in (
            ("pairs", demand.pairs),
            ("cores", demand.cores),
            ("threads", demand.threads),
            ("strict", demand.strict_mib),
            ("normal", demand.strict_mib + demand.over_mib),
            ("membw", demand.bandwidth_kbps),
            ("shared", demand.shared_vcpus),
        ):
            if per:
                self.use[(*key, name)].append(per * x)
        for size, pages in (demand.pages or {}).items():
            self.use[(*key, f"pages{size}")].append(pages * x)
        for col, speed in enumerate(self.fleet.vocab.speeds):
            # the interfaces that need this speed or more take ports at least this fast
            fast = [kbps for s, kbps in demand.vfs if s >= speed - EPS]
            for name, need in (
                (f"vfs{col}", len(fast)),
                (f"vfbw{col}", sum(fast)),
                (f"ded{col}", sum(1 for s in demand.ports if s >= speed - EPS)),
            ):
                if need:
                    self.use[(*key, name)].append(need * x)

    def capacity(self, host: int, slot: int, name: str) -> int:
        """What a node (slot >= 0) or a whole host (slot -1) holds of `name`."""
        f = self.fleet
        cols = slice(None) if slot < 0 else slice(slot, slot + 1)
        exists = f.node_id[host, cols] >= 0

        def total(values: np.ndarray) -> int:
            return int(np.minimum(values[exists], UNLIMITED_KBPS).sum())

        if name == "pairs":
            return total(f.whole[host, cols])
        if name == "cores":
            return total(f.whole[host, cols] + f.single[host, cols] + f.half_iso[host, cols])
        if name == "threads":
            loose = f.single[host, cols] + f.half_iso[host, cols] + f.half_busy[host, cols]
            return total(f.whole_threads[host, cols] + loose)
        if name == "strict":
            return total(f.normal[host, cols])
        if name == "normal":
            return total(np.maximum(f.normal[host, cols], f.normal_over[host, cols]))
        if name == "membw":
            return total(f.membw[host, cols])
        if name == "shared":
            return total(np.floor(f.shared_spare[host, cols]).astype(np.int64))
        if name.startswith("vfbw"):
            return self.vf_bandwidth(host, slot, f.vocab.speeds[int(name[4:])])
        if name.startswith("pages"):
            col = f.page_column(int(name[5:]))
            return 0 if col is None else total(f.hugepages[host, cols, col])
        table = f.vfs if name.startswith("vfs") else f.ded_ports
        return total(table[host, cols, int(name[3:])])

    def vf_bandwidth(self, host: int, slot: int, speed: float) -> int:
        """Unused bandwidth of the ports at least `speed` fast that still have a free VF."""
        nodes = self.fleet.hosts[host].numa_nodes
        total = 0
        for node in nodes if slot < 0 else nodes[slot : slot + 1]:
            ports, nic_free = node_ports(node)
            for port in ports:
                if port.sriov_ok and port.free_vfs and port.speed_gbps >= speed - EPS:
                    total += min(port.bandwidth_free_kbps, nic_free.get(port.nic, UNLIMITED_KBPS))
        return total

    def finish(self) -> None:
        for (host, slot, name), terms in self.use.items():
            self.model.add(sum(terms) <= self.capacity(host, slot, name))


def relax(
    fleet: FleetIndex, members: Sequence[Member], options: Options, time_limit_s: float = 5.0
) -> Relaxation:
    """The relaxation of placing `members` (each `count` instances of `vm`) on `fleet`."""
    kinds, shape_of = shapes(members)
    m = _Model(fleet)
    on_host: dict[tuple[int, int], list[cp_model.IntVar]] = defaultdict(list)  # (member, host)
    on_node: dict[tuple[int, int, int], list[cp_model.IntVar]] = defaultdict(list)
    vswitch: dict[int, list[cp_model.LinearExprT]] = defaultdict(list)
    for k, (vm, count) in enumerate(kinds):
        for descriptor, variant, mask in split(fleet, vm):
            request = build_request(descriptor, variant)
            outcome = run_filter(fleet, request, options, mask)
            parts, unbound = _parts(request), _unbound(request)
            for host in np.flatnonzero(outcome.passing).tolist():
                z = m.model.new_int_var(0, count, f"z[{k},{host}]")
                on_host[(k, host)].append(z)
                for key, demand in parts:
                    ok = outcome.node_ok[key][host]
                    ys = []
                    for slot in np.flatnonzero(ok).tolist():
                        y = m.model.new_int_var(0, count, f"y[{k},{host},{key},{slot}]")
                        m.add(host, slot, y, demand)
                        ys.append(y)
                        on_node[(k, host, int(fleet.node_id[host, slot]))].append(y)
                    m.model.add(sum(ys) == z)
                m.add(host, -1, z, unbound)
                if request.vswitch_bandwidth_kbps:
                    vswitch[host].append(request.vswitch_bandwidth_kbps * z)
                impact = request.vm.impact
                if impact is not None and impact.max_instances_per_host is not None:
                    running = fleet.instances.get(request.name, {}).get(host, 0)
                    m.model.add(z <= max(impact.max_instances_per_host - running, 0))
        m.model.add(sum(z for (j, _), zs in on_host.items() if j == k for z in zs) <= count)
    m.finish()
    for host, terms in vswitch.items():
        if fleet.vswitch_free[host] < UNLIMITED_KBPS:
            m.model.add(sum(terms) <= int(fleet.vswitch_free[host]))
    m.model.maximize(sum(z for zs in on_host.values() for z in zs))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = 2
    status = solver.solve(m.model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Relaxation(sum(c for _, c in kinds), False, {}, {}, shape_of)
    plan: dict[int, dict[int, int]] = defaultdict(dict)
    for (k, host), zs in on_host.items():
        value = sum(solver.value(z) for z in zs)
        if value:
            plan[k][host] = value
    nodes: dict[tuple[int, int], set[int]] = defaultdict(set)
    for (k, host, node), ys in on_node.items():
        if any(solver.value(y) for y in ys):
            nodes[(k, host)].add(node)
    bound = int(solver.best_objective_bound + 1e-6)
    return Relaxation(bound, status == cp_model.OPTIMAL, dict(plan), dict(nodes), shape_of)
