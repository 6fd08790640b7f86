"""libvirt domain XML for a VM Configuration (what NFV-PER 001 compares with the deployed `vm.xml`).

Pure: `render_libvirt(config, vm=None, host=None)` returns the XML text and warnings; it reads its
inputs and changes nothing. `docs/render.md` explains every element emitted and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import InterfacePlacement, VmConfiguration
from ..models.vmd import InterfaceMode, VmDescriptor
from ._common import (
    GuestLayout,
    Pci,
    cell_vcpus,
    check_host,
    check_vm,
    cpu_list,
    guest_layout,
    guest_pairs,
    guest_threads,
    require_passthrough_addresses,
    total_memory_mib,
)
from .result import RenderResult

VHOST_USER_SOCKET_DIR = "/var/run/openvswitch"
DEFAULT_NETWORK = "default"
REALTIME_PRIORITY = 1


@dataclass(frozen=True, slots=True)
class GuestCell:
    """One guest NUMA cell: its vCPUs, memory, host node and page size."""

    id: int
    vcpus: tuple[int, ...]
    memory_kib: int
    host_node: int | None
    page_size_kib: int | None = None


@dataclass
class _Domain:
    warnings: list[str] = field(default_factory=list)


def guest_cells(config: VmConfiguration, layout: GuestLayout) -> tuple[GuestCell, ...]:
    """The guest NUMA cells, in id order.

    Cell i is the i-th cpu-set (by id), backed by its hugepages when it has any. A cpu-set whose
    hugepages cover only part of its memory adds a CPU-less cell holding the rest as normal memory,
    bound to the same host node: libvirt backs a whole cell with one page size. Floating (shared)
    vCPUs with memory of their own get a cell of their own; without, they join the cell on their
    node (or cell 0). A VM without cpu-sets has no cells.
    """
    if not layout.cpu_sets:
        return ()
    cpu_cells: list[GuestCell] = []
    extra: list[tuple[int, int]] = []  # (memory_kib, host node) of normal-memory parts
    for index, cs in enumerate(layout.cpu_sets):
        total_kib = cs.memory_mib * 1024
        huge_kib = cs.hugepages.count * cs.hugepages.size_kib if cs.hugepages else 0
        vcpus = cell_vcpus(cs)
        if huge_kib and cs.hugepages is not None:
            cpu_cells.append(GuestCell(index, vcpus, huge_kib, cs.numa_node, cs.hugepages.size_kib))
            if total_kib > huge_kib:
                extra.append((total_kib - huge_kib, cs.numa_node))
        else:
            cpu_cells.append(GuestCell(index, vcpus, total_kib, cs.numa_node))
    cells = cpu_cells
    shared = config.shared
    if layout.shared_vcpus:
        if shared is not None and shared.memory_mib > 0:
            cells.append(
                GuestCell(
                    len(cells), layout.shared_vcpus, shared.memory_mib * 1024, shared.numa_node
                )
            )
        else:
            node = shared.numa_node if shared is not None else None
            target = next((i for i, cs in enumerate(layout.cpu_sets) if cs.numa_node == node), 0)
            old = cells[target]
            cells[target] = GuestCell(
                old.id,
                tuple(sorted(old.vcpus + layout.shared_vcpus)),
                old.memory_kib,
                old.host_node,
                old.page_size_kib,
            )
    for memory_kib, node in extra:
        cells.append(GuestCell(len(cells), (), memory_kib, node))
    return tuple(cells)


def _sub(parent: etree._Element, tag: str, text: str | None = None, **attrs: str) -> etree._Element:
    element = etree.SubElement(parent, tag, attrs)
    if text is not None:
        element.text = text
    return element


def _pci_address(parent: etree._Element, address: str, **extra: str) -> etree._Element:
    pci = Pci.parse(address)
    return _sub(
        parent,
        "address",
        **extra,
        domain=f"0x{pci.domain:04x}",
        bus=f"0x{pci.bus:02x}",
        slot=f"0x{pci.slot:02x}",
        function=f"0x{pci.function:x}",
    )


def user_alias(name: str) -> str:
    """libvirt user aliases are `ua-` followed by letters, digits, `_` and `-`."""
    return "ua-" + re.sub(r"[^A-Za-z0-9_-]", "_", name)


def _emulator_pus(config: VmConfiguration, layout: GuestLayout, dom: _Domain) -> tuple[int, ...]:
    """Where the emulator threads run (docs/render.md, 'emulatorpin policy')."""
    if config.emulator_pins:
        return tuple(config.emulator_pins)
    shared_pus = tuple(config.shared.cpus) if config.shared and layout.shared_vcpus else ()
    if config.realtime_vcpus:
        realtime = set(config.realtime_vcpus)
        housekeeping = tuple(pu for v, pu in layout.pins.items() if v not in realtime)
        if layout.shared_vcpus and not realtime.issuperset(layout.shared_vcpus):
            housekeeping += shared_pus
        if housekeeping:
            return housekeeping
        dom.warnings.append(
            "every vCPU is realtime and the configuration has no emulator_pins: the emulator "
            "threads share the realtime vCPUs' PUs (set emulator_threads: isolate in the VMD)"
        )
    floating = tuple(sorted({pu for pus in layout.floating.values() for pu in pus}))
    return tuple(layout.pins.values()) + shared_pus + floating


def _cputune(
    root: etree._Element, config: VmConfiguration, layout: GuestLayout, dom: _Domain
) -> None:
    if not layout.pins and not layout.floating and not (config.shared and config.shared.cpus):
        return
    cputune = _sub(root, "cputune")
    shared_cpus = cpu_list(config.shared.cpus) if config.shared else ""
    for vcpu in range(layout.total_vcpus):
        # a floating vCPU may run on any shared PU of its cell's node: a set, not one PU
        cpuset = (
            str(layout.pins[vcpu])
            if vcpu in layout.pins
            else cpu_list(layout.floating[vcpu])
            if vcpu in layout.floating
            else shared_cpus
        )
        if cpuset:  # an unpinned vCPU without shared PUs floats anywhere
            _sub(cputune, "vcpupin", vcpu=str(vcpu), cpuset=cpuset)
    emulator = _emulator_pus(config, layout, dom)
    if emulator:
        _sub(cputune, "emulatorpin", cpuset=cpu_list(emulator))
    if config.realtime_vcpus:
        _sub(
            cputune,
            "vcpusched",
            vcpus=cpu_list(config.realtime_vcpus),
            scheduler="fifo",
            priority=str(REALTIME_PRIORITY),
        )
    _cachetune(cputune, config, dom)


def _cachetune(cputune: etree._Element, config: VmConfiguration, dom: _Domain) -> None:
    """Each cpu-set's exclusive L3 ways: libvirt sizes them (ways x way size) and picks the bits."""
    for cs in config.cpu_sets:
        ways = cs.cache_ways
        if ways is None:
            continue
        if ways.way_kib is None:
            dom.warnings.append(
                f"cpu-set {cs.id}: L3 ways {ways.first_way}-{ways.first_way + ways.ways - 1} of "
                f"cache {ways.domain} not rendered (the host states no way_kib, and libvirt sizes "
                "a <cachetune> in bytes): reserve them with `render --format host-tuning`"
            )
            continue
        tune = _sub(cputune, "cachetune", vcpus=cpu_list(sorted(cs.vcpu_pins)))
        size = str(ways.ways * ways.way_kib)
        _sub(tune, "cache", id=str(ways.domain), level="3", type="both", size=size, unit="KiB")


def _memory_backing(
    root: etree._Element, cells: tuple[GuestCell, ...], realtime: bool, vhost_user: bool
) -> None:
    sizes: dict[int, list[int]] = {}
    for cell in cells:
        if cell.page_size_kib:
            sizes.setdefault(cell.page_size_kib, []).append(cell.id)
    if not (sizes or realtime or vhost_user):
        return
    backing = _sub(root, "memoryBacking")
    if sizes:
        hugepages = _sub(backing, "hugepages")
        for size, cell_ids in sorted(sizes.items()):
            _sub(hugepages, "page", size=str(size), unit="KiB", nodeset=cpu_list(cell_ids))
    if realtime:
        _sub(backing, "nosharepages")
        _sub(backing, "locked")
    if vhost_user:
        if not sizes:
            _sub(backing, "source", type="memfd")
        _sub(backing, "access", mode="shared")


def _numatune(root: etree._Element, config: VmConfiguration, cells: tuple[GuestCell, ...]) -> None:
    if cells:
        nodes = [c.host_node for c in cells if c.host_node is not None]
        if not nodes:
            return
        numatune = _sub(root, "numatune")
        _sub(numatune, "memory", mode="strict", nodeset=cpu_list(nodes))
        for cell in cells:
            if cell.host_node is not None:
                _sub(
                    numatune,
                    "memnode",
                    cellid=str(cell.id),
                    mode="strict",
                    nodeset=str(cell.host_node),
                )
    elif config.shared is not None and config.shared.numa_node is not None:
        numatune = _sub(root, "numatune")
        _sub(numatune, "memory", mode="strict", nodeset=str(config.shared.numa_node))


def _guest_cpu(
    root: etree._Element,
    layout: GuestLayout,
    cells: tuple[GuestCell, ...],
    threads: int,
    vhost_user: bool,
) -> None:
    cpu = _sub(root, "cpu", mode="host-passthrough", check="none", migratable="off")
    _sub(
        cpu,
        "topology",
        sockets="1",
        dies="1",
        cores=str(layout.total_vcpus // threads),
        threads=str(threads),
    )
    if not cells:
        return
    numa = _sub(cpu, "numa")
    for cell in cells:
        attrs = {"id": str(cell.id)}
        if cell.vcpus:
            attrs["cpus"] = cpu_list(cell.vcpus)
        attrs["memory"] = str(cell.memory_kib)
        attrs["unit"] = "KiB"
        if vhost_user:
            attrs["memAccess"] = "shared"
        _sub(numa, "cell", **attrs)


def _interface(
    devices: etree._Element,
    iface: InterfacePlacement,
    owner: str,
    vm: VmDescriptor | None,
) -> None:
    described = next((i for i in vm.all_interfaces if i.name == iface.name), None) if vm else None
    if iface.mode is InterfaceMode.dedicated:
        assert iface.pci_address is not None
        hostdev = _sub(devices, "hostdev", mode="subsystem", type="pci", managed="yes")
        source = _sub(hostdev, "source")
        _pci_address(source, iface.pci_address)
        _sub(hostdev, "alias", name=user_alias(iface.name))
        return
    if iface.mode is InterfaceMode.sriov:
        assert iface.pci_address is not None
        element = _sub(devices, "interface", type="hostdev", managed="yes")
        source = _sub(element, "source")
        _pci_address(source, iface.pci_address, type="pci")
        tag = iface.vlan if iface.vlan is not None else (described.vlan if described else None)
        if tag is not None:
            vlan = _sub(element, "vlan")
            _sub(vlan, "tag", id=str(tag))
        _sub(element, "alias", name=user_alias(iface.name))
        return
    if iface.vhost_user:
        element = _sub(devices, "interface", type="vhostuser")
        socket = re.sub(r"[^A-Za-z0-9_.-]", "_", f"vhu-{owner}-{iface.name}")
        _sub(
            element, "source", type="unix", path=f"{VHOST_USER_SOCKET_DIR}/{socket}", mode="server"
        )
        _sub(element, "model", type="virtio")
        _sub(element, "alias", name=user_alias(iface.name))
        return
    element = _sub(devices, "interface", type="network")
    network = iface.physical_network or (described.physical_network if described else None)
    _sub(element, "source", network=network or DEFAULT_NETWORK)
    _sub(element, "model", type="virtio")
    _sub(element, "alias", name=user_alias(iface.name))


def _domain_name(owner: str, dom: _Domain) -> str:
    if "/" not in owner:
        return owner
    name = owner.replace("/", "_")
    dom.warnings.append(f"libvirt names cannot hold '/': the domain is named {name!r}")
    return name


def _os_and_features(root: etree._Element, arch: str, realtime: bool) -> None:
    """`<os>` (q35 on x86_64) and `<features>` (no PMU for realtime guests: its NMIs add jitter)."""
    os_element = _sub(root, "os")
    type_attrs = {"arch": arch}
    if arch == "x86_64":
        type_attrs["machine"] = "q35"
    _sub(os_element, "type", "hvm", **type_attrs)
    features = _sub(root, "features")
    _sub(features, "acpi")
    if arch in ("x86_64", "i686"):
        _sub(features, "apic")
    if realtime:
        _sub(features, "pmu", state="off")


def render_libvirt(
    config: VmConfiguration,
    vm: VmDescriptor | None = None,
    host: ComputeHostDescriptor | None = None,
) -> RenderResult:
    """The libvirt domain XML for one VM Configuration.

    `vm` (optional) supplies what a configuration does not carry: howtogroup pairs when the
    configuration has none, VLAN tags of VFs and the network of vSwitch ports. `host` (optional)
    supplies the architecture.
    """
    vm = check_vm(config, vm)
    host = check_host((config,), host)
    layout = guest_layout(config)
    require_passthrough_addresses(config)
    dom = _Domain()
    cells = guest_cells(config, layout)
    realtime = bool(config.realtime_vcpus)
    vhost_user = any(i.vhost_user for i in config.interfaces if i.mode is InterfaceMode.vswitch)
    threads, why = guest_threads(layout, guest_pairs(config, vm))
    if why:
        dom.warnings.append(why)
    arch = (host.processor.architecture if host else None) or "x86_64"

    root = etree.Element("domain", type="kvm")
    root.append(etree.Comment(f" nfvplace: VM Configuration of {config.vm} on host {config.host} "))
    _sub(root, "name", _domain_name(config.owner, dom))
    memory_kib = sum(c.memory_kib for c in cells) if cells else total_memory_mib(config) * 1024
    if cells and config.memory_mib is not None and config.memory_mib * 1024 != memory_kib:
        dom.warnings.append(
            f"memory_mib is {config.memory_mib} but the guest NUMA cells hold "
            f"{memory_kib // 1024} MiB; libvirt uses the cells' sum"
        )
    _sub(root, "memory", str(memory_kib), unit="KiB")
    _memory_backing(root, cells, realtime, vhost_user)
    _sub(root, "vcpu", str(layout.total_vcpus), placement="static")
    _cputune(root, config, layout, dom)
    _numatune(root, config, cells)
    _os_and_features(root, arch, realtime)
    _guest_cpu(root, layout, cells, threads, vhost_user)
    _sub(root, "clock", offset="utc")
    devices = _sub(root, "devices")
    for iface in config.interfaces:
        _interface(devices, iface, config.owner, vm)
    for device in config.pci_devices:
        hostdev = _sub(devices, "hostdev", mode="subsystem", type="pci", managed="yes")
        source = _sub(hostdev, "source")
        _pci_address(source, device.pci_address)
    if realtime or any(c.page_size_kib for c in cells):
        _sub(devices, "memballoon", model="none")
    if vm is not None and vm.storage:
        dom.warnings.append(
            f"disks ({', '.join(d.name for d in vm.storage)}) are not rendered: a VM Configuration "
            "does not say where images live; add <disk> elements when deploying"
        )
    etree.indent(root, space="  ")
    text = etree.tostring(root, encoding="unicode") + "\n"
    return RenderResult(text=text, warnings=tuple(dom.warnings))
