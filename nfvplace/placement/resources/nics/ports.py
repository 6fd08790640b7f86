"""A host's ports as placement sees them: speed, free bandwidth, free VFs and their pacing, and the
PCIe budget of each NIC; and the rule for which port can take an interface."""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ....exact import kbps
from ....models.chd import ComputeHostDescriptor, Nic, NumaNode, Port, PortUsage
from ....models.configuration import VmConfiguration
from ....models.units import stored_gbps
from ....models.vmd import InterfaceMode
from ...request import InterfaceDemand
from .. import affinity
from ..base import EPS, node_parts, same_objects

# usable bandwidth per PCIe lane by generation (Gbps, after line encoding: 8b/10b up to gen 2,
# 128b/130b from gen 3)
PCIE_LANE_GBPS = {1: 2.0, 2: 4.0, 3: 7.877, 4: 15.754, 5: 31.508, 6: 63.015}


def pcie_gbps(nic: Nic) -> float | None:
    """The NIC's usable PCIe bandwidth: stated, or generation x lanes; None when unknown."""
    if nic.pcie_bandwidth_gbps is not None:
        return nic.pcie_bandwidth_gbps
    if nic.pcie_generation in PCIE_LANE_GBPS and nic.pcie_lanes:
        return PCIE_LANE_GBPS[nic.pcie_generation] * nic.pcie_lanes
    return None


@dataclass(frozen=True, slots=True)
class FreePort:
    pci_address: str
    node: int
    speed_gbps: float
    bandwidth_free_kbps: int  # port speed less bandwidth used (not less the NIC's PCIe budget)
    free_vfs: tuple[str, ...]
    dedicable: bool  # eligible, unused, no VF in use: can be passed through whole
    sriov_ok: bool  # eligible and free or already shared through VFs
    physical_network: str | None = None
    vf_rates_kbps: tuple[int | None, ...] = ()  # pacing of each free VF (None: not paced)
    nic: str = ""  # key of the NIC in `NodePorts.nic_free_kbps`
    bandwidth_used_gbps: float = 0.0  # as the port states it (what a claim adds a VF's to)

    @property
    def bandwidth_free_gbps(self) -> float:
        return self.bandwidth_free_kbps / 1_000_000


@dataclass(frozen=True, slots=True)
class NodePorts:
    ports: tuple[FreePort, ...]
    nic_free_kbps: dict[str, int] = field(default_factory=dict)  # PCIe budget left, known NICs


@dataclass(frozen=True, slots=True)
class NicsFree:
    nodes: tuple[NodePorts, ...]  # by node slot
    vswitch_free_kbps: int | None  # None: no bandwidth figure (not limited)
    vswitch_accelerated: bool = False  # vswitch interfaces are vhost-user ports
    sockets: tuple[int, ...] = ()  # the socket of each node slot (ports' NUMA affinity `socket`)


KEEP_PORTS = 1024
"""Ports whose entries are kept, by object. An index shares one object per distinct port between
its hosts (`Interner`: 260 objects for the 16,688 ports of 10,000 generated hosts), so a host read
for the first time finds its ports' entries made for other hosts. An entry goes with its port."""

_Kept = tuple["weakref.KeyedRef[int, Port]", dict[tuple[int, str], FreePort]]
_kept: OrderedDict[int, _Kept] = OrderedDict()  # by id(port), oldest first


def _forget(ref: weakref.KeyedRef[int, Port]) -> None:
    kept = _kept.get(ref.key)
    if kept is not None and kept[0] is ref:
        _kept.pop(ref.key, None)


def _port(node: NumaNode, port: Port, key: str) -> FreePort:
    """`port`'s entry on `node` under NIC `key` (`_port_made`), kept with the port's object."""
    kept = _kept.get(id(port))
    if kept is None or kept[0]() is not port:
        kept = (weakref.KeyedRef(port, _forget, id(port)), {})
        _kept[id(port)] = kept
        if len(_kept) > KEEP_PORTS:
            _kept.popitem(last=False)  # one C call: safe beside another thread's or `_forget`
    entry = kept[1].get((node.id, key))
    if entry is None:
        entry = kept[1][(node.id, key)] = _port_made(node, port, key)
    return entry


def _port_made(node: NumaNode, port: Port, key: str) -> FreePort:
    free = [vf for vf in port.vfs if not vf.in_use]
    any_vf_used = len(free) < len(port.vfs)
    used = kbps(port.bandwidth_used_gbps)
    return FreePort(
        pci_address=port.pci_address,
        node=node.id,
        speed_gbps=port.speed_gbps,
        bandwidth_free_kbps=max(kbps(port.speed_gbps) - used, 0),
        free_vfs=tuple(vf.pci_address for vf in free),
        dedicable=port.eligible and port.usage is PortUsage.free and not any_vf_used and used == 0,
        sriov_ok=port.eligible and port.usage in (PortUsage.free, PortUsage.sriov),
        physical_network=port.physical_network,
        vf_rates_kbps=tuple(None if vf.rate_gbps is None else kbps(vf.rate_gbps) for vf in free),
        nic=key,
        bandwidth_used_gbps=port.bandwidth_used_gbps,
    )


def node_ports(node: NumaNode) -> NodePorts:
    """The ports of `node` as placement sees them, and the PCIe budget left of NICs that state one."""
    ports: list[FreePort] = []
    nic_free: dict[str, int] = {}
    for k, nic in enumerate(node.nics):
        key = f"n{node.id}nic{k}"
        budget = _nic_budget(nic)
        if budget is not None:
            nic_free[key] = budget
        ports.extend(_port(node, port, key) for port in nic.ports)
    return NodePorts(tuple(ports), nic_free)


def _nic_budget(nic: Nic) -> int | None:
    """The PCIe bandwidth a NIC that states one has left, kbit/s."""
    budget = pcie_gbps(nic)
    if budget is None:
        return None
    return max(kbps(budget) - sum(kbps(p.bandwidth_used_gbps) for p in nic.ports), 0)


def node_ports_again(node: NumaNode, old: NumaNode, before: NodePorts) -> NodePorts:
    """`node_ports(node)` of a new version of `old` whose part was `before`: a NIC that is the
    same object keeps its ports and budget, and a port that is the same object its entry (a claim
    changes the port it takes a VF or the whole of)."""
    if len(node.nics) != len(old.nics):
        return node_ports(node)
    ports: list[FreePort] = []
    nic_free: dict[str, int] = {}
    at = 0  # `before.ports` lists every port of `old`, NIC by NIC
    for k, (nic, was) in enumerate(zip(node.nics, old.nics, strict=True)):
        key = f"n{node.id}nic{k}"
        kept = before.ports[at : at + len(was.ports)]
        at += len(was.ports)
        if nic is was:
            ports.extend(kept)
            if key in before.nic_free_kbps:
                nic_free[key] = before.nic_free_kbps[key]
            continue
        budget = _nic_budget(nic)
        if budget is not None:
            nic_free[key] = budget
        if len(nic.ports) != len(was.ports):
            ports.extend(_port(node, port, key) for port in nic.ports)
            continue
        ports.extend(
            entry if port is port_was else _port(node, port, key)
            for port, port_was, entry in zip(nic.ports, was.ports, kept, strict=True)
        )
    return NodePorts(tuple(ports), nic_free)


def nics_free(
    host: ComputeHostDescriptor,
    before: tuple[ComputeHostDescriptor, NicsFree] | None = None,
    sockets_kept: bool = False,
) -> NicsFree:
    """The host's ports, NIC budgets and vswitch as placement sees them; with `before` (an earlier
    version of the host, same node ids), the nodes whose NICs (PUs, for their socket) are the same
    objects keep their part, and with `sockets_kept` (`host` is a claim on it) every socket."""
    vswitch = host.hypervisor.vswitch if host.hypervisor else None
    vswitch_free = (
        None
        if vswitch is None or vswitch.bandwidth_gbps is None
        else max(kbps(vswitch.bandwidth_gbps) - kbps(vswitch.bandwidth_used_gbps), 0)
    )
    accelerated = bool(vswitch and vswitch.accelerated)
    if before is None:
        nodes = tuple(node_ports(node) for node in host.numa_nodes)
        return NicsFree(nodes, vswitch_free, accelerated, affinity.sockets(host))
    old, free = before
    nodes = node_parts(
        host,
        old,
        free.nodes,
        lambda node, was, _ports: same_objects(node.nics, was.nics),
        lambda slot, node: node_ports_again(node, old.numa_nodes[slot], free.nodes[slot]),
    )
    sockets = free.sockets if sockets_kept else affinity.sockets_again(host, old, free.sockets)
    kept = (free.nodes, free.vswitch_free_kbps, free.vswitch_accelerated, free.sockets)
    if nodes is kept[0] and sockets is kept[3] and (vswitch_free, accelerated) == kept[1:3]:
        return free
    return NicsFree(nodes, vswitch_free, accelerated, sockets)


def vfs_claimed(free: NicsFree, config: VmConfiguration) -> NicsFree | None:
    """`free` once the VFs of `config` are claimed (`claims.claim_interfaces`: each VF in use, its
    bandwidth added to its port's, the port shared through SR-IOV), worked out from the free ports
    alone; None for a configuration with other interfaces, or a VF `free` does not show free on
    the port named its physical function (the claim would conflict, or find it elsewhere)."""
    nodes = list(free.nodes)
    for iface in config.interfaces:
        if iface.mode is not InterfaceMode.sriov or iface.bandwidth_gbps < 0:
            return None
        vf, pf = (iface.pci_address or "").lower(), (iface.physical_function or "").lower()
        found = next(
            (
                (j, k, port)
                for j, node in enumerate(nodes)
                for k, port in enumerate(node.ports)
                if port.pci_address.lower() == pf
            ),
            None,
        )
        free_vfs = [] if found is None else [a.lower() for a in found[2].free_vfs]
        if found is None or vf not in free_vfs:
            return None
        j, k, port = found
        nodes[j] = _vf_taken(nodes[j], k, port, free_vfs.index(vf), iface.bandwidth_gbps)
    return NicsFree(tuple(nodes), free.vswitch_free_kbps, free.vswitch_accelerated, free.sockets)


def _vf_taken(node: NodePorts, k: int, port: FreePort, vf: int, gbps: float) -> NodePorts:
    """`node` once the `vf`-th free VF of its `k`-th port (`port`) is claimed for `gbps`."""
    used = stored_gbps(max(port.bandwidth_used_gbps + gbps, 0.0))  # as a claim writes it
    taken = FreePort(  # built directly: `dataclasses.replace` costs several times as much
        port.pci_address,
        port.node,
        port.speed_gbps,
        bandwidth_free_kbps=max(kbps(port.speed_gbps) - kbps(used), 0),
        free_vfs=port.free_vfs[:vf] + port.free_vfs[vf + 1 :],
        dedicable=False,  # a VF in use
        sriov_ok=port.sriov_ok,
        physical_network=port.physical_network,
        vf_rates_kbps=port.vf_rates_kbps[:vf] + port.vf_rates_kbps[vf + 1 :],
        nic=port.nic,
        bandwidth_used_gbps=used,
    )
    budgets = dict(node.nic_free_kbps)
    left = budgets.get(port.nic)
    if left:  # 0: the NIC's ports use its budget up already, and use more now
        budgets[port.nic] = max(left - (kbps(used) - kbps(port.bandwidth_used_gbps)), 0)
    ports = (*node.ports[:k], taken, *node.ports[k + 1 :])
    return NodePorts(ports, budgets)


def fitting_vf(
    rates: Sequence[int | None], need_kbps: int, taken: Container[int] = ()
) -> int | None:
    """Index of the free VF paced closest above `need_kbps` (an unpaced one last), not in `taken`."""
    best: tuple[bool, int, int] | None = None
    for k, rate in enumerate(rates):
        if k in taken or (rate is not None and rate < need_kbps):
            continue
        key = (rate is None, rate or 0, k)
        if best is None or key < best:
            best = key
    return None if best is None else best[2]


def match_vfs(rates: Sequence[int | None], needs: Sequence[int]) -> list[int] | None:
    """The free VF (an index of `rates`) of each demand on one port (kbit/s each), None when they
    do not all fit. Widest demand first, each on the VF paced closest above it: this best fit
    serves them all whenever the solver's per-threshold counts (Hall's condition over nested sets)
    say it can."""
    out = [-1] * len(needs)
    taken: set[int] = set()
    for n in sorted(range(len(needs)), key=lambda n: -needs[n]):
        k = fitting_vf(rates, needs[n], taken)
        if k is None:
            return None
        taken.add(k)
        out[n] = k
    return out


class PortLike(Protocol):
    """What the port rule reads of a port: a `FreePort`, or the counting model's running copy."""

    @property
    def speed_gbps(self) -> float: ...
    @property
    def physical_network(self) -> str | None: ...
    @property
    def dedicable(self) -> bool: ...
    @property
    def sriov_ok(self) -> bool: ...
    @property
    def bandwidth_free_kbps(self) -> int: ...
    @property
    def vf_rates_kbps(self) -> Sequence[int | None]: ...


def _serving(port: PortLike, need_kbps: int) -> Iterator[int | None]:
    """The rates of `port`'s free VFs that can carry `need_kbps` (unpaced, or paced at no less)."""
    return (rate for rate in port.vf_rates_kbps if rate is None or rate >= need_kbps)


def vfs_for(port: PortLike, need_kbps: int) -> int:
    """Free VFs of `port` that can carry `need_kbps`."""
    return sum(1 for _ in _serving(port, need_kbps))


def port_takes(port: PortLike, iface: InterfaceDemand) -> bool:
    """Whether `port` can take `iface` on its own: fast enough, on its network, whole and unused
    (dedicated) or with a VF paced no lower and the bandwidth free (SR-IOV)."""
    if port.speed_gbps < iface.speed_gbps - EPS:
        return False
    if iface.physical_network and port.physical_network != iface.physical_network:
        return False
    if iface.mode is InterfaceMode.dedicated:
        return port.dedicable
    return (
        port.sriov_ok
        and any(True for _ in _serving(port, iface.bandwidth_kbps))  # one is enough
        and port.bandwidth_free_kbps >= iface.bandwidth_kbps
    )
