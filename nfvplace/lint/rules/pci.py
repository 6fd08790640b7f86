"""PCI rules: addresses well formed and unique (clause 8.1.1.4, annex A), a device's NUMA
affinity with nodes to be near (NFV501-NFV509)."""

from __future__ import annotations

from collections.abc import Iterator

from ...models.base import PCI_ADDRESS_PATTERN
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.loading import PathKey, format_path
from ...models.vmd import VmDescriptor
from ..finding import Severity
from ..findings import Hit, Rule

FAMILY = "pci"

MALFORMED = Rule(
    "NFV501",
    Severity.error,
    FAMILY,
    "A PCI address is not of the form DDDD:BB:DD.F (domain:bus:device.function, hex)",
    "write the full address as lspci -D prints it, e.g. 0000:18:00.0",
    "8.1.1.4",
)
DUPLICATE = Rule(
    "NFV502",
    Severity.error,
    FAMILY,
    "Two ports, VFs or devices have the same PCI address",
    "give each device its own address (addresses compare case-insensitively)",
    "8.1.1.4",
)
VF_IS_PORT = Rule(
    "NFV503",
    Severity.error,
    FAMILY,
    "A configuration gives a VF the same address as its physical function",
    "a VF's pci_address is the VF itself; physical_function names the port",
    "8.1.1.4",
)

AFFINITY_WITHOUT_NODES = Rule(
    "NFV504",
    Severity.warning,
    FAMILY,
    "A PCI device or port asks for NUMA affinity, but the VM has no NUMA node to be near (no "
    "cpu-sets, and its vCPUs float): the affinity is ignored, as Nova ignores it without a guest "
    "NUMA topology",
    "give the VM floating cpu-sets (a NUMA layout), or drop 'numa_affinity'",
    "8.2.2.4",
)

RULES = (MALFORMED, DUPLICATE, VF_IS_PORT, AFFINITY_WITHOUT_NODES)

PATTERN = PCI_ADDRESS_PATTERN


def _check_unique(addresses: list[tuple[PathKey, str]]) -> Iterator[Hit]:
    seen: dict[str, PathKey] = {}
    for path, address in addresses:
        key = address.lower()
        if key in seen:
            yield DUPLICATE.hit(
                (*path, "pci_address"),
                f"PCI address {address} is also used at {format_path(seen[key])}",
            )
        else:
            seen[key] = path


def check_chd(host: ComputeHostDescriptor) -> Iterator[Hit]:
    addresses: list[tuple[PathKey, str]] = []
    for n, node in enumerate(host.numa_nodes):
        for c, nic in enumerate(node.nics):
            for p, port in enumerate(nic.ports):
                path: PathKey = ("numa_nodes", n, "nics", c, "ports", p)
                addresses.append((path, port.pci_address))
                for v, vf in enumerate(port.vfs):
                    addresses.append(((*path, "vfs", v), vf.pci_address))
        for d, device in enumerate(node.pci_devices):
            addresses.append((("numa_nodes", n, "pci_devices", d), device.pci_address))
    yield from _check_unique(addresses)


def check_configuration(config: VmConfiguration) -> Iterator[Hit]:
    addresses: list[tuple[PathKey, str]] = []
    for i, interface in enumerate(config.interfaces):
        if interface.pci_address is not None:
            addresses.append((("interfaces", i), interface.pci_address))
            if (
                interface.physical_function is not None
                and interface.physical_function.lower() == interface.pci_address.lower()
            ):
                yield VF_IS_PORT.hit(
                    ("interfaces", i, "physical_function"),
                    f"interface '{interface.name}' has VF and physical function both "
                    f"{interface.pci_address}",
                )
    for d, device in enumerate(config.pci_devices):
        addresses.append((("pci_devices", d), device.pci_address))
    yield from _check_unique(addresses)


def check_vmd(vm: VmDescriptor) -> Iterator[Hit]:
    if vm.cpu_sets or not vm.cpu_oversubscription:
        return  # a pinned plain VM is one cpu-set on one node
    asked = [("pci_devices", k, d.numa_affinity) for k, d in enumerate(vm.pci_devices)]
    asked += [("interfaces", k, i.numa_affinity) for k, i in enumerate(vm.interfaces)]
    for field, index, affinity in asked:
        if affinity is not None:
            yield AFFINITY_WITHOUT_NODES.hit(
                (field, index, "numa_affinity"),
                f"numa_affinity is {affinity}, and the VM's vCPUs float with no NUMA layout",
            )
