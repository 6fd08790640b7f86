"""The NICs kind's columns in the fleet index: free ports, VFs and VF bandwidth per port speed
class, ports cabled to named networks, and the vSwitch."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from ....models.chd import ComputeHostDescriptor
from ..base import UNLIMITED_KBPS, BoolArray, IntArray, Table, Vocabulary, by_class
from .ports import NicsFree, NodePorts


@dataclass(frozen=True, slots=True)
class NetPort:
    """A port cabled to a named physical network (for the filter's per-network counts)."""

    slot: int  # node slot on its host
    network: str
    speed_gbps: float
    dedicable: bool
    free_vfs: int
    vf_kbps: int  # unused bandwidth a VF of it can get (port and NIC PCIe budget)


@dataclass(frozen=True, slots=True)
class NicsTable(Table):
    # per host x node slot x port speed class (a port counts in every class up to its speed)
    ded_ports: IntArray
    vfs: IntArray
    vf_bw: IntArray  # kbit/s: the most a VF of such a port can get
    # per host
    vswitch_type: IntArray  # name code, -1: no vSwitch
    vswitch_accel: BoolArray
    vswitch_free: IntArray  # kbit/s (UNLIMITED_KBPS: no figure)
    nic_free: IntArray  # free VFs + free whole ports
    net_ports: dict[int, tuple[NetPort, ...]]  # only hosts with ports cabled to a named network

    @classmethod
    def empty(cls, hosts: int, nodes: int, speeds: int) -> NicsTable:
        return cls(
            ded_ports=by_class(hosts, nodes, speeds),
            vfs=by_class(hosts, nodes, speeds),
            vf_bw=by_class(hosts, nodes, speeds),
            vswitch_type=np.full(hosts, -1, dtype=np.int64),
            vswitch_accel=np.zeros(hosts, dtype=np.bool_),
            vswitch_free=np.zeros(hosts, dtype=np.int64),
            nic_free=np.zeros(hosts, dtype=np.int64),
            net_ports={},
        )

    def fill(self, i: int, host: ComputeHostDescriptor, free: NicsFree, vocab: Vocabulary) -> None:
        self.ded_ports[i] = 0
        self.vfs[i] = 0
        self.vf_bw[i] = 0
        speeds = vocab.values("speeds")
        net_ports: list[NetPort] = []
        units = 0
        for j, node in enumerate(free.nodes):
            units += self._node(i, j, node, speeds, net_ports)
        self.net_ports.pop(i, None)
        if net_ports:
            self.net_ports[i] = tuple(net_ports)
        self.nic_free[i] = units
        self._vswitch(i, host, free, vocab)

    def fill_changed(self, i: int, free: NicsFree, before: NicsFree, vocab: Vocabulary) -> None:
        """Row i, filled from `before` (the same nodes), once the part is `free`: the nodes whose
        part is not the same object worked again, the vSwitch's figure read again (its type and
        acceleration no claim writes)."""
        speeds = vocab.values("speeds")
        net_ports: list[NetPort] = []
        held = self.net_ports.get(i, ())
        units = int(self.nic_free[i])
        for j, node in enumerate(free.nodes):
            if node is before.nodes[j]:
                net_ports += [port for port in held if port.slot == j]
            else:
                units -= self._units(i, j)
                units += self._node(i, j, node, speeds, net_ports)
        self.net_ports.pop(i, None)
        if net_ports:
            self.net_ports[i] = tuple(net_ports)
        self.nic_free[i] = units
        if self.vswitch_type[i] != -1:  # a vSwitch (`_vswitch`)
            vs_free = free.vswitch_free_kbps
            self.vswitch_free[i] = UNLIMITED_KBPS if vs_free is None else vs_free

    def _units(self, i: int, j: int) -> int:
        """Node slot j's free VFs and whole ports (`nic_free`: the class every port is in)."""
        return int(self.vfs[i, j, 0]) + int(self.ded_ports[i, j, 0]) if self.vfs.shape[2] else 0

    def _node(
        self, i: int, j: int, node: NodePorts, speeds: tuple[float, ...], net_ports: list[NetPort]
    ) -> int:
        """Node slot j's counts per speed class (summed in Python and stored once: numpy's
        indexing per port was most of a claimed host's update in the service's index), its ports
        cabled to a named network added to `net_ports`; its free VFs and whole ports."""
        ded, vfs, bandwidth = [0] * len(speeds), [0] * len(speeds), [0] * len(speeds)
        for port in node.ports:
            usable = min(
                port.bandwidth_free_kbps,
                node.nic_free_kbps.get(port.nic, port.bandwidth_free_kbps),
            )
            if port.physical_network is not None:
                net_ports.append(
                    NetPort(
                        j,
                        port.physical_network,
                        port.speed_gbps,
                        port.dedicable,
                        len(port.free_vfs) if port.sriov_ok else 0,
                        usable,
                    )
                )
            serves = bisect_right(speeds, port.speed_gbps)  # the classes up to its speed (sorted)
            if port.dedicable:
                for k in range(serves):
                    ded[k] += 1
            if port.sriov_ok and port.free_vfs:
                for k in range(serves):
                    vfs[k] += len(port.free_vfs)
                    bandwidth[k] = max(bandwidth[k], usable)
        self.ded_ports[i, j], self.vfs[i, j], self.vf_bw[i, j] = ded, vfs, bandwidth
        return ded[0] + vfs[0] if speeds else 0

    def _vswitch(
        self, i: int, host: ComputeHostDescriptor, free: NicsFree, vocab: Vocabulary
    ) -> None:
        self.vswitch_type[i] = -1
        self.vswitch_accel[i] = False
        self.vswitch_free[i] = 0
        hv = host.hypervisor
        if hv is not None and hv.vswitch is not None and str(hv.vswitch.type) != "none":
            self.vswitch_type[i] = vocab.code(str(hv.vswitch.type))
            self.vswitch_accel[i] = hv.vswitch.accelerated
            vs_free = free.vswitch_free_kbps
            self.vswitch_free[i] = UNLIMITED_KBPS if vs_free is None else vs_free

    def speed_class(self, vocab: Vocabulary, speed_gbps: float) -> int | None:
        """Column of the smallest port speed class >= `speed_gbps` (None: no port that fast)."""
        for k, s in enumerate(vocab.values("speeds")):
            if s >= speed_gbps - 1e-9:
                return k
        return None
