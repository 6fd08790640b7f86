"""Interfaces in the exact model: one boolean per (interface, port that can take it); per port the
VF count, VF pacing and bandwidth limits; each NIC's PCIe budget; and the port costs."""

from __future__ import annotations

from typing import Any

from ortools.sat.python.cp_model import LinearExpr

from ....exact import KBPS_PER_GBPS
from ....models.vmd import InterfaceMode, NumaAffinity
from ...request import InterfaceDemand
from .. import affinity
from ..model import ModelContext, ReadBack
from .ports import FreePort, NicsFree, port_takes, vfs_for

PORT_CHOICES: ReadBack[tuple[str, str]] = ReadBack("nics")
"""The port each interface may take, read back after the solve: (interface name, port PCI address)."""


def post_interfaces(ctx: ModelContext, free: NicsFree, spread: bool) -> None:
    m = ctx.model
    ports = [p for node in free.nodes for p in node.ports]
    by_port: dict[str, list[tuple[InterfaceDemand, Any]]] = {}
    # `port_takes` by (port, what it reads of an interface): interfaces alike ask it once
    takes: dict[tuple[int, InterfaceMode, float, str | None, int], bool] = {}
    for iface in ctx.request.interfaces:
        if iface.mode is InterfaceMode.vswitch:
            continue
        asks = (iface.mode, iface.speed_gbps, iface.physical_network, iface.bandwidth_kbps)
        # the bandwidth this interface takes off the port's slack (see _slack)
        taken = iface.bandwidth_kbps // KBPS_PER_GBPS
        choices = []
        for k, port in enumerate(ports):
            y = None
            if iface.restricted:
                assert iface.cpu_set is not None
                y = ctx.node_var(iface.cpu_set, port.node)
                if y is None:
                    continue
            ok = takes.get(key := (k, *asks))
            if ok is None:
                ok = takes[key] = port_takes(port, iface)
            if not ok:
                continue
            near = None
            if iface.affinity is not None and not iface.restricted:
                near = affinity.near(ctx, iface.cpu_set, iface.affinity, port.node, free.sockets)
                if near == [] and iface.affinity is not NumaAffinity.preferred:
                    continue
            var = m.new_bool_var(f"port[{iface.name}->{port.pci_address}]")
            if y is not None:
                m.add_implication(var, y)
            if near is not None:
                affinity.post_locality(ctx, iface.affinity, var, near)
            ctx.keep(PORT_CHOICES, (iface.name, port.pci_address), var)
            by_port.setdefault(port.pci_address, []).append((iface, var))
            choices.append(var)
            if iface.mode is InterfaceMode.dedicated:
                ctx.cost("ports", round(port.speed_gbps - iface.speed_gbps) * var)
            else:
                ctx.cost("ports", (taken if spread else -taken) * var)
        m.add(LinearExpr.sum(choices) == 1) if choices else m.add_bool_or([])
    _post_ports(ctx, free, {p.pci_address: p for p in ports}, by_port, spread)


def _post_ports(
    ctx: ModelContext,
    free: NicsFree,
    lookup: dict[str, FreePort],
    by_port: dict[str, list[tuple[InterfaceDemand, Any]]],
    spread: bool,
) -> None:
    """Per port: a port given whole serves nothing else; VFs within the free VFs their pacing
    serves and the port's bandwidth; per NIC: its PCIe budget. Sums are posted whole
    (`LinearExpr.sum`, `weighted_sum`): the same constraints as Python's `sum`, in one call."""
    m = ctx.model
    pcie: dict[str, tuple[list[Any], list[int]]] = {}
    for address, users in by_port.items():
        port = lookup[address]
        dedicated = [v for i, v in users if i.mode is InterfaceMode.dedicated]
        sriov = [(i, v) for i, v in users if i.mode is InterfaceMode.sriov]
        if dedicated:
            m.add(LinearExpr.sum(dedicated) <= 1)
            for d in dedicated:
                for _, s in sriov:
                    m.add(d + s <= 1)
        if sriov:
            vfs = [v for _, v in sriov]
            rates = [i.bandwidth_kbps for i, _ in sriov]
            # VFs paced below a demand cannot serve it: nested sets, so Hall's condition per
            # threshold is exact
            for need in sorted(set(rates)):
                served = [v for rate, v in zip(rates, vfs, strict=True) if rate >= need]
                m.add(LinearExpr.sum(served) <= vfs_for(port, need))
            m.add(LinearExpr.weighted_sum(vfs, rates) <= port.bandwidth_free_kbps)
            _slack(ctx, port, vfs, spread)
            _strand(ctx, port, sriov)
        terms, weights = pcie.setdefault(port.nic, ([], []))
        terms.extend(v for _, v in users)
        weights.extend(i.bandwidth_kbps for i, _ in users)
    budgets = {key: left for node in free.nodes for key, left in node.nic_free_kbps.items()}
    for key, (terms, weights) in pcie.items():
        if key in budgets:
            m.add(LinearExpr.weighted_sum(terms, weights) <= budgets[key])


def _slack(ctx: ModelContext, port: FreePort, users: list[Any], spread: bool) -> None:
    """The Gbps a port used through VFs has left after the instance (with the per-interface terms
    in `post_interfaces`): pack fills the fullest port, and puts an instance's interfaces on one
    port rather than two; spread does the opposite (the cost is negated)."""
    m = ctx.model
    used = m.new_bool_var(f"vf_port_used[{port.pci_address}]")
    for v in users:
        m.add_implication(v, used)
    m.add(used <= LinearExpr.sum(users))
    free = port.bandwidth_free_kbps // KBPS_PER_GBPS
    ctx.cost("ports", (-free if spread else free) * used)


def _strand(ctx: ModelContext, port: FreePort, sriov: list[tuple[InterfaceDemand, Any]]) -> None:
    """Cost the Gbps left on `port` when its last free VF is taken: nothing can use them then.

    Between layouts of equal slack this keeps VFs where bandwidth is left (an instance whose 10
    and 5 Gbps interfaces could take a one-VF and a three-VF port either way leaves room for a
    second instance only with the 10 Gbps one on the one-VF port)."""
    m = ctx.model
    free_vfs = len(port.vf_rates_kbps)
    if len(sriov) < free_vfs:
        return  # this instance cannot take every VF
    free_gbps = port.bandwidth_free_kbps // KBPS_PER_GBPS
    taken = sum(v for _, v in sriov)
    exhausted = m.new_bool_var(f"exhausted[{port.pci_address}]")
    m.add(taken <= free_vfs - 1).only_enforce_if(exhausted.Not())
    stranded = m.new_int_var(0, free_gbps, f"stranded_gbps[{port.pci_address}]")
    left = port.bandwidth_free_kbps - sum(i.bandwidth_kbps * v for i, v in sriov)
    # whole Gbps (rounded down, as the other port costs): stranded >= floor(left / 1 Gbps)
    m.add(
        KBPS_PER_GBPS * stranded
        >= left - port.bandwidth_free_kbps * exhausted.Not() - (KBPS_PER_GBPS - 1)
    )
    ctx.cost("ports", stranded)
