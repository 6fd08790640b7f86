"""The counting model: how many instances of one request a host takes, worked out on its free counts.

What-if capacity asks, for every host of the fleet, how many instances the engine would place there
one after the other. Running the engine instance by instance costs about 2 ms each, so a fleet of
1,000 hosts with room for several thousand instances takes seconds. This model gives the same count
for the common shape of request (one pinned cpu-set, its interfaces on the cpu-set's node, no PCI
devices) in microseconds: each NUMA node is filled instance after instance on integer counts, taking
what the engine's objective takes first:

- howtogroup pairs: one whole free core each;
- unpaired vCPUs under `isolate`: a single-thread core or a thread whose sibling no VM can get,
  else a whole core (its sibling kept idle);
- unpaired vCPUs otherwise: a loose thread (sibling used, single-thread core, sibling unusable),
  else both threads of a whole core, the last odd one leaving its sibling free;
- the emulator PU (`emulator_threads: isolate`): the thread an odd vCPU left free, else a loose
  thread (one whose sibling is used first), else a thread of a whole core (its sibling then loose);
- hugepages, normal memory and memory bandwidth of the node, in their units;
- the instance's interfaces on the ports of the node that can carry them, in the layout of least
  engine cost (SR-IOV: the least bandwidth left on the ports used, and none stranded on a port
  whose VFs run out; dedicated: the slowest port fast enough), within each port's free VFs, VF
  pacing and bandwidth and its NIC's PCIe budget.

Oversubscribed plain VMs are counted on each node's shared pool, spread as `shared.choose_pus`
spreads them, and its normal memory. Nodes are independent for such requests, so the host's count is
the sum of its nodes', capped by the host-wide limits (vSwitch bandwidth, instances per host). A
request or host of another shape (several cpu-sets, PCI devices, links, cores of more than two
threads, a memory-bandwidth impact budget) returns None and is counted by the engine itself, and so
does a host on which two interface layouts of equal cost would leave its ports differently (the
solver may pick either, and the next instances' count can depend on it). `tests/placement/test_counting.py` compares both counts on random hosts.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

from ..exact import KBPS_PER_GBPS
from ..models.vmd import InterfaceMode, ThreadPolicy
from .constraints.nics import port_takes
from .hostview import PortView, match_vfs, node_ports, shared_pus
from .index import UNLIMITED_KBPS, FleetIndex
from .request import CpuSetDemand, InterfaceDemand, Request, SharedDemand
from .shared import charge, choose_pus

MAX_PER_NODE = 4096  # a guard against a request that takes nothing
MAX_LAYOUTS = 4096  # interface-to-port layouts tried per instance
Layout = tuple[tuple[InterfaceDemand, int], ...]


@dataclass
class _PortLeft:
    speed_gbps: float
    bandwidth_free_kbps: int
    vf_rates_kbps: list[int | None]  # pacing of each free VF (None: not paced)
    dedicable: bool
    sriov_ok: bool
    physical_network: str | None
    nic: str

    @classmethod
    def of(cls, port: PortView) -> _PortLeft:
        return cls(
            port.speed_gbps,
            port.bandwidth_free_kbps,
            list(port.vf_rates_kbps),
            port.dedicable,
            port.sriov_ok,
            port.physical_network,
            port.nic,
        )


@dataclass
class _Node:
    """The free counts of one NUMA node, taken from as instances are counted onto it."""

    whole: int
    half_iso: int
    half_busy: int
    single: int
    pages: int
    normal: int
    bandwidth_kbps: int
    ports: list[_PortLeft] = field(default_factory=list)
    nic_free: dict[str, int] = field(default_factory=dict)


def covers(request: Request) -> bool:
    """Whether the counting model gives the engine's count for `request`."""
    if len(request.cpu_sets) + (request.shared is not None) != 1 or request.links:
        return False
    vm = request.vm
    if vm.pci_devices or (vm.impact is not None and vm.impact.memory_bandwidth_gbps):
        return False
    if request.shared is not None:
        return all(i.mode is InterfaceMode.vswitch for i in request.interfaces)
    return all(i.restricted or i.mode is InterfaceMode.vswitch for i in request.interfaces)


# --- one instance on one node ---------------------------------------------------------------


def _take_cpus(node: _Node, cs: CpuSetDemand, emulator: bool) -> str | None:
    pairs, singles = len(cs.pairs), len(cs.singles)
    if pairs > node.whole:
        return "core_pairs"
    node.whole -= pairs
    left = 0
    if cs.policy is ThreadPolicy.isolate:
        loose = min(singles, node.single + node.half_iso)
        if singles - loose > node.whole:
            return "cores"
        node.whole -= singles - loose
        from_single = min(loose, node.single)
        node.single -= from_single
        node.half_iso -= loose - from_single
    else:
        loose = min(singles, node.half_busy + node.single + node.half_iso)
        rest = singles - loose
        cores = (rest + 1) // 2
        if cores > node.whole:
            return "threads"
        node.whole -= cores
        left = 2 * cores - rest
        _take_loose(node, loose)
    if emulator:
        if left:
            left = 0
        elif node.half_busy + node.single + node.half_iso:
            _take_loose(node, 1)
        elif node.whole:
            node.whole -= 1
            left = 1
        else:
            return "threads"
    node.half_busy += left  # a thread the instance left free: its sibling is now used
    return None


def _take_loose(node: _Node, n: int) -> None:
    for name in ("half_busy", "single", "half_iso"):
        got = min(n, getattr(node, name))
        setattr(node, name, getattr(node, name) - got)
        n -= got


def _by_port(layout: Layout) -> dict[int, list[InterfaceDemand]]:
    by_port: dict[int, list[InterfaceDemand]] = {}
    for iface, k in layout:
        by_port.setdefault(k, []).append(iface)
    return by_port


def _layout_cost(node: _Node, layout: Layout, spread: bool) -> int | None:
    """The engine's port cost of `layout` (interface -> port), None when the ports cannot take it."""
    cost = 0
    by_port = _by_port(layout)
    nic_use: dict[str, int] = {}
    for k, users in by_port.items():
        port = node.ports[k]
        dedicated = [i for i in users if i.mode is InterfaceMode.dedicated]
        if dedicated and len(users) > 1:
            return None
        if dedicated:
            cost += round(port.speed_gbps - dedicated[0].speed_gbps)
            continue
        matched = match_vfs(port.vf_rates_kbps, [i.bandwidth_kbps for i in users])
        left = port.bandwidth_free_kbps - sum(i.bandwidth_kbps for i in users)
        if matched is None or left < 0:
            return None
        slack = port.bandwidth_free_kbps // KBPS_PER_GBPS
        slack -= sum(i.bandwidth_kbps // KBPS_PER_GBPS for i in users)
        cost += -slack if spread else slack
        if len(matched) == len(port.vf_rates_kbps):
            cost += left // KBPS_PER_GBPS  # stranded: no VF left to use it
        nic_use[port.nic] = nic_use.get(port.nic, 0) + sum(i.bandwidth_kbps for i in users)
    if any(used > node.nic_free.get(nic, used) for nic, used in nic_use.items()):
        return None
    return cost


def _take_ports(node: _Node, ifaces: tuple[InterfaceDemand, ...], spread: bool) -> str | None:
    """Take the ports of one instance's interfaces: the layout of least engine cost."""
    if not ifaces:
        return None
    options = []
    for iface in ifaces:
        fitting = [k for k, p in enumerate(node.ports) if port_takes(p, iface)]
        if not fitting:
            return "dedicated_port" if iface.mode is InterfaceMode.dedicated else "sriov_vf"
        options.append([(iface, k) for k in fitting])
    costed = []
    for layout in itertools.islice(itertools.product(*options), MAX_LAYOUTS):
        cost = _layout_cost(node, layout, spread)
        if cost is not None:
            costed.append((cost, layout))
    if not costed:
        return "sriov_bandwidth"
    least = min(cost for cost, _ in costed)
    best = [layout for cost, layout in costed if cost == least]
    if len(best) > 1:
        after = {_ports_after(node, layout) for layout in best}
        if len(after) > 1:
            raise AmbiguousLayoutError  # the engine's solver picks one of these, not necessarily ours
    _apply(node, best[0])
    return None


def _apply(node: _Node, layout: Layout) -> None:
    """Take what `layout` (a layout `_layout_cost` accepted) takes of the node's ports."""
    for k, users in _by_port(layout).items():
        port = node.ports[k]
        port.dedicable = False
        if users[0].mode is InterfaceMode.dedicated:
            port.sriov_ok = False
            continue
        matched = match_vfs(port.vf_rates_kbps, [i.bandwidth_kbps for i in users])
        assert matched is not None
        port.vf_rates_kbps = [r for j, r in enumerate(port.vf_rates_kbps) if j not in matched]
        used = sum(i.bandwidth_kbps for i in users)
        port.bandwidth_free_kbps -= used
        if port.nic in node.nic_free:
            node.nic_free[port.nic] -= used


def _ports_after(node: _Node, layout: Layout) -> tuple[object, ...]:
    """What the ports hold after `layout`, as a value: a multiset, so that taking one of two
    identical ports or the other is the same."""
    ports = [dataclasses.replace(p, vf_rates_kbps=list(p.vf_rates_kbps)) for p in node.ports]
    copy = dataclasses.replace(node, ports=ports, nic_free=dict(node.nic_free))
    _apply(copy, layout)
    return tuple(
        sorted(
            (
                (
                    p.speed_gbps,
                    p.physical_network or "",
                    p.bandwidth_free_kbps,
                    p.dedicable,
                    p.sriov_ok,
                ),
                tuple(sorted(r if r is not None else -1 for r in p.vf_rates_kbps)),
                copy.nic_free.get(p.nic, -1),
            )
            for p in copy.ports
        )
    )


class AmbiguousLayoutError(Exception):
    """Layouts of equal cost leave the ports differently: the count depends on the solver's pick."""


def _take(node: _Node, request: Request, spread: bool) -> str | None:
    """Count one more instance onto `node`; the reason code of what is missing, or None."""
    # in the filter's order, so that the reason is the one `place` would give; a node is not
    # counted onto again once something is missing, so a partly taken instance does no harm
    cs = request.cpu_sets[0]
    missing = _take_cpus(node, cs, request.emulator)
    if missing:
        return missing
    if cs.hugepage_count > node.pages:
        return "hugepages"
    if cs.normal_mib > node.normal:
        return "memory"
    if cs.memory_bandwidth_kbps > node.bandwidth_kbps:
        return "memory_bandwidth"
    node.pages -= cs.hugepage_count
    node.normal -= cs.normal_mib
    node.bandwidth_kbps -= cs.memory_bandwidth_kbps
    return _take_ports(node, request.interfaces_of(cs.id), spread)


# --- a host ---------------------------------------------------------------------------------


def _nodes(fleet: FleetIndex, i: int, request: Request) -> list[_Node] | None:
    cs = request.cpu_sets[0]
    column = fleet.page_column(cs.hugepage_size_kib) if cs.hugepage_size_kib else None
    normal = fleet.normal_over if request.memory_oversubscription else fleet.normal
    wants_ports = bool(request.interfaces_of(cs.id))
    nodes = []
    for j in range(fleet.max_nodes):
        if fleet.node_id[i, j] < 0:
            continue
        if fleet.whole_threads[i, j] != 2 * fleet.whole[i, j]:
            return None  # cores of more than two threads: the engine counts those
        node = _Node(
            whole=int(fleet.whole[i, j]),
            half_iso=int(fleet.half_iso[i, j]),
            half_busy=int(fleet.half_busy[i, j]),
            single=int(fleet.single[i, j]),
            pages=int(fleet.hugepages[i, j, column]) if column is not None else 0,
            normal=int(normal[i, j]),
            bandwidth_kbps=int(fleet.membw[i, j]),
        )
        if wants_ports:
            ports, node.nic_free = node_ports(fleet.hosts[i].numa_nodes[j])
            node.ports = [_PortLeft.of(p) for p in ports]
        nodes.append(node)
    return nodes


def count_host(
    fleet: FleetIndex, i: int, request: Request, spread: bool = False
) -> tuple[int, list[str]] | None:
    """Instances of `request` host i takes one after the other, and the reason codes that stopped
    them (one per node, host-wide limits last); None when the model does not cover the host."""
    if request.shared is not None:
        count, stops = _count_shared(fleet, i, request.shared, request.memory_oversubscription)
    else:
        nodes = _nodes(fleet, i, request)
        if nodes is None:
            return None
        count, stops = 0, []
        for node in nodes:
            for _ in range(MAX_PER_NODE):
                try:
                    missing = _take(node, request, spread)
                except AmbiguousLayoutError:
                    return None
                if missing:
                    stops.append(missing)
                    break
                count += 1
    for code, cap in _host_caps(fleet, i, request):
        if cap <= count:
            count, stops = cap, [code]
    return count, stops


def _count_shared(
    fleet: FleetIndex, i: int, demand: SharedDemand, oversubscribed_memory: bool
) -> tuple[int, list[str]]:
    """Oversubscribed plain VMs: each node's pool charged as `shared.choose_pus` spreads them."""
    normal = fleet.normal_over if oversubscribed_memory else fleet.normal
    count, stops = 0, []
    for j, node in enumerate(fleet.hosts[i].numa_nodes):
        pool, memory = list(shared_pus(node)), int(normal[i, j])
        for _ in range(MAX_PER_NODE):
            chosen = choose_pus(pool, demand)
            if chosen is None or demand.memory_mib > memory:
                stops.append("shared_cpu" if chosen is None else "memory")
                break
            pool = charge(pool, chosen, demand.vcpus)
            memory -= demand.memory_mib
            count += 1
    return count, stops


def _host_caps(fleet: FleetIndex, i: int, request: Request) -> list[tuple[str, int]]:
    caps = []
    need = request.vswitch_bandwidth_kbps
    if need and fleet.vswitch_free[i] < UNLIMITED_KBPS:
        caps.append(("vswitch_bandwidth", int(fleet.vswitch_free[i]) // need))
    impact = request.vm.impact
    if impact is not None and impact.max_instances_per_host is not None:
        running = fleet.instances.get(request.name, {}).get(i, 0)
        caps.append(("max_instances", max(impact.max_instances_per_host - running, 0)))
    return caps
