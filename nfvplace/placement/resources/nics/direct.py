"""The NICs kind's part of the exact model with the cpu-sets' nodes fixed, without CP-SAT
(`ModelDirect`, `resources/direct.py`).

With the nodes fixed, which ports each interface may take is known, and an instance has a few
interfaces and a node a few ports: every choice of one port per interface is tried against the
limits of `model.py` (a port given whole serves nothing else, VFs by pacing, port bandwidth, each
NIC's PCIe budget) and priced with its costs (the per-interface terms, the port's slack, the
bandwidth stranded when its last VF goes). The cheapest is the answer when it is the only one at
that cost; a tie, or an interface whose NUMA affinity is only `preferred` (its locality is a cost
of its own), is `NoAnswer.unsure`.

What does not depend on the nodes is worked out once per model (`_Model`, kept in the
assignment's memo): the ports the model has a boolean for, each port's limits, and the outcome of
each set of ports the interfaces may take (assignments whose nodes leave the interfaces the same
ports share it: the limits and costs of a choice of ports do not depend on the nodes).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Literal

from ....exact import KBPS_PER_GBPS
from ....models.vmd import InterfaceMode, NumaAffinity
from ...request import InterfaceDemand
from ..direct import NOTHING, Assignment, DirectPart, NoAnswer
from .model import PORT_CHOICES
from .ports import FreePort, NicsFree, port_takes, vfs_for

Choice = tuple[tuple[InterfaceDemand, FreePort], ...]  # a port per interface, in their order
Near = tuple[tuple[int, int], ...] | None  # (cpu-set, node) pairs one of which the nodes must take
Outcome = tuple[int, Choice] | NoAnswer  # the cheapest choice alone (and its cost), or no answer


@dataclass(slots=True)
class _Model:
    """The NICs' part of one model, worked out once for all its assignments."""

    entries: list[tuple[InterfaceDemand, bool, list[tuple[FreePort, Near]]]]
    values: dict[Hashable, int]  # every port boolean read back, at 0, in the order posted
    users: dict[str, int]  # by port: the SR-IOV interfaces that may take it
    needs: dict[str, tuple[FreePort, list[int]]]  # by port: the SR-IOV demands that may take it
    budgets: dict[str, int]
    vfs: dict[tuple[str, int], int] = field(default_factory=dict)  # `vfs_for`, as asked
    outcomes: dict[tuple[tuple[int, ...], ...], Outcome] = field(default_factory=dict)


def _near(
    a: Assignment, free: NicsFree, iface: InterfaceDemand, port: FreePort
) -> Near | Literal[False]:
    """Whether the model has a boolean for `iface` on `port` (False: no) and, if so, the (cpu-set,
    node) pairs one of which must be taken for it to be (`affinity.near` and `post_locality`;
    None: always)."""
    if iface.restricted:
        assert iface.cpu_set is not None
        if port.node not in a.allowed[iface.cpu_set]:
            return False
        return ((iface.cpu_set, port.node),)
    if iface.affinity is None or not a.request.cpu_sets:
        return None
    sets = [iface.cpu_set] if iface.cpu_set is not None else [cs.id for cs in a.request.cpu_sets]
    nodes = [port.node]
    if iface.affinity is NumaAffinity.socket:
        mine = free.sockets[a.free.slot(port.node)]
        nodes = [n for s, n in enumerate(a.free.node_ids) if free.sockets[s] == mine]
    near = tuple((cs, n) for cs in sets for n in nodes if n in a.allowed[cs])
    return near or False


def _model(a: Assignment, free: NicsFree) -> _Model:
    ports = [p for node in free.nodes for p in node.ports]
    entries: list[tuple[InterfaceDemand, bool, list[tuple[FreePort, Near]]]] = []
    values: dict[Hashable, int] = {}
    users: dict[str, int] = {}
    needs: dict[str, tuple[FreePort, list[int]]] = {}
    for iface in a.request.interfaces:
        if iface.mode is InterfaceMode.vswitch:
            continue
        preferred = not iface.restricted and iface.affinity is NumaAffinity.preferred
        sriov = iface.mode is InterfaceMode.sriov
        takes: list[tuple[FreePort, Near]] = []
        for port in ports:
            if (near := _near(a, free, iface, port)) is False or not port_takes(port, iface):
                continue
            takes.append((port, near))
            address = port.pci_address
            values[(iface.name, address)] = 0
            if sriov:
                users[address] = users.get(address, 0) + 1
                needs.setdefault(address, (port, []))[1].append(iface.bandwidth_kbps)
        entries.append((iface, preferred, takes))
    budgets = {key: left for node in free.nodes for key, left in node.nic_free_kbps.items()}
    return _Model(entries, values, users, needs, budgets)


def _vfs_hold(address: str, sriov: list[int], model: _Model) -> bool:
    """The port's VFs serve its SR-IOV interfaces: per demand posted on it, the interfaces that
    need at least that many kbit/s within the VFs paced no lower (`vfs_for`, worked out once)."""
    port, posted = model.needs[address]
    for need in posted:
        if (vfs := model.vfs.get((address, need))) is None:
            vfs = model.vfs[(address, need)] = vfs_for(port, need)
        if sum(1 for kbit in sriov if kbit >= need) > vfs:
            return False
    return True


def _alone_hold(choice: Choice, model: _Model) -> bool:
    """`_limits_hold` of interfaces each alone on a port that takes it (`port_takes`: whole and
    unused, or a VF paced no lower than its demand and the bandwidth free; a demand no more than
    its own has at least those VFs): the NICs' PCIe budgets are the one limit left."""
    pcie: dict[str, int] = {}
    for iface, port in choice:
        pcie[port.nic] = pcie.get(port.nic, 0) + iface.bandwidth_kbps
    budgets = model.budgets
    return all(kbit <= budgets[nic] for nic, kbit in pcie.items() if nic in budgets)


def _limits_hold(choice: Choice, model: _Model) -> bool:
    if len({port.pci_address for _, port in choice}) == len(choice):
        return _alone_hold(choice, model)
    by_port: dict[str, tuple[FreePort, list[InterfaceDemand]]] = {}
    for iface, port in choice:
        by_port.setdefault(port.pci_address, (port, []))[1].append(iface)
    pcie: dict[str, int] = {}
    for address, (port, mine) in by_port.items():
        dedicated = sum(1 for i in mine if i.mode is InterfaceMode.dedicated)
        sriov = [i.bandwidth_kbps for i in mine if i.mode is InterfaceMode.sriov]
        if dedicated > 1 or (dedicated and sriov):
            return False
        if sriov:
            if not _vfs_hold(address, sriov, model):
                return False
            if sum(sriov) > port.bandwidth_free_kbps:
                return False
        pcie[port.nic] = pcie.get(port.nic, 0) + sum(i.bandwidth_kbps for i in mine)
    return all(kbit <= model.budgets[nic] for nic, kbit in pcie.items() if nic in model.budgets)


def _cost(choice: Choice, model: _Model, spread: bool) -> int:
    sign = -1 if spread else 1
    cost = 0
    used: dict[str, tuple[FreePort, list[int]]] = {}
    for iface, port in choice:
        if iface.mode is InterfaceMode.dedicated:
            cost += round(port.speed_gbps - iface.speed_gbps)
        else:
            cost -= sign * (iface.bandwidth_kbps // KBPS_PER_GBPS)
            if iface.mode is InterfaceMode.sriov:
                used.setdefault(port.pci_address, (port, []))[1].append(iface.bandwidth_kbps)
    for address, (port, sriov) in used.items():
        cost += sign * (port.bandwidth_free_kbps // KBPS_PER_GBPS)  # `_slack`: the port is used
        free_vfs = len(port.vf_rates_kbps)
        if model.users[address] >= free_vfs and len(sriov) == free_vfs:
            # `_strand`: its last VF taken
            cost += (port.bandwidth_free_kbps - sum(sriov)) // KBPS_PER_GBPS
    return cost


def _outcome(
    choices: Sequence[Sequence[tuple[InterfaceDemand, FreePort]]],
    model: _Model,
    optimize: bool,
    spread: bool,
) -> Outcome:
    """Every choice of ports: the first that holds (a verdict), or the cheapest when alone."""
    best: list[tuple[int, Choice]] = []
    for choice in product(*choices):
        if not _limits_hold(choice, model):
            continue
        if not optimize:
            return 0, choice
        best.append((_cost(choice, model, spread), choice))
    if not best:
        return NoAnswer.infeasible
    low = min(cost for cost, _ in best)
    if sum(1 for cost, _ in best if cost == low) > 1:
        return NoAnswer.unsure  # two choices of ports at the same cost: CP-SAT's pick is its own
    return next((cost, c) for cost, c in best if cost == low)


def nics_direct(a: Assignment, free: NicsFree, spread: bool) -> DirectPart | NoAnswer:
    """Every choice of ports with the assignment's nodes: the cheapest, when it is alone."""
    model = a.memo.get("nics")
    if model is None and all(i.mode is InterfaceMode.vswitch for i in a.request.interfaces):
        return NOTHING  # no port boolean, no limit, no cost: the one empty choice holds
    if not isinstance(model, _Model):
        model = a.memo["nics"] = _model(a, free)
    nodes = a.nodes
    choices: list[list[tuple[InterfaceDemand, FreePort]]] = []
    key: list[tuple[int, ...]] = []
    for iface, preferred, takes in model.entries:
        if preferred:
            return NoAnswer.unsure  # locality is a cost there: not worked out here
        could = [
            k
            for k, (_, near) in enumerate(takes)
            if near is None or any(nodes[cs] == n for cs, n in near)
        ]
        if not could:
            return NoAnswer.infeasible
        key.append(tuple(could))
        choices.append([(iface, takes[k][0]) for k in could])
    outcome = model.outcomes.get(tuple(key))
    if outcome is None:
        outcome = model.outcomes[tuple(key)] = _outcome(choices, model, a.optimize, spread)
    if isinstance(outcome, NoAnswer):
        return outcome
    values = dict(model.values)
    for iface, port in outcome[1]:
        values[(iface.name, port.pci_address)] = 1
    costs = {"ports": outcome[0]} if values and a.optimize else {}
    return DirectPart({PORT_CHOICES.kind: values} if values else {}, costs)
