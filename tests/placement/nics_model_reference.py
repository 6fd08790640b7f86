"""The NICs' part of the exact model written plainly: Python's `sum`, and `port_takes` asked for
every interface and port. The engine's (`resources/nics/model.py`) posts its sums whole and asks
`port_takes` once per port and demand; it must write the same proto (`test_solver.py` builds
every model both ways and compares the protos as text)."""

from __future__ import annotations

from typing import Any

from nfvplace.exact import KBPS_PER_GBPS
from nfvplace.models.vmd import InterfaceMode, NumaAffinity
from nfvplace.placement.request import InterfaceDemand
from nfvplace.placement.resources import affinity
from nfvplace.placement.resources.model import ModelContext
from nfvplace.placement.resources.nics.model import PORT_CHOICES, _strand
from nfvplace.placement.resources.nics.ports import FreePort, NicsFree, port_takes, vfs_for


def post_interfaces(ctx: ModelContext, free: NicsFree, spread: bool) -> None:
    m = ctx.model
    ports = [p for node in free.nodes for p in node.ports]
    by_port: dict[str, list[tuple[InterfaceDemand, Any]]] = {}
    for iface in ctx.request.interfaces:
        if iface.mode is InterfaceMode.vswitch:
            continue
        choices = []
        for port in ports:
            if not port_takes(port, iface):
                continue
            y = None
            if iface.restricted:
                assert iface.cpu_set is not None
                y = ctx.node_var(iface.cpu_set, port.node)
                if y is None:
                    continue
            near = None
            if iface.affinity is not None and not iface.restricted:
                near = affinity.near(ctx, iface.cpu_set, iface.affinity, port.node, free.sockets)
                if near == [] and iface.affinity is not NumaAffinity.preferred:
                    continue
            var = m.new_bool_var(f"port[{iface.name}->{port.pci_address}]")
            if y is not None:
                m.add_implication(var, y)
            affinity.post_locality(ctx, iface.affinity, var, near)
            ctx.keep(PORT_CHOICES, (iface.name, port.pci_address), var)
            by_port.setdefault(port.pci_address, []).append((iface, var))
            choices.append(var)
            if iface.mode is InterfaceMode.dedicated:
                ctx.cost("ports", round(port.speed_gbps - iface.speed_gbps) * var)
            else:
                # the bandwidth this interface takes off the port's slack (see _slack)
                taken = iface.bandwidth_kbps // KBPS_PER_GBPS
                ctx.cost("ports", (taken if spread else -taken) * var)
        m.add(sum(choices) == 1) if choices else m.add_bool_or([])
    _post_ports(ctx, free, {p.pci_address: p for p in ports}, by_port, spread)


def _post_ports(
    ctx: ModelContext,
    free: NicsFree,
    lookup: dict[str, FreePort],
    by_port: dict[str, list[tuple[InterfaceDemand, Any]]],
    spread: bool,
) -> None:
    """Per port: a port given whole serves nothing else; VFs within the free VFs their pacing
    serves and the port's bandwidth; per NIC: its PCIe budget."""
    m = ctx.model
    pcie: dict[str, list[Any]] = {}
    for address, users in by_port.items():
        port = lookup[address]
        dedicated = [v for i, v in users if i.mode is InterfaceMode.dedicated]
        sriov = [(i, v) for i, v in users if i.mode is InterfaceMode.sriov]
        if dedicated:
            m.add(sum(dedicated) <= 1)
            for d in dedicated:
                for _, s in sriov:
                    m.add(d + s <= 1)
        if sriov:
            # VFs paced below a demand cannot serve it: nested sets, so Hall's condition per
            # threshold is exact
            for need in sorted({i.bandwidth_kbps for i, _ in sriov}):
                m.add(sum(v for i, v in sriov if i.bandwidth_kbps >= need) <= vfs_for(port, need))
            m.add(sum(i.bandwidth_kbps * v for i, v in sriov) <= port.bandwidth_free_kbps)
            _slack(ctx, port, [v for _, v in sriov], spread)
            _strand(ctx, port, sriov)
        pcie.setdefault(port.nic, []).extend(i.bandwidth_kbps * v for i, v in users)
    budgets = {key: left for node in free.nodes for key, left in node.nic_free_kbps.items()}
    for key, terms in pcie.items():
        if key in budgets:
            m.add(sum(terms) <= budgets[key])


def _slack(ctx: ModelContext, port: FreePort, users: list[Any], spread: bool) -> None:
    """The Gbps a port used through VFs has left after the instance (with the per-interface terms
    in `post_interfaces`): pack fills the fullest port, and puts an instance's interfaces on one
    port rather than two; spread does the opposite (the cost is negated)."""
    m = ctx.model
    used = m.new_bool_var(f"vf_port_used[{port.pci_address}]")
    for v in users:
        m.add_implication(v, used)
    m.add(used <= sum(users))
    free = port.bandwidth_free_kbps // KBPS_PER_GBPS
    ctx.cost("ports", (-free if spread else free) * used)
