"""Exact ids after the solve: PUs for every vCPU, the emulator PU, VFs and ports, PCI devices.

Cores of one class on one node are interchangeable for the model, so the ids are taken in ascending
order (lowest core first), pairs on the two threads of one core, an isolated vCPU's sibling listed in
`reserved_siblings`. The result is a VM Configuration that `claims.claim` accepts.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import (
    CpuSetLink,
    CpuSetPlacement,
    HugepageAllocation,
    InterfacePlacement,
    PciDeviceAllocation,
    SharedCpus,
    VmConfiguration,
    with_requirements,
)
from ..models.vmd import InterfaceMode
from .constraints.devices import matches
from .hostview import HostView, NodeView, SharedPu
from .request import Request
from .solver import Layout


class AssignmentError(Exception):
    """The solved counts could not be turned into ids (a PCI device request that does not fit)."""


@dataclass
class _Pools:
    whole: list[tuple[int, ...]]
    single: list[int]
    half_iso: list[int]
    half_busy: list[int]

    @classmethod
    def of(cls, node: NodeView) -> _Pools:
        return cls(
            sorted(node.whole_cores),
            sorted(node.single_cores),
            sorted(node.half_isolated),
            sorted(node.half_busy),
        )

    def take(self, pool: str) -> tuple[int, ...]:
        items: list[tuple[int, ...]] | list[int] = getattr(self, pool)
        if not items:
            raise AssignmentError(f"pool {pool} exhausted")  # the model prevents this
        item = items.pop(0)
        return item if isinstance(item, tuple) else (item,)


def instance_id(host: ComputeHostDescriptor, request: Request, given: str | None) -> str:
    if given:
        return given
    """The given id, or `<vm>@<host>-<k>` with the smallest k free on the host (unique in a fleet)."""
    taken = {i.id for i in host.instances}
    k = 1
    while f"{request.name}@{host.id}-{k}" in taken:
        k += 1
    return f"{request.name}@{host.id}-{k}"


def build_configuration(
    host: ComputeHostDescriptor,
    view: HostView,
    request: Request,
    layout: Layout | None,
    instance: str,
    shared: tuple[int, tuple[SharedPu, ...]] | None = None,
) -> VmConfiguration:
    vm = request.vm
    pools = {node.id: _Pools.of(node) for node in view.nodes}
    placements: list[CpuSetPlacement] = []
    emulator_pins: list[int] = []
    nodes = layout.nodes if layout else {}
    counts = layout.counts if layout else {}
    for cs in request.cpu_sets:
        node_id = nodes[cs.id]
        pool = pools[node_id]
        pins: dict[int, int] = {}
        reserved: list[int] = []
        for a, b in cs.pairs:
            core = pool.take("whole")
            pins[a], pins[b] = core[0], core[1]
            reserved.extend(core[2:])
        singles = list(cs.singles)

        def count(name: str, cs_id: int = cs.id, node_id: int = node_id) -> int:
            return counts.get((name, cs_id, node_id), 0)

        for _ in range(count("iso_half")):
            pins[singles.pop(0)] = pool.take("half_iso")[0]
        for _ in range(count("iso_single")):
            pins[singles.pop(0)] = pool.take("single")[0]
        for _ in range(count("iso_whole")):
            core = pool.take("whole")
            pins[singles.pop(0)] = core[0]
            reserved.extend(core[1:])
        for _ in range(count("pre_half_busy")):
            pins[singles.pop(0)] = pool.take("half_busy")[0]
        for _ in range(count("pre_half_iso")):
            pins[singles.pop(0)] = pool.take("half_iso")[0]
        for _ in range(count("pre_single")):
            pins[singles.pop(0)] = pool.take("single")[0]
        for _ in range(count("pre_whole2")):
            core = pool.take("whole")
            pins[singles.pop(0)] = core[0]
            pins[singles.pop(0)] = core[1]
            reserved.extend(core[2:])
        for _ in range(count("pre_whole1")):
            core = pool.take("whole")
            pins[singles.pop(0)] = core[0]
            pool.half_busy.extend(core[1:])  # siblings stay free for others
        if singles:
            raise AssignmentError(f"cpu-set {cs.id}: vCPUs {singles} left without a PU")
        if request.emulator and cs is request.cpu_sets[0]:
            for name in ("half_busy", "half_iso", "single", "whole"):
                if count(f"emu_{name}"):
                    emulator_pins.append(pool.take(name)[0])  # a whole core's sibling stays free
        placements.append(
            CpuSetPlacement(
                id=cs.id,
                numa_node=node_id,
                vcpu_pins={v: pins[v] for v in cs.vcpus},
                memory_mib=cs.memory_mib,
                hugepages=(
                    HugepageAllocation(size_kib=cs.hugepage_size_kib, count=cs.hugepage_count)
                    if cs.hugepage_size_kib is not None
                    else None
                ),
                memory_bandwidth_gbps=(cs.memory_bandwidth_mbps / 1000) or None,
                reserved_siblings=tuple(sorted(reserved)),
                howtogroup=cs.pairs,  # on sibling threads: renderers give the guest threads=2
            )
        )
    interfaces = _interfaces(host, view, request, layout, nodes)
    links = tuple(
        CpuSetLink(
            cpu_sets=link.cpu_sets,
            numa_nodes=(nodes[link.cpu_sets[0]], nodes[link.cpu_sets[1]]),
            bandwidth_mbps=link.bandwidth_mbps,
        )
        for link in request.links
        if link.cpu_sets[0] in nodes
        and link.cpu_sets[1] in nodes
        and nodes[link.cpu_sets[0]] != nodes[link.cpu_sets[1]]
    )
    shared_cpus = None
    if shared is not None and request.shared is not None:
        node_id, pus = shared
        shared_cpus = SharedCpus(
            vcpus=request.shared.vcpus,
            cpus=tuple(p.pu for p in pus),
            numa_node=node_id,
            memory_mib=request.shared.memory_mib,
            oversubscribed=request.shared.vcpus > len(pus),
        )
    devices = _devices(view, request, nodes)
    impact = vm.impact
    config = VmConfiguration(
        vm=vm.name,
        instance=instance,
        host=host.id,
        vcpus=vm.total_vcpus,
        memory_mib=vm.total_memory_mib,
        thread_policy=(
            None
            if not request.cpu_sets
            else request.cpu_sets[0].policy
            if request.cpu_sets[0].synthetic
            else vm.cpu_thread_policy
        ),
        cpu_sets=tuple(placements),
        shared=shared_cpus,
        emulator_pins=tuple(emulator_pins),
        realtime_vcpus=vm.realtime_vcpus,
        interfaces=interfaces,
        pci_devices=devices,
        cpu_set_links=links,
        memory_bandwidth_gbps=(impact.memory_bandwidth_gbps or 0.0) if impact else 0.0,
        variant=request.variant,
    )
    return with_requirements(config, vm)  # networks, VLANs, cpu-set policies, the descriptor


def _interfaces(
    host: ComputeHostDescriptor,
    view: HostView,
    request: Request,
    layout: Layout | None,
    nodes: dict[int, int],
) -> tuple[InterfacePlacement, ...]:
    ports = {p.pci_address: p for n in view.nodes for p in n.ports}
    used_vfs: dict[str, int] = {}
    vswitch = host.hypervisor.vswitch if host.hypervisor else None
    out = []
    for iface in request.interfaces:
        node = nodes.get(iface.cpu_set) if iface.cpu_set is not None else None
        if iface.mode is InterfaceMode.vswitch:
            out.append(
                InterfacePlacement(
                    name=iface.name,
                    cpu_set=iface.cpu_set,
                    mode=iface.mode,
                    numa_node=node if iface.restricted else None,
                    bandwidth_gbps=iface.bandwidth_gbps,
                    vhost_user=bool(vswitch and vswitch.accelerated),
                )
            )
            continue
        if layout is None or iface.name not in layout.ports:
            raise AssignmentError(f"interface {iface.name} has no port")
        port = ports[layout.ports[iface.name]]
        if iface.mode is InterfaceMode.dedicated:
            out.append(
                InterfacePlacement(
                    name=iface.name,
                    cpu_set=iface.cpu_set,
                    mode=iface.mode,
                    pci_address=port.pci_address,
                    numa_node=port.node,
                    bandwidth_gbps=iface.bandwidth_gbps or port.speed_gbps,
                )
            )
        else:
            k = used_vfs.get(port.pci_address, 0)
            used_vfs[port.pci_address] = k + 1
            out.append(
                InterfacePlacement(
                    name=iface.name,
                    cpu_set=iface.cpu_set,
                    mode=iface.mode,
                    pci_address=port.free_vfs[k],
                    physical_function=port.pci_address,
                    numa_node=port.node,
                    bandwidth_gbps=iface.bandwidth_gbps,
                )
            )
    return tuple(out)


def _devices(
    view: HostView, request: Request, nodes: dict[int, int]
) -> tuple[PciDeviceAllocation, ...]:
    taken: set[str] = set()
    out = []
    for k, want in enumerate(request.vm.pci_devices):
        node_ids = (
            [nodes[want.cpu_set]]
            if want.cpu_set is not None and want.cpu_set in nodes
            else [n.id for n in view.nodes]
        )
        for _ in range(want.count):
            found = None
            for node_id in node_ids:
                for dev in view.node(node_id).devices:
                    if dev.pci_address in taken or not matches(dev, want):
                        continue
                    found = (node_id, dev)
                    break
                if found:
                    break
            if found is None:
                raise AssignmentError(
                    f"pci_devices[{k}]: no free {want.device_class} device"
                    + (
                        f" on the node of cpu-set {want.cpu_set}"
                        if want.cpu_set is not None
                        else ""
                    )
                )
            taken.add(found[1].pci_address)
            out.append(
                PciDeviceAllocation.model_validate(
                    {
                        "pci_address": found[1].pci_address,
                        "class": found[1].device_class,
                        "numa_node": found[0],
                        "cpu_set": want.cpu_set,
                    }
                )
            )
    return tuple(out)
