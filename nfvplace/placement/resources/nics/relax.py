"""The NICs kind in the relaxation: each SR-IOV interface on a port of its node (of the host, if it
is not bound to its cpu-set) at least as fast as it asks, per port within its free VFs and unused
bandwidth (and its NIC's PCIe budget); for every speed class, whole free ports >= the dedicated
interfaces that need that speed or more; per host, the vSwitch's free bandwidth."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from ....models.vmd import InterfaceMode
from ...request import InterfaceDemand, Request
from ..base import EPS, UNLIMITED_KBPS
from ..kind import RelaxModel, RelaxState
from .ports import node_ports
from .table import NicsTable

KIND = "nics"


@dataclass(frozen=True, slots=True)
class PortRoom:
    key: str  # node id / PCI address
    speed_gbps: float
    vfs: int
    kbps: int  # unused bandwidth (within its NIC's PCIe budget)


@dataclass(slots=True)
class NicsRelax:
    """What the NICs kind keeps across the relaxation's calls."""

    # (host, slot) -> ports that can still give a VF
    rooms: dict[tuple[int, int], list[PortRoom]] = field(default_factory=dict)
    # (host, slot, port) -> [(VFs taken, kbit/s each)]
    vf_use: defaultdict[tuple[int, int, int], list[tuple[cp_model.IntVar, int]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    # host -> bandwidth terms
    vswitch: defaultdict[int, list[cp_model.LinearExprT]] = field(
        default_factory=lambda: defaultdict(list)
    )


STATE = RelaxState(KIND, NicsRelax)


def _state(model: RelaxModel) -> NicsRelax:
    return model.state(STATE)


def _rooms(model: RelaxModel, host: int, slot: int) -> list[PortRoom]:
    """The ports of a node (slot -1: of the host) that can still give a VF."""
    rooms = _state(model).rooms
    key = (host, slot)
    if key not in rooms:
        nodes = model.fleet.hosts[host].numa_nodes
        found = []
        for node in nodes if slot < 0 else nodes[slot : slot + 1]:
            ports = node_ports(node)
            for port in ports.ports:
                if port.sriov_ok and port.free_vfs:
                    nic = ports.nic_free_kbps.get(port.nic, UNLIMITED_KBPS)
                    found.append(
                        PortRoom(
                            f"{node.id}/{port.pci_address}",
                            port.speed_gbps,
                            len(port.free_vfs),
                            min(port.bandwidth_free_kbps, nic),
                        )
                    )
        rooms[key] = found
    return rooms[key]


def relax_interfaces(
    model: RelaxModel,
    host: int,
    slot: int,
    x: cp_model.IntVar,
    ifaces: Sequence[InterfaceDemand],
    speeds: Sequence[float],
) -> None:
    """`x` instances' worth of `ifaces` on node slot `slot` of `host` (-1: the host)."""
    dedicated = [i.speed_gbps for i in ifaces if i.mode is InterfaceMode.dedicated]
    for col, speed in enumerate(speeds):
        # the interfaces that need this speed or more take ports at least this fast
        need = sum(1 for s in dedicated if s >= speed - EPS)
        if need:
            model.use(KIND, host, slot, f"ded{col}", need * x)
    sriov = [(i.speed_gbps, i.bandwidth_kbps) for i in ifaces if i.mode is InterfaceMode.sriov]
    vf_use = _state(model).vf_use
    for (speed, kbps), n in Counter(sriov).items():
        rooms = _rooms(model, host, slot)
        ports = [k for k, p in enumerate(rooms) if p.speed_gbps >= speed - EPS]
        if not ports:
            model.model.add(x == 0)
            continue
        spread = []
        for k in ports:
            w = model.model.new_int_var(0, rooms[k].vfs, f"w[{host},{slot},{k}]")
            vf_use[(host, slot, k)].append((w, kbps))
            spread.append(w)
        model.model.add(sum(spread) == n * x)


def relax_vswitch(model: RelaxModel, host: int, z: cp_model.IntVar, request: Request) -> None:
    if request.vswitch_bandwidth_kbps:
        _state(model).vswitch[host].append(request.vswitch_bandwidth_kbps * z)


def relax_ports(model: RelaxModel, t: NicsTable) -> None:
    """A port's VFs and bandwidth, whether node-level or host-level interfaces take them; then
    each host's vSwitch bandwidth."""
    state = _state(model)
    by_port: dict[str, list[tuple[cp_model.IntVar, int]]] = defaultdict(list)
    rooms: dict[str, PortRoom] = {}
    for (host, slot, k), taken in state.vf_use.items():
        room = _rooms(model, host, slot)[k]
        by_port[f"{host}:{room.key}"].extend(taken)
        rooms[f"{host}:{room.key}"] = room
    for key, taken in by_port.items():
        model.model.add(sum(w for w, _ in taken) <= rooms[key].vfs)
        model.model.add(sum(kbps * w for w, kbps in taken) <= rooms[key].kbps)
    for host, terms in state.vswitch.items():
        if t.vswitch_free[host] < UNLIMITED_KBPS:
            model.model.add(sum(terms) <= int(t.vswitch_free[host]))
