"""The node-count relaxation of a joint placement: an upper bound on what fits, and a plan.

Every member of a batch or VNF is a number of identical instances. The relaxation chooses how many
instances of each member go to each NUMA node (each host, for members with several cpu-sets), under
necessary conditions only, summed over the members that share a node:

- a member goes only where the single-VM filter lets one instance go (host checks, node needs),
  each of its cpu-sets on a node (on distinct nodes when the descriptor asks);
- CPUs: a howtogroup pair takes a whole free core, an isolated vCPU a whole core or a thread whose
  sibling no VM can get (or a single-thread core), any other vCPU and the emulator PU a thread; on
  SMT2 nodes a whole core that gives loose threads gives at most two and nothing else;
- free hugepages of each size, normal memory (strict and with oversubscription), memory bandwidth;
- each SR-IOV interface on a port of its node (of the host, if it is not bound to its cpu-set) at
  least as fast as it asks: per port, at most its free VFs and its unused bandwidth (within its
  NIC's PCIe budget); for every speed class, whole free ports >= the dedicated interfaces that
  need that speed or more;
- oversubscribed plain VMs: only on nodes whose shared pool takes one spread evenly, within the
  node's spare shared vCPUs and its normal memory;
- per host: the vSwitch's free bandwidth and each member's instances-per-host limit;
- at most the member's count.

Any real placement meets them all, so the largest total the relaxation admits (CP-SAT's proven bound)
bounds every placement from above. Its best solution is also a *plan*: hosts and nodes for each
member that joint placement (`mode="max"`) then tries to realise with the exact engine.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from ..models.vmd import InterfaceMode, ThreadPolicy, VmDescriptor
from .batch import Member
from .filter import run_filter
from .hostview import EPS, node_ports, shared_pus
from .index import UNLIMITED_KBPS, FleetIndex
from .options import Options
from .request import InterfaceDemand, Request, build_request
from .shared import choose_pus
from .variants import split

CPU_USES = ("pairs", "isolated", "loose")


@dataclass(frozen=True, slots=True)
class _PortRoom:
    key: str  # node id / PCI address
    speed_gbps: float
    vfs: int
    kbps: int  # unused bandwidth (within its NIC's PCIe budget)


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
    """What one instance uses of a node (one cpu-set, or the shared vCPUs), or of a host (the
    interfaces not bound to a node)."""

    pairs: int = 0
    isolated: int = 0  # unpaired vCPUs under `isolate`: a core each
    loose: int = 0  # other unpaired vCPUs and the emulator PU: a thread each
    pages: dict[int, int] = field(default_factory=dict)  # page size KiB -> count
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
            isolated=singles if cs.policy is ThreadPolicy.isolate else 0,
            loose=(0 if cs.policy is ThreadPolicy.isolate else singles)
            + int(request.emulator and k == 0),
            pages={cs.hugepage_size_kib: cs.hugepage_count} if cs.hugepage_size_kib else {},
            bandwidth_kbps=cs.memory_bandwidth_kbps,
        )
        _memory(d, cs.normal_mib, request.memory_oversubscription)
        d.vfs, d.ports = _interfaces(request.interfaces_of(cs.id))
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
    vfs, ports = _interfaces([i for i in request.interfaces if not i.restricted])
    return _Demand(vfs=vfs, ports=ports)


def _interfaces(
    ifaces: Sequence[InterfaceDemand],
) -> tuple[tuple[tuple[float, int], ...], tuple[float, ...]]:
    """(speed, kbit/s) of the SR-IOV interfaces, and the speed of the dedicated ones."""
    vfs = tuple((i.speed_gbps, i.bandwidth_kbps) for i in ifaces if i.mode is InterfaceMode.sriov)
    return vfs, tuple(i.speed_gbps for i in ifaces if i.mode is InterfaceMode.dedicated)


class _CountModel:
    """The CP-SAT model's usage terms, summed per node slot (or host) and per port."""

    def __init__(self, fleet: FleetIndex) -> None:
        self.fleet = fleet
        self.model = cp_model.CpModel()
        self.use: dict[tuple[int, int, str], list[cp_model.LinearExprT]] = defaultdict(list)
        self.ports: dict[tuple[int, int], list[_PortRoom]] = {}
        # (host, slot, port) -> (VFs taken, kbit/s each)
        self.vf_use: dict[tuple[int, int, int], list[tuple[cp_model.IntVar, int]]] = defaultdict(
            list
        )

    def add(self, host: int, slot: int, x: cp_model.IntVar, demand: _Demand) -> None:
        """`x` instances' worth of `demand` on node slot `slot` of `host` (-1: the host)."""
        key = (host, slot)
        for name, per in (
            ("pairs", demand.pairs),
            ("isolated", demand.isolated),
            ("loose", demand.loose),
            ("strict", demand.strict_mib),
            ("normal", demand.strict_mib + demand.over_mib),
            ("membw", demand.bandwidth_kbps),
            ("shared", demand.shared_vcpus),
        ):
            if per:
                self.use[(*key, name)].append(per * x)
        for size, pages in demand.pages.items():
            self.use[(*key, f"pages{size}")].append(pages * x)
        for col, speed in enumerate(self.fleet.vocab.speeds):
            # the interfaces that need this speed or more take ports at least this fast
            need = sum(1 for s in demand.ports if s >= speed - EPS)
            if need:
                self.use[(*key, f"ded{col}")].append(need * x)
        for (speed, kbps), n in Counter(demand.vfs).items():
            ports = [
                k for k, p in enumerate(self._ports(host, slot)) if p.speed_gbps >= speed - EPS
            ]
            if not ports:
                self.model.add(x == 0)
                continue
            spread = []
            for k in ports:
                w = self.model.new_int_var(
                    0, self._ports(host, slot)[k].vfs, f"w[{host},{slot},{k}]"
                )
                self.vf_use[(host, slot, k)].append((w, kbps))
                spread.append(w)
            self.model.add(sum(spread) == n * x)

    def _ports(self, host: int, slot: int) -> list[_PortRoom]:
        """The ports of a node (slot -1: of the host) that can still give a VF."""
        key = (host, slot)
        if key not in self.ports:
            nodes = self.fleet.hosts[host].numa_nodes
            rooms = []
            for node in nodes if slot < 0 else nodes[slot : slot + 1]:
                views, nic_free = node_ports(node)
                for port in views:
                    if port.sriov_ok and port.free_vfs:
                        nic = nic_free.get(port.nic, UNLIMITED_KBPS)
                        rooms.append(
                            _PortRoom(
                                f"{node.id}/{port.pci_address}",
                                port.speed_gbps,
                                len(port.free_vfs),
                                min(port.bandwidth_free_kbps, nic),
                            )
                        )
            self.ports[key] = rooms
        return self.ports[key]

    def capacity(self, host: int, slot: int, name: str) -> int:
        """What a node (slot >= 0) or a whole host (slot -1) holds of `name`."""
        f = self.fleet
        cols = slice(None) if slot < 0 else slice(slot, slot + 1)
        exists = f.node_id[host, cols] >= 0

        def total(values: np.ndarray) -> int:
            return int(np.minimum(values[exists], UNLIMITED_KBPS).sum())

        if name == "strict":
            return total(f.normal[host, cols])
        if name == "normal":
            return total(np.maximum(f.normal[host, cols], f.normal_over[host, cols]))
        if name == "membw":
            return total(f.membw[host, cols])
        if name == "shared":
            return total(np.floor(f.shared_spare[host, cols]).astype(np.int64))
        if name.startswith("pages"):
            col = f.page_column(int(name[5:]))
            return 0 if col is None else total(f.hugepages[host, cols, col])
        return total(f.ded_ports[host, cols, int(name[3:])])

    def finish(self) -> None:
        cpu: dict[tuple[int, int], dict[str, list[cp_model.LinearExprT]]] = defaultdict(dict)
        for (host, slot, name), terms in self.use.items():
            if name in CPU_USES:
                cpu[(host, slot)][name] = terms
            else:
                self.model.add(sum(terms) <= self.capacity(host, slot, name))
        for (host, slot), uses in cpu.items():
            self._cpus(host, slot, uses)
        # a port's VFs and bandwidth, whether node-level or host-level interfaces take them
        by_port: dict[str, list[tuple[cp_model.IntVar, int]]] = defaultdict(list)
        rooms: dict[str, _PortRoom] = {}
        for (host, slot, k), taken in self.vf_use.items():
            room = self._ports(host, slot)[k]
            by_port[f"{host}:{room.key}"].extend(taken)
            rooms[f"{host}:{room.key}"] = room
        for key, taken in by_port.items():
            self.model.add(sum(w for w, _ in taken) <= rooms[key].vfs)
            self.model.add(sum(kbps * w for w, kbps in taken) <= rooms[key].kbps)

    def _cpus(self, host: int, slot: int, uses: dict[str, list[cp_model.LinearExprT]]) -> None:
        """Pairs, isolated vCPUs and loose threads on one node. On SMT2 nodes, exactly how they
        can share its cores: every whole core holds a pair, an isolated vCPU or loose threads (up
        to two), every thread whose sibling is unusable or absent an isolated vCPU or a loose
        thread, every thread whose sibling is used a loose thread."""
        f, m = self.fleet, self.model
        pairs, isolated, loose = (cp_model.LinearExpr.sum(uses.get(k, [])) for k in CPU_USES)
        whole, threads = int(f.whole[host, slot]), int(f.whole_threads[host, slot])
        alone = int(f.half_iso[host, slot] + f.single[host, slot])
        busy = int(f.half_busy[host, slot])
        if threads != 2 * whole:  # cores of other sizes: the counts alone
            m.add(pairs <= whole)
            m.add(pairs + isolated <= whole + alone)
            m.add(2 * pairs + isolated + loose <= threads + alone + busy)
            return
        on_alone = m.new_int_var(0, alone, f"iso_alone[{host},{slot}]")
        shared = m.new_int_var(0, whole, f"loose_cores[{host},{slot}]")
        m.add(on_alone <= isolated)
        m.add(pairs + isolated - on_alone + shared <= whole)
        m.add(loose <= busy + alone - on_alone + 2 * shared)


def _pool_takes(fleet: FleetIndex, host: int, slot: int, request: Request) -> bool:
    """Whether a node's shared pool takes one instance spread evenly (the filter only compares the
    pool's total room): some m of its PUs each with room for vCPUs / m."""
    assert request.shared is not None
    return choose_pus(shared_pus(fleet.hosts[host].numa_nodes[slot]), request.shared) is not None


def relax(
    fleet: FleetIndex,
    members: Sequence[Member],
    options: Options,
    time_limit_s: float = 5.0,
    seed: int = 0,
) -> Relaxation:
    """The relaxation of placing `members` (each `count` instances of `vm`) on `fleet`. One solver
    worker, so that a `seed` always gives the same plan (the optimum has many)."""
    kinds, shape_of = shapes(members)
    m = _CountModel(fleet)
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
                per_slot: dict[int, list[cp_model.IntVar]] = defaultdict(list)
                for key, demand in parts:
                    ys = []
                    for slot in np.flatnonzero(outcome.node_ok[key][host]).tolist():
                        if key == -1 and not _pool_takes(fleet, host, slot, request):
                            continue
                        y = m.model.new_int_var(0, count, f"y[{k},{host},{key},{slot}]")
                        m.add(host, slot, y, demand)
                        ys.append(y)
                        per_slot[slot].append(y)
                        on_node[(k, host, int(fleet.node_id[host, slot]))].append(y)
                    m.model.add(sum(ys) == z)
                if request.distinct_nodes and len(parts) > 1:
                    for ys in per_slot.values():  # an instance puts one cpu-set on a node
                        m.model.add(sum(ys) <= z)
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
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
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
