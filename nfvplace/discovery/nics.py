"""The NICs (ports, VFs) and other PCI devices of a neutral topology, by NUMA node.

Pure: no I/O. A NIC is a PCI function of class 02xx or 0c06; functions sharing domain:bus:device and
ids form one NIC; a VF (sysfs `physfn`/`virtfn*`, else the vendor:device table in `pci_ids`, else a
function with no OS device next to a PF of its vendor) is attached to the PF of the same vendor
family on the same bus (the same slot first). A device sits under the NUMA node sysfs names, else
the first node of its hwloc locality; a wider or missing locality is said in the notes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..models.chd import Nic, PciDevice, PciDeviceClass, Port, VirtualFunction
from .facts import HostFacts, NetDevice
from .hwtopo import HwPciFunction, HwTopology
from .pci_ids import is_known_vf, is_network_class, vendor_family, vendor_name


@dataclass(frozen=True)
class _SysfsLinks:
    """What sysfs says about PCI functions: their interface, and which VF belongs to which PF."""

    by_address: dict[str, NetDevice] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)  # VF address -> PF address
    vfs: set[str] = field(default_factory=set)


def nics_by_node(
    topo: HwTopology,
    facts: HostFacts,
    node_ids: list[int],
    unknown: list[str],
    notes: list[str],
) -> tuple[dict[int, list[Nic]], dict[int, list[PciDevice]]]:
    """NICs and other PCI devices (GPUs, accelerators, crypto) under their NUMA node ids."""
    links = _sysfs_links(facts)
    pfs, vf_map = _split_functions(topo, facts, links, notes)
    groups: dict[tuple[str, str, str], list[HwPciFunction]] = defaultdict(list)
    for pf in pfs:
        groups[(pf.slot, pf.vendor_id, pf.device_id)].append(pf)
    nics: dict[int, list[Nic]] = defaultdict(list)
    speed_unknown = False
    for (_, vendor_id, device_id), functions in sorted(groups.items()):
        functions.sort(key=lambda f: f.busid)
        ports: list[Port] = []
        for function in functions:
            port, speed_known = _port(function, facts, links, vf_map, notes)
            ports.append(port)
            speed_unknown = speed_unknown or not speed_known
        first = functions[0]
        link = first.link_gbytes_s
        nics[_home(first, links, node_ids, notes)].append(
            Nic(
                vendor=vendor_name(vendor_id, first.vendor_name),
                model=first.device_name or f"PCI device {vendor_id}:{device_id}",
                vendor_id=vendor_id,
                device_id=device_id,
                pcie_bandwidth_gbps=round(link * 8, 3) if link else None,
                ports=tuple(ports),
            )
        )
    if speed_unknown:
        unknown.append("numa_nodes[*].nics[*].ports[*].speed_gbps")
    return nics, _other_devices(topo, links, node_ids, notes)


def _sysfs_links(facts: HostFacts) -> _SysfsLinks:
    links = _SysfsLinks()
    for dev in facts.netdevs:
        if dev.pci_address:
            links.by_address.setdefault(dev.pci_address.lower(), dev)
            if dev.physfn:
                links.vfs.add(dev.pci_address.lower())
                links.parent[dev.pci_address.lower()] = dev.physfn.lower()
        for vf in dev.vfs:
            links.vfs.add(vf.lower())
            if dev.pci_address:
                links.parent[vf.lower()] = dev.pci_address.lower()
    return links


def _split_functions(
    topo: HwTopology, facts: HostFacts, links: _SysfsLinks, notes: list[str]
) -> tuple[list[HwPciFunction], dict[str, list[str]]]:
    """The network functions that are PFs, and each PF's VF addresses."""
    net = [f for f in topo.pci if is_network_class(f.class_id)]
    vfs = [f for f in net if f.busid in links.vfs or is_known_vf(f.vendor_id, f.device_id)]
    vfs.extend(_vfs_by_absence(net, {f.busid for f in vfs}, notes))
    vf_ids = {f.busid for f in vfs}
    pfs = [f for f in net if f.busid not in vf_ids]
    vf_map = _place_vfs(pfs, vfs, links.parent, notes)
    # VFs sysfs lists but hwloc did not export (hwloc filters may hide them)
    for dev in facts.netdevs:
        if dev.pci_address and dev.vfs:
            listed = vf_map[dev.pci_address.lower()]
            for vf in dev.vfs:
                if vf.lower() not in listed:
                    listed.append(vf.lower())
    return pfs, vf_map


def _home(
    function: HwPciFunction, links: _SysfsLinks, node_ids: list[int], notes: list[str]
) -> int:
    """The NUMA node a device is listed under."""
    dev = links.by_address.get(function.busid)
    if dev is not None and dev.numa_node is not None and dev.numa_node in node_ids:
        return dev.numa_node
    local = [n for n in node_ids if n in function.locality]
    if not local:
        notes.append(f"PCI {function.busid} has no NUMA locality; listed under node {node_ids[0]}")
        return node_ids[0]
    if len(local) > 1:
        notes.append(
            f"PCI {function.busid} is local to NUMA nodes {', '.join(map(str, local))}; "
            f"listed under node {local[0]}"
        )
    return local[0]


def _port(
    function: HwPciFunction,
    facts: HostFacts,
    links: _SysfsLinks,
    vf_map: dict[str, list[str]],
    notes: list[str],
) -> tuple[Port, bool]:
    """The port of one PF, and whether its speed is known."""
    found: NetDevice | None = links.by_address.get(function.busid)
    if found is None:
        found = next((d for d in facts.netdevs if d.name in function.netdevs), None)
    speed = found.speed_mbps / 1000 if found and found.speed_mbps is not None else None
    if len(function.netdevs) > 1:
        notes.append(
            f"PCI {function.busid} carries several interfaces: {', '.join(function.netdevs)}"
        )
    port = Port(
        pci_address=function.busid,
        name=function.netdevs[0] if function.netdevs else (found.name if found else None),
        speed_gbps=speed or 0.0,
        sriov_total_vfs=found.sriov_totalvfs if found else None,
        vfs=tuple(VirtualFunction(pci_address=vf) for vf in sorted(vf_map.get(function.busid, []))),
    )
    return port, speed is not None


def _other_devices(
    topo: HwTopology, links: _SysfsLinks, node_ids: list[int], notes: list[str]
) -> dict[int, list[PciDevice]]:
    others: dict[int, list[PciDevice]] = defaultdict(list)
    for function in topo.pci:
        device_class = _pci_class(function.class_id)
        if device_class is None or is_network_class(function.class_id):
            continue
        others[_home(function, links, node_ids, notes)].append(
            PciDevice.model_validate(
                {
                    "pci_address": function.busid,
                    "class": device_class,
                    "vendor": vendor_name(function.vendor_id, function.vendor_name),
                    "model": function.device_name
                    or f"PCI device {function.vendor_id}:{function.device_id}",
                }
            )
        )
    return others


def _pci_class(class_id: int) -> PciDeviceClass | None:
    base = class_id >> 8
    if base == 0x03:
        return PciDeviceClass.gpu
    if base == 0x12 or class_id == 0x0B40:
        return PciDeviceClass.accelerator
    if base == 0x10:
        return PciDeviceClass.crypto
    return None


def _place_vfs(
    pfs: list[HwPciFunction],
    vfs: list[HwPciFunction],
    sysfs_parent: dict[str, str],
    notes: list[str],
) -> dict[str, list[str]]:
    """PF busid -> VF busids."""
    out: dict[str, list[str]] = defaultdict(list)
    pf_ids = {pf.busid for pf in pfs}
    for vf in vfs:
        parent = sysfs_parent.get(vf.busid)
        if parent is None or parent not in pf_ids:
            family = vendor_family(vf.vendor_id)
            same_bus = [
                pf
                for pf in pfs
                if pf.domain_bus == vf.domain_bus and vendor_family(pf.vendor_id) == family
            ]
            same_slot = [pf for pf in same_bus if pf.slot == vf.slot]
            choice = same_slot or same_bus
            if not choice:
                notes.append(
                    f"VF {vf.busid} ({vf.vendor_id}:{vf.device_id}) has no PF of its vendor on bus "
                    f"{vf.domain_bus}; left out"
                )
                continue
            parent = choice[0].busid
        out[parent].append(vf.busid)
    return out


def _vfs_by_absence(
    net: list[HwPciFunction], known: set[str], notes: list[str]
) -> list[HwPciFunction]:
    """Functions with no OS device at all, next to a PF of their vendor with another device id.

    A PF bound to its driver shows a network OS device; its VFs, unbound on the host, show none
    and carry the vendor's VF device id. A function that is alone on its bus, or has the PF's own
    device id (a second port without a driver), is not taken for a VF.
    """
    out: list[HwPciFunction] = []
    for function in net:
        if function.busid in known or function.osdevs:
            continue
        family = vendor_family(function.vendor_id)
        pf = next(
            (
                other
                for other in net
                if other.netdevs
                and other.busid not in known
                and other.domain_bus == function.domain_bus
                and vendor_family(other.vendor_id) == family
                and other.device_id != function.device_id
            ),
            None,
        )
        if pf is not None:
            out.append(function)
            notes.append(
                f"PCI {function.busid} ({function.vendor_id}:{function.device_id}) taken for a VF "
                f"of {pf.busid}: no OS device, not in the VF table"
            )
    return out
