"""What a Nova flavor must express (`FlavorRequest`), read from a VM Descriptor or, without one,
from a VM Configuration. `render/openstack.py` turns it into extra specs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..models.configuration import VmConfiguration
from ..models.vmd import EmulatorThreads, InterfaceMode, ThreadPolicy, VmDescriptor
from ._common import cell_vcpus, guest_layout


@dataclass(frozen=True, slots=True)
class FlavorCell:
    vcpus: tuple[int, ...]
    memory_mib: int
    page_size_kib: int | None
    page_mib: int
    pairs: tuple[tuple[int, int], ...]
    thread_policy: ThreadPolicy | None
    host_node: int | None
    floating: bool = False  # unpinned vCPUs with a NUMA layout (Nova: a shared flavor)
    page_word: str | None = None  # a page size chosen on the host node (`large`, `any`)


@dataclass(frozen=True, slots=True)
class PortRequest:
    name: str
    mode: InterfaceMode
    cell: int | None
    bandwidth_gbps: float | None
    physical_network: str | None
    vlan: int | None
    vhost_user: bool
    numa_affinity: str | None = None  # the VMD's, as the Neutron port's numa_affinity_policy


@dataclass
class FlavorRequest:
    """What the flavor must express, read from the VMD or from the configuration."""

    source: str
    name: str
    vcpus: int
    memory_mib: int
    cells: list[FlavorCell]
    shared_vcpus: tuple[int, ...]
    thread_policy: ThreadPolicy
    emulator_isolate: bool
    realtime: tuple[int, ...]
    ports: list[PortRequest]
    pci_devices: list[tuple[str, int, int | None]]  # class, count, cell
    disk_gib: int = 0
    warnings: list[str] = field(default_factory=list)
    pci_affinities: tuple[str, ...] = ()  # the devices' numa_affinity, when the VMD gives one


def request_from_vm(vm: VmDescriptor, config: VmConfiguration | None) -> FlavorRequest:
    nodes = {cs.id: cs.numa_node for cs in config.cpu_sets} if config else {}
    cells = [
        FlavorCell(
            vcpus=tuple(cs.vcpus),
            memory_mib=cs.memory_mib,
            page_size_kib=cs.hugepages.size_kib if cs.hugepages and cs.hugepages.count else None,
            page_mib=cs.hugepages.total_mib if cs.hugepages else 0,
            pairs=tuple(cs.howtogroup),
            thread_policy=cs.thread_policy,
            host_node=nodes.get(cs.id),
            floating=cs.floating,
            page_word=cs.hugepages.choice.value if cs.hugepages and cs.hugepages.choice else None,
        )
        for cs in sorted(vm.cpu_sets, key=lambda c: c.id)
    ]
    cell_index = {cs.id: i for i, cs in enumerate(sorted(vm.cpu_sets, key=lambda c: c.id))}
    ports = _vm_ports(vm, cell_index)
    pinned = {v for cs in vm.cpu_sets for v in cs.vcpus}
    shared = tuple(v for v in range(vm.total_vcpus) if v not in pinned) if vm.cpu_sets else ()
    if not vm.cpu_sets:
        shared = tuple(range(vm.total_vcpus))
    return FlavorRequest(
        source="VM Descriptor",
        name=vm.name,
        vcpus=vm.total_vcpus,
        memory_mib=vm.total_memory_mib,
        cells=cells,
        shared_vcpus=shared,
        thread_policy=vm.cpu_thread_policy,
        emulator_isolate=vm.emulator_threads is EmulatorThreads.isolate,
        realtime=tuple(vm.realtime_vcpus),
        ports=ports,
        pci_devices=[
            (
                p.device_class.value,
                p.count,
                cell_index.get(p.cpu_set) if p.cpu_set is not None else None,
            )
            for p in vm.pci_devices
        ],
        disk_gib=math.ceil(vm.storage[0].size_gib) if vm.storage else 0,
        pci_affinities=tuple(
            sorted({str(p.numa_affinity) for p in vm.pci_devices if p.numa_affinity})
        ),
    )


def _vm_ports(vm: VmDescriptor, cell_index: dict[int, int]) -> list[PortRequest]:
    """The VMD's interfaces: a cpu-set's on its guest cell, the others on none."""
    vhost_user = bool(vm.hypervisor and vm.hypervisor.vswitch and vm.hypervisor.vswitch.accelerated)
    placed = [(cell_index[cs.id], i) for cs in vm.cpu_sets for i in cs.interfaces]
    return [
        PortRequest(
            i.name,
            i.mode,
            cell,
            i.bandwidth_gbps,
            i.physical_network,
            i.vlan,
            vhost_user,
            i.numa_affinity,
        )
        for cell, i in [*placed, *((None, i) for i in vm.interfaces)]
    ]


def request_from_config(config: VmConfiguration) -> FlavorRequest:
    layout = guest_layout(config)
    cells = [
        FlavorCell(
            vcpus=cell_vcpus(cs),
            memory_mib=cs.memory_mib,
            page_size_kib=cs.hugepages.size_kib if cs.hugepages and cs.hugepages.count else None,
            page_mib=cs.hugepages.total_mib if cs.hugepages else 0,
            pairs=tuple(cs.howtogroup),
            thread_policy=cs.thread_policy,
            host_node=cs.numa_node,
            floating=cs.floating is not None,
        )
        for cs in layout.cpu_sets
    ]
    cell_index = {cs.id: i for i, cs in enumerate(layout.cpu_sets)}
    ports = [
        PortRequest(
            i.name,
            i.mode,
            cell_index.get(i.cpu_set) if i.cpu_set is not None else None,
            i.bandwidth_gbps or None,
            i.physical_network,
            i.vlan,
            i.vhost_user,
        )
        for i in config.interfaces
    ]
    memory = sum(cs.memory_mib for cs in config.cpu_sets)
    memory += config.shared.memory_mib if config.shared else 0
    return FlavorRequest(
        source="VM Configuration",
        name=config.vm,
        vcpus=layout.total_vcpus,
        memory_mib=max(memory, config.memory_mib or 0),
        cells=cells,
        shared_vcpus=layout.shared_vcpus,
        thread_policy=config.thread_policy or ThreadPolicy.isolate,
        emulator_isolate=bool(config.emulator_pins),
        realtime=tuple(config.realtime_vcpus),
        ports=ports,
        pci_devices=[
            (d.device_class, 1, cell_index.get(d.cpu_set) if d.cpu_set is not None else None)
            for d in config.pci_devices
        ],
    )
