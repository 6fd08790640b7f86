"""What a VM Configuration holds, as rows the store can make unique (pure functions)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration

PU = "pu"
VF = "vf"
PORT = "port"
PCI = "pci"
CACHE_WAY = "cache_way"


@dataclass(frozen=True, slots=True, order=True)
class Held:
    """One exclusively held resource of a host."""

    host: str
    kind: str
    resource: str


def held_resources(config: VmConfiguration) -> list[Held]:
    """Every PU, VF, dedicated port, PCI device and L3 cache way `config` holds exclusively."""
    held = [Held(config.host, PU, str(pu)) for pu in config.held_cpus]
    for iface in config.interfaces:
        if iface.pci_address is None:
            continue
        if iface.mode == "sriov":
            held.append(Held(config.host, VF, iface.pci_address.lower()))
        elif iface.mode == "dedicated":
            held.append(Held(config.host, PORT, iface.pci_address.lower()))
    held.extend(Held(config.host, PCI, d.pci_address.lower()) for d in config.pci_devices)
    for cs in config.cpu_sets:
        if cs.cache_ways is not None:
            first, domain = cs.cache_ways.first_way, cs.cache_ways.domain
            ways = range(first, first + cs.cache_ways.ways)
            held.extend(Held(config.host, CACHE_WAY, f"{domain}/{way}") for way in ways)
    return held


def hugepages_held(configs: Iterable[VmConfiguration]) -> Counter[tuple[str, int, int]]:
    """Hugepages held per (host, NUMA node, page size in KiB)."""
    pages: Counter[tuple[str, int, int]] = Counter()
    for config in configs:
        for cs in config.cpu_sets:
            if cs.hugepages is not None and cs.hugepages.count:
                pages[(config.host, cs.numa_node, cs.hugepages.size_kib)] += cs.hugepages.count
    return pages


def hugepage_capacity(chd: ComputeHostDescriptor) -> dict[tuple[int, int], int]:
    """Free hugepages the host itself reports, per (NUMA node, page size in KiB)."""
    return {
        (node.id, pool.size_kib): pool.free
        for node in chd.numa_nodes
        for pool in node.memory.hugepages
    }
