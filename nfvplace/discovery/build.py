"""Turning a neutral topology (plus optional live facts) into a Compute Host Descriptor.

Pure: no I/O. The rules, all documented in `docs/discovery.md`:

- every PU is kept; a PU outside the root's allowed cpuset (cgroup-restricted export) or offline is
  `eligible: false`; when the host isolates PUs for guests (`isolcpus`, `nohz_full`, cpuset
  partitions) only the isolated ones are eligible, the others being the host's housekeeping PUs;
- a core's `siblings` are the PUs of the same hwloc Core; a PU with no Core object is its own core;
- a node's hugepage pools are its page sizes above the base (smallest) page size;
- a NIC is a PCI function of class 02xx or 0c06; functions sharing domain:bus:device and ids form one
  NIC; a VF (sysfs `physfn`/`virtfn*`, else the vendor:device table in `pci_ids`) is attached to the
  PF of the same vendor family on the same bus (the same slot first);
- a NIC sits under the first NUMA node of its hwloc locality; a wider locality is said in
  `provenance.notes`;
- what the source cannot tell is listed in `provenance.unknown`, never guessed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from pydantic import ValidationError

from .. import errors
from ..errors import DiscoveryError
from ..models.chd import (
    CacheSizes,
    ComputeHostDescriptor,
    Cpu,
    HostMemory,
    HugepagePool,
    Kernel,
    Nic,
    NodeMemory,
    NumaNode,
    PciDevice,
    PciDeviceClass,
    Port,
    Processor,
    Provenance,
    VirtualFunction,
)
from .facts import HostFacts, NetDevice
from .hwtopo import HwPciFunction, HwTopology
from .pci_ids import is_known_vf, is_network_class, vendor_family, vendor_name

MIB = 1024 * 1024
_GHZ = re.compile(r"@\s*([0-9]+(?:\.[0-9]+)?)\s*GHz", re.IGNORECASE)


def _vendor_from_model(model: str | None) -> str | None:
    if not model:
        return None
    lowered = model.lower()
    if "intel" in lowered:
        return "GenuineIntel"
    if "amd" in lowered:
        return "AuthenticAMD"
    return None


def processor_from_topology(topo: HwTopology, unknown: list[str]) -> Processor:
    """The processor as far as an hwloc export tells it (no flags: those come from cpuinfo)."""
    model = topo.info.get("CPUModel")
    vendor = topo.info.get("CPUVendor") or _vendor_from_model(model)
    if vendor is None:
        unknown.append("processor.vendor")
    if model is None:
        unknown.append("processor.model")
    frequency: float | None = None
    match = _GHZ.search(model or "")
    if match:
        frequency = float(match.group(1)) * 1000
    else:
        unknown.append("processor.frequency_mhz")
    unknown.append("processor.flags")
    cache = {(c.level, c.kind): c.size_bytes // 1024 for c in topo.caches}
    return Processor(
        vendor=vendor or "unknown",
        model=model or "unknown",
        architecture=topo.info.get("Architecture"),
        frequency_mhz=frequency,
        packages=len(topo.packages) or None,
        cache=CacheSizes(
            l1d_kib=cache.get((1, "data")),
            l1i_kib=cache.get((1, "instruction")),
            l2_kib=cache.get((2, "unified")),
            l3_kib=cache.get((3, "unified")),
        )
        if cache
        else None,
    )


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


def _nics_by_node(
    topo: HwTopology,
    facts: HostFacts,
    node_ids: list[int],
    unknown: list[str],
    notes: list[str],
) -> tuple[dict[int, list[Nic]], dict[int, list[PciDevice]]]:
    by_address: dict[str, NetDevice] = {}
    sysfs_parent: dict[str, str] = {}
    sysfs_vfs: set[str] = set()
    for dev in facts.netdevs:
        if dev.pci_address:
            by_address.setdefault(dev.pci_address.lower(), dev)
            if dev.physfn:
                sysfs_vfs.add(dev.pci_address.lower())
                sysfs_parent[dev.pci_address.lower()] = dev.physfn.lower()
        for vf in dev.vfs:
            sysfs_vfs.add(vf.lower())
            if dev.pci_address:
                sysfs_parent[vf.lower()] = dev.pci_address.lower()

    net = [f for f in topo.pci if is_network_class(f.class_id)]
    vfs = [f for f in net if f.busid in sysfs_vfs or is_known_vf(f.vendor_id, f.device_id)]
    vfs.extend(_vfs_by_absence(net, {f.busid for f in vfs}, notes))
    vf_ids = {f.busid for f in vfs}
    pfs = [f for f in net if f.busid not in vf_ids]
    vf_map = _place_vfs(pfs, vfs, sysfs_parent, notes)
    # VFs sysfs lists but hwloc did not export (hwloc filters may hide them)
    for dev in facts.netdevs:
        if dev.pci_address and dev.vfs:
            listed = vf_map[dev.pci_address.lower()]
            for vf in dev.vfs:
                if vf.lower() not in listed:
                    listed.append(vf.lower())

    def home(function: HwPciFunction) -> int:
        dev = by_address.get(function.busid)
        if dev is not None and dev.numa_node is not None and dev.numa_node in node_ids:
            return dev.numa_node
        local = [n for n in node_ids if n in function.locality]
        if not local:
            notes.append(
                f"PCI {function.busid} has no NUMA locality; listed under node {node_ids[0]}"
            )
            return node_ids[0]
        if len(local) > 1:
            notes.append(
                f"PCI {function.busid} is local to NUMA nodes {', '.join(map(str, local))}; "
                f"listed under node {local[0]}"
            )
        return local[0]

    groups: dict[tuple[str, str, str], list[HwPciFunction]] = defaultdict(list)
    for pf in pfs:
        groups[(pf.slot, pf.vendor_id, pf.device_id)].append(pf)
    nics: dict[int, list[Nic]] = defaultdict(list)
    speed_unknown = False
    for (_, vendor_id, device_id), functions in sorted(groups.items()):
        functions.sort(key=lambda f: f.busid)
        ports: list[Port] = []
        for function in functions:
            found: NetDevice | None = by_address.get(function.busid)
            if found is None:
                found = next((d for d in facts.netdevs if d.name in function.netdevs), None)
            speed = found.speed_mbps / 1000 if found and found.speed_mbps is not None else None
            if speed is None:
                speed_unknown = True
            if len(function.netdevs) > 1:
                notes.append(
                    f"PCI {function.busid} carries several interfaces: {', '.join(function.netdevs)}"
                )
            ports.append(
                Port(
                    pci_address=function.busid,
                    name=function.netdevs[0]
                    if function.netdevs
                    else (found.name if found else None),
                    speed_gbps=speed or 0.0,
                    sriov_total_vfs=found.sriov_totalvfs if found else None,
                    vfs=tuple(
                        VirtualFunction(pci_address=vf)
                        for vf in sorted(vf_map.get(function.busid, []))
                    ),
                )
            )
        first = functions[0]
        link = first.link_gbytes_s
        nics[home(first)].append(
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

    others: dict[int, list[PciDevice]] = defaultdict(list)
    for function in topo.pci:
        device_class = _pci_class(function.class_id)
        if device_class is None or is_network_class(function.class_id):
            continue
        others[home(function)].append(
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
    return nics, others


def _hugepages(
    topo: HwTopology, facts: HostFacts, node_id: int, unknown: set[str]
) -> tuple[HugepagePool, ...]:
    if facts.hugepages is not None and node_id in facts.hugepages:
        return tuple(
            HugepagePool(size_kib=size, total=total, used=max(total - free, 0))
            for size, (total, free) in sorted(facts.hugepages[node_id].items())
        )
    node = next(n for n in topo.nodes if n.os_index == node_id)
    sizes = [size for size, _ in node.page_types] or list(topo.page_sizes)
    if not sizes:
        unknown.add("numa_nodes[*].memory.hugepages")
        return ()
    base = min(sizes)
    counts = dict(node.page_types)
    pools = []
    for size in sorted(set(sizes)):
        if size == base:
            continue
        if size not in counts:
            unknown.add("numa_nodes[*].memory.hugepages[*].total")
        pools.append(HugepagePool(size_kib=size // 1024, total=counts.get(size, 0)))
    if pools:
        unknown.add("numa_nodes[*].memory.hugepages[*].used")
    return tuple(pools)


def _distances(
    topo: HwTopology, facts: HostFacts, node_ids: list[int]
) -> tuple[tuple[int, ...], ...] | None:
    if facts.distances is not None and set(facts.distances) == set(node_ids):
        rows = [facts.distances[n] for n in node_ids]
        if all(len(row) == len(node_ids) for row in rows):
            return tuple(tuple(row) for row in rows)
    return topo.distances


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def build_chd(
    topo: HwTopology,
    host_id: str,
    facts: HostFacts | None = None,
    *,
    source: str = "hwloc-xml",
    tool: str | None = None,
) -> ComputeHostDescriptor:
    """The CHD of a topology; `facts` adds what a live host tells beyond hwloc.

    Raises DiscoveryError if the values cannot make a valid CHD (e.g. an invalid host id).
    """
    try:
        return _build(topo, host_id, facts, source=source, tool=tool)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            for err in exc.errors(include_url=False)[:5]
        )
        raise DiscoveryError(
            errors.DISCOVERY_FAILED, f"the topology does not make a valid CHD: {problems}"
        ) from exc


def _build(
    topo: HwTopology,
    host_id: str,
    facts: HostFacts | None = None,
    *,
    source: str = "hwloc-xml",
    tool: str | None = None,
) -> ComputeHostDescriptor:
    facts = facts or HostFacts()
    unknown: list[str] = list(facts.unknown)
    notes: list[str] = list(facts.notes)
    node_ids = [n.os_index for n in topo.nodes]

    pus_by_core: dict[int, list[int]] = defaultdict(list)
    for pu in topo.pus:
        pus_by_core[pu.core].append(pu.os_index)
    cpus: dict[int, list[Cpu]] = defaultdict(list)
    homeless = [pu.os_index for pu in topo.pus if pu.node is None or pu.node not in node_ids]
    if homeless:
        notes.append(
            f"PUs {homeless} have no NUMA node in the source; listed under node {node_ids[0]}"
        )
    disallowed = [pu.os_index for pu in topo.pus if not pu.allowed]
    if disallowed:
        notes.append(
            f"{len(disallowed)} PUs are outside the allowed cpuset (cgroup or offline) and "
            "marked eligible: false"
        )
    for pu in topo.pus:
        eligible = pu.allowed and pu.os_index not in facts.offline
        if facts.isolated is not None:
            eligible = eligible and pu.os_index in facts.isolated
        node = pu.node if pu.node in node_ids else node_ids[0]
        assert node is not None
        cpus[node].append(
            Cpu(
                id=pu.os_index,
                core=pu.core,
                package=pu.package,
                siblings=tuple(sorted(pus_by_core[pu.core])),
                eligible=eligible,
            )
        )
    if facts.isolated is not None:
        notes.append(
            "PUs not isolated for guests (isolcpus/nohz_full/cpuset) are host housekeeping PUs "
            "and marked eligible: false"
        )

    nics, others = _nics_by_node(topo, facts, node_ids, unknown, notes)
    unknown_set: set[str] = set()
    nodes: list[NumaNode] = []
    for hw_node in topo.nodes:
        if hw_node.memory_bytes is None:
            unknown_set.add("numa_nodes[*].memory.total_mib")
        if not hw_node.allowed:
            notes.append(f"NUMA node {hw_node.os_index} is outside the allowed nodeset")
        nodes.append(
            NumaNode(
                id=hw_node.os_index,
                cpus=tuple(sorted(cpus.get(hw_node.os_index, []), key=lambda c: c.id)),
                memory=NodeMemory(
                    total_mib=(hw_node.memory_bytes or 0) // MIB,
                    hugepages=_hugepages(topo, facts, hw_node.os_index, unknown_set),
                ),
                nics=tuple(nics.get(hw_node.os_index, [])),
                pci_devices=tuple(others.get(hw_node.os_index, [])),
            )
        )
    unknown.extend(sorted(unknown_set))

    processor = facts.processor or processor_from_topology(topo, unknown)
    if facts.processor is not None and processor.packages is None:
        processor = processor.model_copy(update={"packages": len(topo.packages) or None})
    total_bytes = sum(n.memory_bytes or 0 for n in topo.nodes)
    distances = _distances(topo, facts, node_ids)
    if distances is None and len(node_ids) > 1:
        unknown.append("numa_distances")
    if facts.hypervisor is None:
        unknown.append("hypervisor")
    kernel = facts.kernel
    if kernel is None and topo.info.get("OSRelease"):
        kernel = Kernel(version=topo.info["OSRelease"])
        unknown.append("kernel.cmdline")
    if kernel is None:
        unknown.append("kernel")
    return ComputeHostDescriptor(
        id=host_id,
        processor=processor,
        memory=HostMemory(total_mib=total_bytes // MIB) if total_bytes else None,
        hypervisor=facts.hypervisor,
        kernel=kernel,
        numa_nodes=tuple(nodes),
        numa_distances=distances,
        labels=dict(facts.labels),
        provenance=Provenance(
            source="live" if source == "live" else "hwloc-xml",
            tool=tool,
            unknown=_dedupe(unknown),
            notes=_dedupe(notes),
        ),
    )
