"""The NICs kind in the filter: per node, enough free ports and VFs (and VF bandwidth) of the speed
each interface asks; per host, the vSwitch and the interfaces bound to no node."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ....exact import KBPS_PER_GBPS, gbps_text
from ....models.vmd import InterfaceMode
from ...reasons import Reason
from ...request import InterfaceDemand
from ..base import BoolArray, Vocabulary
from ..filtering import FilterInput, HostCheck, NodeNeed, detail
from ..rows import rows_max, rows_sum
from .table import NicsTable

Tables = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]
Count = tuple[Reason, BoolArray, npt.NDArray[Any], str, str, int]
"""code, ok, available, phrase, unit, and `per` (`NodeNeed`: available in 1/per of the unit)."""


def network_tables(t: NicsTable, vocab: Vocabulary, network: str | None) -> Tables:
    """(free whole ports, free VFs, best VF bandwidth in kbit/s) per host x node x speed class, of
    every port, or of the ports cabled to `network`."""
    if network is None:
        return t.ded_ports, t.vfs, t.vf_bw
    ded = np.zeros_like(t.ded_ports)
    vfs = np.zeros_like(t.vfs)
    bw = np.zeros_like(t.vf_bw)
    speeds = np.asarray(vocab.values("speeds"))
    for i, ports in t.net_ports.items():
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


def groups(
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


def count_needs(
    inp: FilterInput,
    t: NicsTable,
    ifaces: list[InterfaceDemand],
    mode: InterfaceMode,
    per_host: bool,
) -> list[Count]:
    """The needs of the interfaces of one mode and physical network. Speed classes are nested, so
    "the k fastest needs have at least k ports/VFs at their speed" is exact for counts (Hall)."""
    network = ifaces[0].physical_network
    ded, vfs, vf_bw = network_tables(t, inp.fleet.vocab, network)
    on = f" on network {network}" if network else ""
    table = ded if mode is InterfaceMode.dedicated else vfs
    shape = (table.shape[0], 1 if per_host else table.shape[1])
    top = sorted(ifaces, key=lambda i: -i.speed_gbps)
    columns = _Columns(table, shape, per_host, rows_sum)
    available = columns.of(t.speed_class(inp.fleet.vocab, top[0].speed_gbps))
    ok = available >= 1
    for k, iface in enumerate(top[1:], start=2):
        ok &= columns.of(t.speed_class(inp.fleet.vocab, iface.speed_gbps)) >= k
    fast = _speed(top[0].speed_gbps)  # "≥ 25 Gbps " ("" when no interface asks a speed)
    speeds = " and ".join(f"≥ {i.speed_gbps:g}" for i in top)
    code = Reason.physical_network if network else None
    if mode is InterfaceMode.dedicated:
        many = f" ({speeds} Gbps)" if fast else ""
        phrase = f"a free {fast}port{on}" if len(top) == 1 else f"{len(top)} free ports{many}{on}"
        unit = f"free ports of the fastest speed asked{on}"
        return [(code or Reason.dedicated_port, ok, available, phrase, unit, 1)]
    many = f" on ports of {speeds} Gbps" if fast else ""
    phrase = f"a free VF on a {fast}port{on}" if len(top) == 1 else f"{len(top)} free VFs{many}{on}"
    unit = f"free VFs on ports of the fastest speed asked{on}"
    out: list[Count] = [(code or Reason.sriov_vf, ok, available, phrase, unit, 1)]
    widest = max(top, key=lambda i: i.bandwidth_kbps)
    if widest.bandwidth_kbps > 0:
        out.append(_bandwidth_need(inp, t, top, widest, vf_bw, shape, per_host, on))
    return out


def _bandwidth_need(
    inp: FilterInput,
    t: NicsTable,
    top: list[InterfaceDemand],
    widest: InterfaceDemand,
    vf_bw: npt.NDArray[np.int64],
    shape: tuple[int, int],
    per_host: bool,
    on: str,
) -> Count:
    """`widest` (one of `top`, asking some bandwidth) gives the figures of the messages."""
    columns = _Columns(vf_bw, shape, per_host, rows_max)
    best = columns.of(t.speed_class(inp.fleet.vocab, widest.speed_gbps))
    bw_ok = best >= widest.bandwidth_kbps
    for iface in top:
        if iface.bandwidth_kbps > 0 and iface is not widest:
            bw_ok &= columns.of(t.speed_class(inp.fleet.vocab, iface.speed_gbps)) >= (
                iface.bandwidth_kbps
            )
    return (
        Reason.sriov_bandwidth,
        bw_ok,
        best,  # a node's is a view of the column: a kept result pins what it reads (LiveGroup)
        f"a {_speed(widest.speed_gbps)}port with a free VF and "
        f"{widest.bandwidth_gbps:g} Gbps unused{on}",
        "Gbps unused on such a port (or its NIC's PCIe link)",
        KBPS_PER_GBPS,  # divided only for the hosts a diagnosis names
    )


class _Columns:
    """The speed-class columns of a hosts x nodes x classes table that a request reads, each taken
    once: per node, or reduced over a host's nodes (`per_host`); a missing class (no port that
    fast) reads as zeros. Only the columns asked are touched."""

    def __init__(
        self,
        table: npt.NDArray[np.int64],
        shape: tuple[int, int],
        per_host: bool,
        reduce: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.int64]],
    ) -> None:
        self.table, self.shape, self.per_host, self.reduce = table, shape, per_host, reduce
        self.taken: dict[int | None, npt.NDArray[np.int64]] = {}

    def of(self, col: int | None) -> npt.NDArray[np.int64]:
        have = self.taken.get(col)
        if have is None:
            if col is None:
                have = np.zeros(self.shape, dtype=np.int64)
            elif self.per_host:
                have = self.reduce(self.table[:, :, col])[:, None]
            else:
                have = self.table[:, :, col]
            self.taken[col] = have
        return have


def _speed(gbps: float) -> str:
    """`≥ 25 Gbps ` before "port" in a phrase; nothing for an interface that asks no speed."""
    return f"≥ {gbps:g} Gbps " if gbps > 0 else ""


def node_needs(inp: FilterInput, t: NicsTable, cpu_set: int) -> list[NodeNeed]:
    out = []
    for mode, chosen in groups(inp.request.interfaces_of(cpu_set)):
        for code, ok, available, phrase, unit, per in count_needs(inp, t, chosen, mode, False):
            out.append(NodeNeed(code, phrase, ok, available, len(chosen), unit, per))
    return out


def host_checks(inp: FilterInput, t: NicsTable) -> list[HostCheck]:
    req = inp.request
    out = vswitch_checks(inp, t) if req.needs_vswitch else []
    for mode, chosen in groups([i for i in req.interfaces if not i.restricted]):
        for code, ok, available, phrase, unit, per in count_needs(inp, t, chosen, mode, True):
            out.append(
                HostCheck(
                    code,
                    f"lack {phrase}",
                    ~ok[:, 0],
                    detail(
                        lambda i, a=available, p=phrase, u=unit, per=per: (
                            f"the VM needs {p}; the host has {_have(a, i, per):g} {u}",
                            None,
                            _have(a, i, per),
                        )
                    ),
                )
            )
    return out


def _have(available: npt.NDArray[Any], i: int, per: int) -> float:
    """Host i's figure of a per-host count, in its unit (`Count`'s `per`)."""
    have = float(available[i, 0])
    return have / per if per != 1 else have


def vswitch_checks(inp: FilterInput, t: NicsTable) -> list[HostCheck]:
    req = inp.request
    wants = req.vm.hypervisor.vswitch if req.vm.hypervisor else None
    out = [
        HostCheck(
            Reason.vswitch,
            "have no vSwitch",
            t.vswitch_type < 0,
            lambda i: ("the host has no vSwitch for the vswitch interfaces", None, None),
        )
    ]
    if wants is not None and wants.accelerated:
        out.append(
            HostCheck(
                Reason.vswitch_acceleration,
                "have no accelerated vSwitch",
                (t.vswitch_type >= 0) & ~t.vswitch_accel,
                lambda i: ("the vSwitch is not accelerated (e.g. OVS-DPDK)", None, None),
            )
        )
    if wants is not None and wants.types:
        codes = [inp.fleet.vocab.code(w.lower()) for w in wants.types]
        out.append(
            HostCheck(
                Reason.vswitch_type,
                f"have no vSwitch of type {', '.join(wants.types)}",
                (t.vswitch_type >= 0) & ~np.isin(t.vswitch_type, codes),
                detail(
                    lambda i, w=wants.types: (
                        f"the vSwitch is not one of {', '.join(w)}",
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
                Reason.vswitch_bandwidth,
                f"lack {need:g} Gbps of vSwitch bandwidth",
                (t.vswitch_type >= 0) & (t.vswitch_free < need_kbps),
                detail(
                    lambda i, need=need: (
                        f"the vSwitch has {gbps_text(int(t.vswitch_free[i]))} Gbps free, "
                        f"the VM needs {need:g}",
                        need,
                        float(t.vswitch_free[i]) / KBPS_PER_GBPS,
                    )
                ),
            )
        )
    return out
