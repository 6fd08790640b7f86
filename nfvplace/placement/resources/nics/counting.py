"""The NICs kind in the counting model: an instance's interfaces on the ports of its node, in the
layout of least engine cost (SR-IOV: the least bandwidth left on the ports used, and none stranded on
a port whose VFs run out; dedicated: the slowest port fast enough), within each port's free VFs, VF
pacing and bandwidth and its NIC's PCIe budget. A node where two layouts of equal cost would leave
its ports differently is not counted (the solver may pick either)."""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

from ....exact import KBPS_PER_GBPS
from ....models.vmd import InterfaceMode
from ...reasons import Reason
from ...request import InterfaceDemand
from ..kind import Uncounted
from .ports import FreePort, NodePorts, match_vfs, port_takes

MAX_LAYOUTS = 4096  # interface-to-port layouts tried per instance
Layout = tuple[tuple[InterfaceDemand, int], ...]


@dataclass
class PortLeft:
    speed_gbps: float
    bandwidth_free_kbps: int
    vf_rates_kbps: list[int | None]  # pacing of each free VF (None: not paced)
    dedicable: bool
    sriov_ok: bool
    physical_network: str | None
    nic: str

    @classmethod
    def of(cls, port: FreePort) -> PortLeft:
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
class PortsLeft:
    """The ports of one node, taken from as instances are counted onto it."""

    ports: list[PortLeft] = field(default_factory=list)
    nic_free: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, node: NodePorts) -> PortsLeft:
        return cls([PortLeft.of(p) for p in node.ports], dict(node.nic_free_kbps))


def _by_port(layout: Layout) -> dict[int, list[InterfaceDemand]]:
    by_port: dict[int, list[InterfaceDemand]] = {}
    for iface, k in layout:
        by_port.setdefault(k, []).append(iface)
    return by_port


def _layout_cost(node: PortsLeft, layout: Layout, spread: bool) -> int | None:
    """The engine's port cost of `layout` (interface -> port), None when the ports cannot take it."""
    cost = 0
    nic_use: dict[str, int] = {}
    for k, users in _by_port(layout).items():
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


def take_ports(node: PortsLeft, ifaces: tuple[InterfaceDemand, ...], spread: bool) -> Reason | None:
    """Take the ports of one instance's interfaces: the layout of least engine cost."""
    if not ifaces:
        return None
    options = []
    for iface in ifaces:
        fitting = [k for k, p in enumerate(node.ports) if port_takes(p, iface)]
        if not fitting:
            return (
                Reason.dedicated_port if iface.mode is InterfaceMode.dedicated else Reason.sriov_vf
            )
        options.append([(iface, k) for k in fitting])
    costed = []
    for layout in itertools.islice(itertools.product(*options), MAX_LAYOUTS):
        cost = _layout_cost(node, layout, spread)
        if cost is not None:
            costed.append((cost, layout))
    if not costed:
        return Reason.sriov_bandwidth
    least = min(cost for cost, _ in costed)
    best = [layout for cost, layout in costed if cost == least]
    if len(best) > 1 and len({_ports_after(node, layout) for layout in best}) > 1:
        raise Uncounted  # the engine's solver picks one of these, not necessarily ours
    _apply(node, best[0])
    return None


def _apply(node: PortsLeft, layout: Layout) -> None:
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


def _ports_after(node: PortsLeft, layout: Layout) -> tuple[object, ...]:
    """What the ports hold after `layout`, as a value: a multiset, so that taking one of two
    identical ports or the other is the same."""
    ports = [dataclasses.replace(p, vf_rates_kbps=list(p.vf_rates_kbps)) for p in node.ports]
    copy = PortsLeft(ports, dict(node.nic_free))
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
