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
  one with a `numa_affinity` stays near the VM's nodes as that says (`resources/affinity.py`);
- an interface naming a `physical_network` only takes ports cabled to it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import numpy as np
from ortools.sat.python import cp_model

from ....models.chd import ComputeHostDescriptor, NumaNode
from ....models.configuration import VmConfiguration
from ....models.vmd import InterfaceMode
from ...options import Policy
from ...reasons import Reason
from ...request import CpuSetDemand, Part, Request
from .. import affinity
from ..base import UNLIMITED_KBPS, HostFree, IndexedFleet, Vocabulary
from ..direct import Assignment, DirectPart, NoAnswer
from ..draft import ConfigurationDraft, DescriptorDraft, HostDraft
from ..filtering import FilterInput, HostCheck, NodeNeed
from ..holding import PORT, VF, HeldUnit
from ..kind import Decisions, Kind, RelaxModel
from ..kubelet import KubeletPool
from ..model import Layout, ModelContext
from ..scoring import KEEP_VF, PORT_KEEP, Kept
from . import filter as checks
from .assign import assign_interfaces, chosen_ports
from .claims import claim_interfaces
from .counting import PortsLeft, take_ports
from .direct import nics_direct
from .model import PORT_CHOICES, post_interfaces
from .ports import (
    FreePort,
    NicsFree,
    NodePorts,
    match_vfs,
    nics_free,
    node_ports,
    port_takes,
    vfs_claimed,
)
from .relax import relax_interfaces, relax_ports, relax_vswitch
from .table import NicsTable


class NicsKind(Kind):
    name = "nics"
    reasons = (
        Reason.dedicated_port,
        Reason.sriov_vf,
        Reason.sriov_bandwidth,
        Reason.physical_network,
        Reason.vswitch,
        Reason.vswitch_acceleration,
        Reason.vswitch_type,
        Reason.vswitch_bandwidth,
    )
    family = (
        "ports and VFs (a port given whole serves no VF; VFs share its bandwidth; "
        "paced VFs carry at most their rate; a NIC's ports share its PCIe link)"
    )
    costs = {
        "ports": "spare Gbps of the chosen ports (dedicated: speed beyond what is asked; SR-IOV: "
        "bandwidth left on each port the VM's VFs use, negated under spread), plus the Gbps left "
        "on a port whose last free VF is taken",
        affinity.COST: affinity.COST_TEXT,
    }
    seed_terms = {"speeds": (0.0,)}

    def vocabulary(self, host: ComputeHostDescriptor) -> Iterable[tuple[str, Hashable]]:
        for node in host.numa_nodes:
            yield from (("speeds", p.speed_gbps) for p in node.ports)
        if host.hypervisor is not None and host.hypervisor.vswitch is not None:
            yield "names", str(host.hypervisor.vswitch.type)

    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> NicsTable:
        return NicsTable.empty(hosts, nodes, len(vocab.values("speeds")))

    def fill(
        self,
        table: NicsTable,
        i: int,
        host: ComputeHostDescriptor,
        free: HostFree,
        vocab: Vocabulary,
    ) -> None:
        table.fill(i, host, free.of(self), vocab)

    def fill_changed(
        self, table: NicsTable, i: int, free: HostFree, before: HostFree, vocab: Vocabulary
    ) -> None:
        table.fill_changed(i, free.of(self), before.of(self), vocab)

    def free(self, host: ComputeHostDescriptor) -> NicsFree:
        return nics_free(host)

    def free_again(
        self, host: ComputeHostDescriptor, before: ComputeHostDescriptor, free_before: NicsFree
    ) -> NicsFree:
        return nics_free(host, (before, free_before))

    def free_claimed(
        self,
        before: ComputeHostDescriptor,
        free_before: NicsFree,
        config: VmConfiguration,
        after: ComputeHostDescriptor | None,
    ) -> NicsFree | None:
        if not config.interfaces:
            return free_before  # ports, VFs and the vSwitch alone
        if after is None:
            return vfs_claimed(free_before, config)
        # the claimed host read again, but not its PUs: a claim moves none to another socket
        return nics_free(after, (before, free_before), sockets_kept=True)

    def host_checks(self, inp: FilterInput) -> list[HostCheck]:
        return checks.host_checks(inp, inp.fleet.table(self))

    def node_needs(self, inp: FilterInput, part: Part) -> list[NodeNeed]:
        if not isinstance(part, CpuSetDemand):
            return []
        return checks.node_needs(inp, inp.fleet.table(self), part.id)

    def in_model(self, request: Request) -> bool:
        return any(i.mode is not InterfaceMode.vswitch for i in request.interfaces)

    def post_limits(self, ctx: ModelContext) -> None:
        post_interfaces(ctx, ctx.free.of(self), spread=ctx.options.policy is Policy.spread)

    def direct(self, a: Assignment) -> DirectPart | NoAnswer:
        return nics_direct(a, a.free.of(self), spread=a.options.policy is Policy.spread)

    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None:
        nodes = layout.nodes if layout else {}
        chosen = chosen_ports(layout.of(PORT_CHOICES)) if layout else {}
        assign_interfaces(draft, free.of(self), request, nodes, chosen)

    def counts(self, request: Request) -> bool:
        if request.shared is not None:
            return all(i.mode is InterfaceMode.vswitch for i in request.interfaces)
        return all(i.restricted or i.mode is InterfaceMode.vswitch for i in request.interfaces)

    def count_state(
        self, fleet: IndexedFleet, i: int, slot: int, request: Request
    ) -> PortsLeft | None:
        if not request.cpu_sets or not request.interfaces_of(request.cpu_sets[0].id):
            return None
        return PortsLeft.of(node_ports(fleet.hosts[i].numa_nodes[slot]))

    def count_take(self, state: PortsLeft, request: Request, spread: bool) -> Reason | None:
        return take_ports(state, request.interfaces_of(request.cpu_sets[0].id), spread)

    def count_caps(self, fleet: IndexedFleet, i: int, request: Request) -> list[tuple[Reason, int]]:
        need = request.vswitch_bandwidth_kbps
        left = int(fleet.table(self).vswitch_free[i])
        if need and left < UNLIMITED_KBPS:
            return [(Reason.vswitch_bandwidth, left // need)]
        return []

    def relax_add(
        self,
        model: RelaxModel,
        host: int,
        slot: int,
        x: cp_model.IntVar,
        request: Request,
        part: Part | None,
    ) -> None:
        if part is None:
            ifaces = [i for i in request.interfaces if not i.restricted]
        elif isinstance(part, CpuSetDemand):
            ifaces = list(request.interfaces_of(part.id))
        else:
            return
        relax_interfaces(model, host, slot, x, ifaces, model.fleet.vocab.values("speeds"))

    def relax_host(
        self, model: RelaxModel, host: int, z: cp_model.IntVar, request: Request
    ) -> None:
        relax_vswitch(model, host, z, request)

    def relax_capacity(self, fleet: IndexedFleet, host: int, slot: int, name: str) -> int | None:
        t = fleet.table(self)
        cols = slice(None) if slot < 0 else slice(slot, slot + 1)
        exists = fleet.node_id[host, cols] >= 0
        values = t.ded_ports[host, cols, int(name[3:])]
        return int(np.minimum(values[exists], UNLIMITED_KBPS).sum())

    def relax_finish(self, model: RelaxModel) -> None:
        relax_ports(model, model.fleet.table(self))

    def describe(self, draft: DescriptorDraft, config: VmConfiguration) -> None:
        """Each interface, bound to the cpu-set it was (a host-level one to none)."""
        by_cpu_set: dict[int | None, list[dict[str, object]]] = {}
        for i in config.interfaces:
            wanted: dict[str, object] = {
                "name": i.name,
                "mode": i.mode.value,
                "bandwidth_gbps": i.bandwidth_gbps,
            }
            by_cpu_set.setdefault(i.cpu_set, []).append(wanted)
        draft.fields["interfaces"] = [
            {**e, "restricted_to_topology": False} for e in by_cpu_set.get(None, [])
        ]
        for cs_id, entry in draft.cpu_sets.items():
            entry["interfaces"] = by_cpu_set.get(cs_id, [])

    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None:
        claim_interfaces(draft, config, sign)

    def link_kbps(self, table: NicsTable, host: int) -> int | None:
        if table.vswitch_type[host] < 0:
            return None  # no vSwitch: the links are not limited here
        return int(table.vswitch_free[host])

    def kept(self, table: NicsTable, request: Request) -> Kept | None:
        if any(i.mode is not InterfaceMode.vswitch for i in request.interfaces):
            return None
        return Kept(
            "ports kept",
            KEEP_VF,
            table.nic_free,
            "{count} free VFs and ports, {weight} each: kept for VMs that need them",
        )

    def node_kept(self, free: NicsFree, slot: int, request: Request, cs: CpuSetDemand) -> int:
        for i in request.interfaces:  # `interfaces_of(cs.id)`, no tuple built: per node priced
            if i.cpu_set == cs.id and i.restricted and i.mode is not InterfaceMode.vswitch:
                return 0
        return PORT_KEEP * sum(p.sriov_ok for p in free.nodes[slot].ports)

    def held_units(self, config: VmConfiguration) -> Iterable[HeldUnit]:
        """Its SR-IOV VFs and dedicated ports, by PCI address."""
        for iface in config.interfaces:
            if iface.pci_address is not None and iface.mode in ("sriov", "dedicated"):
                yield HeldUnit(VF if iface.mode == "sriov" else PORT, iface.pci_address.lower())

    def owners(self, host: ComputeHostDescriptor) -> Iterable[str]:
        for node in host.numa_nodes:
            for nic in node.nics:
                for port in nic.ports:
                    if port.owner:
                        yield port.owner
                    yield from (vf.owner for vf in port.vfs if vf.owner)

    def kubelet_pools(self, host: ComputeHostDescriptor, node: NumaNode) -> Iterable[KubeletPool]:
        """The device manager's: a port's SR-IOV VFs under its physical network's name."""
        for port in node.ports:
            if port.physical_network and port.vfs:
                free = sum(not vf.in_use for vf in port.vfs)
                yield KubeletPool("device", port.physical_network, len(port.vfs), free)


NICS = NicsKind()

__all__ = [
    "NICS",
    "FreePort",
    "NicsFree",
    "NicsTable",
    "NodePorts",
    "match_vfs",
    "node_ports",
    "port_takes",
]
