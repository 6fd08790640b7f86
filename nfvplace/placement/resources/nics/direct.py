"""The NICs kind's part of the exact model with the cpu-sets' nodes fixed, without CP-SAT
(`ModelDirect`, `resources/direct.py`).

With the nodes fixed, which ports each interface may take is known, and an instance has a few
interfaces and a node a few ports: every choice of one port per interface is tried against the
limits of `model.py` (a port given whole serves nothing else, VFs by pacing, port bandwidth, each
NIC's PCIe budget) and priced with its costs (the per-interface terms, the port's slack, the
bandwidth stranded when its last VF goes). The cheapest is the answer when it is the only one at
that cost; a tie, or an interface whose NUMA affinity is only `preferred` (its locality is a cost
of its own), is `NoAnswer.unsure`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import product
from typing import cast

from ....exact import KBPS_PER_GBPS
from ....models.vmd import InterfaceMode, NumaAffinity
from ...request import InterfaceDemand
from ..direct import Assignment, DirectPart, NoAnswer
from .model import PORT_CHOICES
from .ports import FreePort, NicsFree, port_takes, vfs_for


def _near(a: Assignment, free: NicsFree, iface: InterfaceDemand, port: FreePort) -> bool | None:
    """Whether the model has a boolean for `iface` on `port` (None: no) and, if so, whether the
    assignment's nodes let it be taken (`affinity.near` and `post_locality` with nodes fixed)."""
    if iface.restricted:
        assert iface.cpu_set is not None
        if port.node not in a.allowed[iface.cpu_set]:
            return None
        return a.nodes[iface.cpu_set] == port.node
    if iface.affinity is None or not a.request.cpu_sets:
        return True
    sets = [iface.cpu_set] if iface.cpu_set is not None else [cs.id for cs in a.request.cpu_sets]
    nodes = [port.node]
    if iface.affinity is NumaAffinity.socket:
        mine = free.sockets[a.free.slot(port.node)]
        nodes = [n for s, n in enumerate(a.free.node_ids) if free.sockets[s] == mine]
    near = [(cs, n) for cs in sets for n in nodes if n in a.allowed[cs]]
    if not near:
        return None
    return any(a.nodes[cs] == n for cs, n in near)


def _limits_hold(
    choice: Sequence[tuple[InterfaceDemand, FreePort]],
    posted: dict[str, list[InterfaceDemand]],
    budgets: dict[str, int],
) -> bool:
    ports = {port.pci_address: port for _, port in choice}
    pcie: dict[str, int] = {}
    for address, port in ports.items():
        mine = [i for i, p in choice if p is port]
        dedicated = sum(1 for i in mine if i.mode is InterfaceMode.dedicated)
        sriov = [i for i in mine if i.mode is InterfaceMode.sriov]
        if dedicated > 1 or (dedicated and sriov):
            return False
        needs = {i.bandwidth_kbps for i in posted[address] if i.mode is InterfaceMode.sriov}
        for need in needs:
            if sum(1 for i in sriov if i.bandwidth_kbps >= need) > vfs_for(port, need):
                return False
        if sum(i.bandwidth_kbps for i in sriov) > port.bandwidth_free_kbps:
            return False
        pcie[port.nic] = pcie.get(port.nic, 0) + sum(i.bandwidth_kbps for i in mine)
    return all(kbit <= budgets[nic] for nic, kbit in pcie.items() if nic in budgets)


def _cost(
    choice: Sequence[tuple[InterfaceDemand, FreePort]],
    posted: dict[str, list[InterfaceDemand]],
    spread: bool,
) -> int:
    sign = -1 if spread else 1
    cost = 0
    for iface, port in choice:
        if iface.mode is InterfaceMode.dedicated:
            cost += round(port.speed_gbps - iface.speed_gbps)
        else:
            cost -= sign * (iface.bandwidth_kbps // KBPS_PER_GBPS)
    for port in {port.pci_address: port for _, port in choice}.values():
        sriov = [i for i, p in choice if p is port and i.mode is InterfaceMode.sriov]
        if not sriov:
            continue
        cost += sign * (port.bandwidth_free_kbps // KBPS_PER_GBPS)  # `_slack`: the port is used
        users = sum(1 for i in posted[port.pci_address] if i.mode is InterfaceMode.sriov)
        free_vfs = len(port.vf_rates_kbps)
        if users >= free_vfs and len(sriov) == free_vfs:  # `_strand`: its last VF taken
            left = port.bandwidth_free_kbps - sum(i.bandwidth_kbps for i in sriov)
            cost += left // KBPS_PER_GBPS
    return cost


def _takers(a: Assignment, free: NicsFree) -> list[tuple[InterfaceDemand, list[FreePort]]]:
    """The ports that can take each interface on their own (`port_takes`), once per model."""
    ports = [p for node in free.nodes for p in node.ports]
    return [
        (iface, [port for port in ports if port_takes(port, iface)])
        for iface in a.request.interfaces
        if iface.mode is not InterfaceMode.vswitch
    ]


def nics_direct(a: Assignment, free: NicsFree, spread: bool) -> DirectPart | NoAnswer:
    """Every choice of ports with the assignment's nodes: the cheapest, when it is alone."""
    takers = cast(
        list[tuple[InterfaceDemand, list[FreePort]]],
        a.memo.get("nics") or a.memo.setdefault("nics", _takers(a, free)),
    )
    values: dict[Hashable, int] = {}
    posted: dict[str, list[InterfaceDemand]] = {}
    choices: list[list[tuple[InterfaceDemand, FreePort]]] = []
    for iface, ports in takers:
        if not iface.restricted and iface.affinity is NumaAffinity.preferred:
            return NoAnswer.unsure  # locality is a cost there: not worked out here
        could = []
        for port in ports:
            if (near := _near(a, free, iface, port)) is None:
                continue
            values[(iface.name, port.pci_address)] = 0
            posted.setdefault(port.pci_address, []).append(iface)
            if near:
                could.append((iface, port))
        if not could:
            return NoAnswer.infeasible
        choices.append(could)
    budgets = {key: left for node in free.nodes for key, left in node.nic_free_kbps.items()}
    best: list[tuple[int, tuple[tuple[InterfaceDemand, FreePort], ...]]] = []
    for choice in product(*choices):
        if not _limits_hold(choice, posted, budgets):
            continue
        if not a.optimize:
            best = [(0, choice)]
            break
        best.append((_cost(choice, posted, spread), choice))
    if not best:
        return NoAnswer.infeasible
    low = min(cost for cost, _ in best)
    if sum(1 for cost, _ in best if cost == low) > 1:
        return NoAnswer.unsure  # two choices of ports at the same cost: CP-SAT's pick is its own
    choice = next(c for cost, c in best if cost == low)
    for iface, port in choice:
        values[(iface.name, port.pci_address)] = 1
    costs = {"ports": low} if values and a.optimize else {}
    return DirectPart({PORT_CHOICES.kind: values} if values else {}, costs)
