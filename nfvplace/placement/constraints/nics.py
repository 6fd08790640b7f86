"""Interfaces: dedicated ports, SR-IOV VFs and vSwitch ports.

- `dedicated` takes a whole port that is eligible, unused (no VF in use, no bandwidth used) and at
  least as fast as `speed_gbps` and as its `bandwidth_gbps`, on the cpu-set's node;
- `sriov` takes one free VF of an eligible port (free or already shared through VFs) at least as fast
  as `speed_gbps` whose unused bandwidth covers `bandwidth_gbps`; several VFs of one port share its
  bandwidth; a VF paced (`rate_gbps`) below `bandwidth_gbps` cannot serve it; a port given whole
  cannot also serve VFs;
- the interfaces' bandwidth on the ports of one NIC stays within the NIC's PCIe budget
  (`pcie_bandwidth_gbps`, or generation x lanes) less what its ports already use;
- `vswitch` needs the host's vSwitch (accelerated when the descriptor asks, of an accepted type) with
  `bandwidth_gbps` to spare; it does not bind to a node;
- an interface outside every cpu-set (or with `restricted_to_topology: false`) may use any node;
- an interface naming a `physical_network` only takes ports cabled to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from ortools.sat.python import cp_model

from ...exact import KBPS_PER_GBPS, gbps_text
from ...models.vmd import InterfaceMode
from ..hostview import EPS, PortView
from ..index import BoolArray, FleetIndex
from ..request import InterfaceDemand
from .base import FilterInput, HostCheck, ModelContext, NodeNeed, detail


def _sorted(ifaces: list[InterfaceDemand]) -> list[InterfaceDemand]:
    return sorted(ifaces, key=lambda i: -i.speed_gbps)


Tables = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]


def network_tables(fleet: FleetIndex, network: str | None) -> Tables:
    """(free whole ports, free VFs, best VF bandwidth in kbit/s) per host x node x speed class, of
    every port, or of the ports cabled to `network`."""
    if network is None:
        return fleet.ded_ports, fleet.vfs, fleet.vf_bw
    ded = np.zeros_like(fleet.ded_ports)
    vfs = np.zeros_like(fleet.vfs)
    bw = np.zeros_like(fleet.vf_bw)
    speeds = np.asarray(fleet.vocab.speeds)
    for i, ports in fleet.net_ports.items():
        for port in ports:
            if port.network != network:
                continue
            ge = speeds <= port.speed_gbps
            if port.dedicable:
                ded[i, port.slot, ge] += 1
            if port.free_vfs:
                vfs[i, port.slot, ge] += port.free_vfs
                bw[i, port.slot, ge] = np.maximum(bw[i, port.slot, ge], port.vf_kbps)
    return ded, vfs, bw


def _count_need(
    inp: FilterInput, ifaces: list[InterfaceDemand], mode: InterfaceMode, per_host: bool
) -> list[tuple[str, BoolArray, npt.NDArray[Any], str, str]]:
    """(code, ok, available, phrase, unit) for the interfaces of one mode and physical network.
    Speed classes are nested, so "the k fastest needs have at least k ports/VFs at their speed" is
    exact for counts (Hall)."""
    f = inp.fleet
    network = ifaces[0].physical_network
    ded, vfs, vf_bw = network_tables(f, network)
    on = f" on network {network}" if network else ""
    table = ded if mode is InterfaceMode.dedicated else vfs
    if per_host:
        table = table.sum(axis=1, keepdims=True)
    shape = table.shape[:2]
    ok = np.ones(shape, dtype=np.bool_)
    top = _sorted(ifaces)
    available = np.zeros(shape, dtype=np.int64)
    for k, iface in enumerate(top, start=1):
        col = f.speed_class(iface.speed_gbps)
        have = table[:, :, col] if col is not None else np.zeros(shape, dtype=np.int64)
        if k == 1:
            available = have
        ok &= have >= k
    speed = top[0].speed_gbps
    speeds = " and ".join(f"≥ {i.speed_gbps:g}" for i in top)
    if mode is InterfaceMode.dedicated:
        phrase = (
            f"a free ≥ {speed:g} Gbps port{on}"
            if len(top) == 1
            else f"{len(top)} free ports ({speeds} Gbps){on}"
        )
        code = "physical_network" if network else "dedicated_port"
        return [(code, ok, available, phrase, f"free ports of the fastest speed asked{on}")]
    phrase = (
        f"a free VF on a ≥ {speed:g} Gbps port{on}"
        if len(top) == 1
        else f"{len(top)} free VFs on ports of {speeds} Gbps{on}"
    )
    out: list[tuple[str, BoolArray, npt.NDArray[Any], str, str]] = [
        (
            "physical_network" if network else "sriov_vf",
            ok,
            available,
            phrase,
            f"free VFs on ports of the fastest speed asked{on}",
        )
    ]
    bw_ok = np.ones(shape, dtype=np.bool_)
    best_bw = np.zeros(shape, dtype=np.float64)
    widest = max(top, key=lambda i: i.bandwidth_kbps)
    for iface in top:
        if iface.bandwidth_kbps <= 0:
            continue
        col = f.speed_class(iface.speed_gbps)
        bw = vf_bw.max(axis=1, keepdims=True) if per_host else vf_bw
        best = bw[:, :, col] if col is not None else np.zeros(shape, dtype=np.int64)
        bw_ok &= best >= iface.bandwidth_kbps
        if iface is widest:
            best_bw = best / KBPS_PER_GBPS
    if widest.bandwidth_kbps > 0:
        out.append(
            (
                "sriov_bandwidth",
                bw_ok,
                best_bw,
                f"a ≥ {widest.speed_gbps:g} Gbps port with a free VF and "
                f"{widest.bandwidth_gbps:g} Gbps unused{on}",
                "Gbps unused on such a port (or its NIC's PCIe link)",
            )
        )
    return out


def _groups(
    ifaces: tuple[InterfaceDemand, ...] | list[InterfaceDemand],
) -> list[tuple[InterfaceMode, list[InterfaceDemand]]]:
    """The port-backed interfaces by mode and physical network (each group counted on its own)."""
    out: dict[tuple[InterfaceMode, str], list[InterfaceDemand]] = {}
    for iface in ifaces:
        if iface.mode is not InterfaceMode.vswitch:
            out.setdefault((iface.mode, iface.physical_network or ""), []).append(iface)
    order = {InterfaceMode.dedicated: 0, InterfaceMode.sriov: 1}
    return [
        (mode, group)
        for (mode, _), group in sorted(out.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))
    ]


def node_needs(inp: FilterInput, cpu_set: int) -> list[NodeNeed]:
    out = []
    for mode, chosen in _groups(inp.request.interfaces_of(cpu_set)):
        for code, ok, available, phrase, unit in _count_need(inp, chosen, mode, False):
            out.append(NodeNeed(code, phrase, ok, available, len(chosen), unit))
    return out


def host_checks(inp: FilterInput) -> list[HostCheck]:
    f = inp.fleet
    req = inp.request
    out: list[HostCheck] = []
    if req.needs_vswitch:
        wants = req.vm.hypervisor.vswitch if req.vm.hypervisor else None
        out.append(
            HostCheck(
                "vswitch",
                "have no vSwitch",
                f.vswitch_type < 0,
                lambda i: ("the host has no vSwitch for the vswitch interfaces", None, None),
            )
        )
        if wants is not None and wants.accelerated:
            out.append(
                HostCheck(
                    "vswitch_acceleration",
                    "have no accelerated vSwitch",
                    (f.vswitch_type >= 0) & ~f.vswitch_accel,
                    lambda i: ("the vSwitch is not accelerated (e.g. OVS-DPDK)", None, None),
                )
            )
        if wants is not None and wants.types:
            codes = [f.vocab.code(t.lower()) for t in wants.types]
            out.append(
                HostCheck(
                    "vswitch_type",
                    f"have no vSwitch of type {', '.join(wants.types)}",
                    (f.vswitch_type >= 0) & ~np.isin(f.vswitch_type, codes),
                    detail(
                        lambda i, t=wants.types: (
                            f"the vSwitch is not one of {', '.join(t)}",
                            None,
                            None,
                        )
                    ),
                )
            )
        need_kbps = req.vswitch_bandwidth_kbps
        need = need_kbps / KBPS_PER_GBPS
        if need_kbps > 0:
            out.append(
                HostCheck(
                    "vswitch_bandwidth",
                    f"lack {need:g} Gbps of vSwitch bandwidth",
                    (f.vswitch_type >= 0) & (f.vswitch_free < need_kbps),
                    detail(
                        lambda i, need=need: (
                            f"the vSwitch has {gbps_text(int(f.vswitch_free[i]))} Gbps free, "
                            f"the VM needs {need:g}",
                            need,
                            float(f.vswitch_free[i]) / KBPS_PER_GBPS,
                        )
                    ),
                )
            )
    for mode, chosen in _groups([i for i in req.interfaces if not i.restricted]):
        for code, ok, available, phrase, unit in _count_need(inp, chosen, mode, per_host=True):
            out.append(
                HostCheck(
                    code,
                    f"lack {phrase}",
                    ~ok[:, 0],
                    detail(
                        lambda i, a=available, p=phrase, u=unit: (
                            f"the VM needs {p}; the host has {float(a[i, 0]):g} {u}",
                            None,
                            float(a[i, 0]),
                        )
                    ),
                )
            )
    return out


class PortLike(Protocol):
    """What the port rule reads of a port: a `PortView`, or the counting model's running copy."""

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


def _vfs_for(port: PortLike, need_kbps: int) -> int:
    """Free VFs of `port` that can carry `need_kbps` (unpaced, or paced at no less)."""
    return sum(1 for rate in port.vf_rates_kbps if rate is None or rate >= need_kbps)


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
        and _vfs_for(port, iface.bandwidth_kbps) > 0
        and port.bandwidth_free_kbps >= iface.bandwidth_kbps
    )


def post(ctx: ModelContext, spread: bool) -> None:
    """One boolean per (interface, eligible port); per-port VF count and bandwidth limits, VF
    pacing, and each NIC's PCIe budget."""
    m = ctx.model
    ports = [p for node in ctx.view.nodes for p in node.ports]
    by_port: dict[str, list[tuple[InterfaceDemand, cp_model.IntVar]]] = {}
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
                y = ctx.placed(iface.cpu_set, port.node)
                if y is None:
                    continue
            var = m.new_bool_var(f"port[{iface.name}->{port.pci_address}]")
            if y is not None:
                m.add_implication(var, y)
            ctx.ports[(iface.name, port.pci_address)] = var
            by_port.setdefault(port.pci_address, []).append((iface, var))
            choices.append(var)
            if iface.mode is InterfaceMode.dedicated:
                ctx.cost("ports", round(port.speed_gbps - iface.speed_gbps) * var)
            else:
                # the bandwidth this interface takes off the port's slack (see _slack)
                taken = iface.bandwidth_kbps // KBPS_PER_GBPS
                ctx.cost("ports", (taken if spread else -taken) * var)
        m.add(sum(choices) == 1) if choices else m.add_bool_or([])
    lookup = {p.pci_address: p for p in ports}
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
                m.add(sum(v for i, v in sriov if i.bandwidth_kbps >= need) <= _vfs_for(port, need))
            m.add(sum(i.bandwidth_kbps * v for i, v in sriov) <= port.bandwidth_free_kbps)
            _slack(ctx, port, [v for _, v in sriov], spread)
            _strand(ctx, port, sriov)
        pcie.setdefault(port.nic, []).extend(i.bandwidth_kbps * v for i, v in users)
    budgets = {key: free for node in ctx.view.nodes for key, free in node.nic_free_kbps.items()}
    for key, terms in pcie.items():
        if key in budgets:
            m.add(sum(terms) <= budgets[key])


def _slack(ctx: ModelContext, port: PortView, users: list[Any], spread: bool) -> None:
    """The Gbps a port used through VFs has left after the instance (with the per-interface terms
    in `post`): pack fills the fullest port, and puts an instance's interfaces on one port rather
    than two; spread does the opposite (the cost is negated)."""
    m = ctx.model
    used = m.new_bool_var(f"vf_port_used[{port.pci_address}]")
    for v in users:
        m.add_implication(v, used)
    m.add(used <= sum(users))
    free = port.bandwidth_free_kbps // KBPS_PER_GBPS
    ctx.cost("ports", (-free if spread else free) * used)


def _strand(ctx: ModelContext, port: PortView, sriov: list[tuple[InterfaceDemand, Any]]) -> None:
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
