"""Generate the field tables of docs/descriptors/*.md and the rule list of docs/lint-rules.md.

Run `.venv/bin/python docs/gen_fields.py` after changing a model or a lint rule; a test fails when
the pages drift from what this script writes. Each page keeps its hand-written text; only the part
between the GENERATED markers is rewritten.
"""

from __future__ import annotations

import sys
import types
import typing
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from nfvplace.lint import ALL_RULES
from nfvplace.models import ComputeHostDescriptor, VmConfiguration, VmDescriptor, VnfTemplate

DOCS = Path(__file__).resolve().parent
BEGIN = "<!-- BEGIN GENERATED: edit the models or docs/gen_fields.py, then run it -->"
END = "<!-- END GENERATED -->"

PAGES: dict[str, type[BaseModel]] = {
    "descriptors/chd.md": ComputeHostDescriptor,
    "descriptors/vmd.md": VmDescriptor,
    "descriptors/vnf.md": VnfTemplate,
    "descriptors/vm-configuration.md": VmConfiguration,
}

UNITS = {
    "_mib": "MiB",
    "_kib": "KiB",
    "_gib": "GiB",
    "_gbps": "Gbps",
    "_mbps": "Mbps",
    "_mhz": "MHz",
    "_mts": "MT/s",
}
QUANTITY_UNITS = {"MiB", "KiB", "GiB", "Gbps", "Mbps"}

# Clause of NFV-PER 001 per model (class name); "-" where the item is nfvplace's own.
CLAUSES: dict[str, str] = {
    "ComputeHostDescriptor": "8.1",
    "Processor": "8.1.1.1",
    "CacheSizes": "8.1.1.1",
    "TlbSizes": "8.1.1.1",
    "HostMemory": "8.1.1.2",
    "Hypervisor": "8.1.1.3",
    "VSwitch": "8.1.1.3",
    "Kernel": "-",
    "NumaNode": "8.1.1.4",
    "Cpu": "8.1.1.4",
    "NodeMemory": "8.1.1.4",
    "HugepagePool": "8.1.1.4",
    "NormalMemory": "8.1.1.4",
    "Nic": "8.1.1.4",
    "Port": "8.1.1.4",
    "VirtualFunction": "8.1.1.4",
    "PciDevice": "8.1.1.4, annex A",
    "InterNodeLink": "8.1.1.4",
    "Instance": "8.2.2.5",
    "Provenance": "-",
    "TopologyManager": "-",
    "VmDescriptor": "8.2.2.4",
    "ProcessorRequirements": "8.2.2.1",
    "MemoryRequirements": "8.2.2.2",
    "HypervisorRequirements": "8.2.2.3",
    "VSwitchRequirements": "8.2.2.3",
    "CpuSet": "8.2.2.4",
    "Hugepages": "8.2.2.4",
    "Interface": "8.2.2.4",
    "CpuSetBandwidth": "8.2.2.4",
    "Disk": "8.2.2.4",
    "PciDeviceRequest": "8.2.2.4",
    "Impact": "8.2.2.5",
    "Variant": "8.2.2.5",
    "VariantMatch": "8.2.2.5",
    "VnfTemplate": "8.2.1",
    "VnfMember": "8.2.1",
    "VnfLink": "8.2.1",
    "LinkEndpoint": "8.2.1",
    "AntiAffinityGroup": "8.2.2.5",
}
FIELD_CLAUSES: dict[str, str] = {
    "ComputeHostDescriptor.topology_manager": "-",
    "VmDescriptor.processor": "8.2.2.1",
    "VmDescriptor.memory": "8.2.2.2",
    "VmDescriptor.hypervisor": "8.2.2.3",
    "VmDescriptor.impact": "8.2.2.5",
    "VmDescriptor.variants": "8.2.2.5",
    "VmDescriptor.name": "8.2",
    "VmDescriptor.schema_": "-",
    "VmDescriptor.labels": "-",
    "VmDescriptor.description": "-",
    "VmDescriptor.realtime_vcpus": "- (seeds 000, 001)",
    "VmDescriptor.emulator_threads": "- (seeds 000, 003)",
    "VmDescriptor.cpu_thread_policy": "8.2.2.4 (SMT)",
    "ComputeHostDescriptor.kernel": "-",
    "ComputeHostDescriptor.labels": "-",
    "ComputeHostDescriptor.provenance": "-",
    "ComputeHostDescriptor.schema_": "-",
    "ComputeHostDescriptor.instances": "8.2.2.5",
    "ComputeHostDescriptor.numa_distances": "8.1.1.4",
}

# Meanings of fields whose model gives no description, by "Class.field", then by field name.
MEANINGS: dict[str, str] = {
    "ComputeHostDescriptor.processor": "Processor vendor, model, flags, caches and BIOS features",
    "ComputeHostDescriptor.memory": "Installed RAM: type, speed, channels",
    "ComputeHostDescriptor.hypervisor": "Hypervisor type, version, capabilities and vSwitch",
    "ComputeHostDescriptor.kernel": "Host kernel version and command line",
    "ComputeHostDescriptor.numa_nodes": "The resource topology and availability, one entry per NUMA node",
    "ComputeHostDescriptor.interconnect": "Bandwidth between NUMA nodes, total and used (optional)",
    "ComputeHostDescriptor.instances": "VMs running on the host (for per-host instance limits)",
    "ComputeHostDescriptor.provenance": "Where the descriptor came from (live host, hwloc XML, by hand)",
    "Processor.frequency_mhz": "Nominal clock frequency",
    "Processor.cache": "Cache sizes",
    "Processor.tlb": "TLB and IOTLB sizes",
    "CacheSizes.l1d_kib": "L1 data cache per core",
    "CacheSizes.l1i_kib": "L1 instruction cache per core",
    "TlbSizes.entries_4k": "TLB entries for 4 KiB pages",
    "TlbSizes.entries_2m": "TLB entries for 2 MiB pages",
    "TlbSizes.entries_1g": "TLB entries for 1 GiB pages",
    "TlbSizes.iotlb_entries": "IOTLB entries of the IOMMU",
    "HostMemory.total_mib": "Total installed memory",
    "Hypervisor.type": "Hypervisor type",
    "Hypervisor.version": "Hypervisor version (for KVM, the kernel's)",
    "Hypervisor.qemu_version": "QEMU version (KVM hosts)",
    "Hypervisor.libvirt_version": "libvirt version (KVM hosts)",
    "Hypervisor.vswitch": "The host's virtual switch",
    "VSwitch.type": "vSwitch implementation",
    "VSwitch.version": "vSwitch version",
    "VSwitch.mode": "Bridge or NAT mode",
    "VSwitch.bandwidth_used_gbps": "Bandwidth the vSwitch already carries",
    "VSwitch.interfaces_in_use": "Virtual interfaces in use on the vSwitch",
    "Kernel.version": "Kernel release, as `uname -r`",
    "Kernel.cmdline": "Kernel command line (isolcpus, hugepages, nohz_full...)",
    "Kernel.realtime": "PREEMPT_RT kernel",
    "NumaNode.id": "NUMA node id, as the OS numbers it",
    "NumaNode.cpus": "Hardware threads (PUs) of the node",
    "NumaNode.memory": "Memory of the node: total, hugepage pools, normal memory, bandwidth",
    "NumaNode.nics": "NICs attached to the node",
    "NumaNode.pci_devices": "Other PCI devices attached to the node (crypto, accelerators)",
    "Cpu.id": "PU id, as the OS numbers it",
    "Cpu.package": "Socket (package) id",
    "Cpu.state": "free, dedicated (pinned to one VM) or shared (time-shared)",
    "NodeMemory.total_mib": "Total memory of the node; hugepage pools are carved out of it",
    "NodeMemory.hugepages": "Hugepage pools, one per page size",
    "NodeMemory.normal": "Memory not in large pages",
    "NodeMemory.bandwidth_used_gbps": "Memory bandwidth in use",
    "HugepagePool.size_kib": "Page size",
    "HugepagePool.total": "Pages configured",
    "HugepagePool.used": "Pages in use",
    "Nic.vendor": "NIC vendor",
    "Nic.model": "NIC model",
    "Nic.pcie_generation": "PCIe generation (2, 3, 4, 5)",
    "Nic.pcie_lanes": "PCIe lanes (x4, x8, x16)",
    "Nic.ports": "Ports of the NIC",
    "Port.pci_address": "PCI address of the port (its physical function)",
    "Port.speed_gbps": "Port speed",
    "Port.eligible": "Usable by VMs",
    "Port.usage": "free, dedicated (passed through), sriov (shared through VFs) or vswitch",
    "Port.bandwidth_used_gbps": "Bandwidth in use on the port",
    "Port.vswitch_mode": "Bridge or NAT mode, when shared through the vSwitch",
    "Port.vswitch_interfaces_in_use": "Virtual interfaces in use through the vSwitch",
    "VirtualFunction.pci_address": "PCI address of the VF",
    "VirtualFunction.in_use": "Given to a VM",
    "VirtualFunction.owner": "VM holding the VF",
    "VirtualFunction.vlan": "VLAN configured on the VF",
    "PciDevice.pci_address": "PCI address of the device",
    "PciDevice.device_class": "Device class (field name `class`)",
    "PciDevice.vendor": "Device vendor",
    "PciDevice.model": "Device model",
    "PciDevice.eligible": "Usable by VMs",
    "PciDevice.in_use": "Given to a VM",
    "PciDevice.owner": "VM holding the device",
    "InterNodeLink.nodes": "The two NUMA node ids the link joins",
    "InterNodeLink.bandwidth_gbps": "Bandwidth of the link",
    "InterNodeLink.bandwidth_used_gbps": "Bandwidth in use",
    "Instance.id": "Instance id (owner of the resources it holds)",
    "Instance.memory_bandwidth_gbps": "Memory bandwidth charged to the instance",
    "TopologyManager.policy": "none, best-effort, restricted or single-numa-node (the kubelet's)",
    "TopologyManager.scope": "container (each container aligned) or pod (the pod as a whole)",
    "Provenance.source": "live (this host), hwloc-xml (an export) or manual",
    "Provenance.tool": "Tool and version that wrote the descriptor",
    "Provenance.notes": "Free notes about the discovery",
    "VmDescriptor.processor": "Processor the VM was sized on and needs",
    "VmDescriptor.memory": "RAM type, speed and channels for memory-intensive VMs",
    "VmDescriptor.hypervisor": "Hypervisor type, version and capabilities the VM needs",
    "VmDescriptor.memory_oversubscription": "Memory may be oversubscribed (never for hugepages)",
    "VmDescriptor.cpu_thread_policy": "What happens to the other thread of a core given to an unpaired vCPU: isolate (kept idle, default), prefer (others may use it), require (every vCPU must be paired)",
    "VmDescriptor.emulator_threads": "share: emulator threads float over the VM's PUs; isolate: one extra dedicated PU",
    "VmDescriptor.cpu_sets": "The topology: one entry per host NUMA node the VM spans; empty for a cloud VM",
    "VmDescriptor.cpu_set_bandwidth": "Bandwidth needed between pairs of cpu-sets (optional)",
    "VmDescriptor.storage": "Disks",
    "VmDescriptor.pci_devices": "Other PCI devices (crypto) the VM needs",
    "VmDescriptor.impact": "Limits on the VM's impact from/to other VMs on the same host",
    "VmDescriptor.variants": "Other requirement lists for other processors or hypervisors",
    "ProcessorRequirements.min_frequency_mhz": "Minimum clock frequency",
    "ProcessorRequirements.architecture": "Required architecture (x86_64, aarch64)",
    "MemoryRequirements.type": "Required RAM type (DDR4, DDR5)",
    "MemoryRequirements.min_speed_mts": "Minimum RAM speed",
    "MemoryRequirements.min_channels": "Minimum memory channels",
    "HypervisorRequirements.type": "Required hypervisor type",
    "HypervisorRequirements.min_version": "Minimum hypervisor version",
    "HypervisorRequirements.required_capabilities": "Capabilities the host must have enabled",
    "HypervisorRequirements.vswitch": "vSwitch the VM's vswitch interfaces need",
    "CpuSet.id": "Cpu-set id (0, 1, ...)",
    "CpuSet.vcpus": "vCPU ids of the set (guest numbering, unique across sets)",
    "CpuSet.memory_mib": "The cpu-set's whole memory, on the same host node",
    "CpuSet.hugepages": "How much of that memory is backed by large pages",
    "CpuSet.memory_bandwidth_gbps": "Memory bandwidth the set needs (optional)",
    "CpuSet.interfaces": "Interfaces that must sit on the set's node",
    "Hugepages.size": "Page size with a unit",
    "Hugepages.count": "Number of pages (count x size <= memory_mib)",
    "Interface.name": "Interface name, unique within the VM",
    "Interface.mode": "dedicated (a whole port), sriov (one VF) or vswitch (a vSwitch port)",
    "Interface.physical_network": "Network the port or VF must be cabled to",
    "Interface.vlan": "VLAN id",
    "CpuSetBandwidth.cpu_sets": "The two cpu-set ids",
    "CpuSetBandwidth.bandwidth_mbps": "Bandwidth needed between them",
    "Disk.name": "Disk name",
    "Disk.size_gib": "Disk size",
    "Disk.type": "hdd, ssd, nvme or network",
    "Disk.dedicated": "A dedicated (not shared) disk",
    "PciDeviceRequest.device_class": "Device class (field name `class`)",
    "PciDeviceRequest.count": "Number of devices",
    "PciDeviceRequest.vendor": "Required vendor",
    "PciDeviceRequest.model": "Required model",
    "Impact.interconnect_bandwidth_gbps": "Pessimistic inter-socket bandwidth use",
    "Variant.match": "Which hosts the variant is for",
    "Variant.vcpus": "Replaces the VM's vcpus",
    "Variant.memory_mib": "Replaces the VM's memory_mib",
    "Variant.cpu_sets": "Replaces the VM's cpu_sets",
    "Variant.cpu_set_bandwidth": "Replaces the VM's cpu_set_bandwidth",
    "Variant.processor": "Replaces the VM's processor requirements (model, compatible models, flags, frequencies)",
    "Variant.hypervisor": "Replaces the VM's hypervisor requirements",
    "Variant.impact": "Replaces the VM's impact limits",
    "VariantMatch.processor_vendor": "Host processor vendor",
    "VariantMatch.processor_models": "Host processor models (any of)",
    "VariantMatch.min_frequency_mhz": "Minimum host processor frequency",
    "VariantMatch.hypervisor_type": "Host hypervisor type",
    "VariantMatch.hypervisor_min_version": "Minimum host hypervisor version",
    "VnfTemplate.vendor": "VNF vendor",
    "VnfTemplate.version": "VNF version",
    "VnfTemplate.members": "The VMs of the VNF",
    "VnfTemplate.links": "Links between members' interfaces",
    "VnfTemplate.anti_affinity": "Groups of members to keep on different hosts",
    "VnfMember.count": "Instances of the member to place",
    "VnfLink.name": "Link name, unique within the template",
    "VnfLink.endpoints": "Member interfaces the link joins (two or more)",
    "VnfLink.bandwidth_gbps": "Bandwidth the link needs",
    "VnfLink.locality": "any, same_host or different_host",
    "LinkEndpoint.member": "Member name",
    "LinkEndpoint.interface": "Interface name in the member's VM Descriptor",
    "AntiAffinityGroup.members": "Member names",
    "AntiAffinityGroup.scope": "Scope of the rule: host, or numa_node (may share a host, not a node)",
    "VmConfiguration.thread_policy": "Thread policy that was applied",
    "VmConfiguration.cpu_sets": "Where each cpu-set went: node, pins, memory, hugepages",
    "VmConfiguration.shared": "vCPUs floating over shared PUs (cloud VMs)",
    "VmConfiguration.realtime_vcpus": "Realtime vCPUs (from the VM Descriptor)",
    "VmConfiguration.interfaces": "Port or VF given to each interface",
    "VmConfiguration.pci_devices": "PCI devices given to the VM",
    "VmConfiguration.cpu_set_links": "Bandwidth reserved between cpu-sets' nodes",
    "VmConfiguration.memory_bandwidth_gbps": "Memory bandwidth charged to the host",
    "CpuSetPlacement.id": "Cpu-set id of the VM Descriptor",
    "CpuSetPlacement.numa_node": "Host NUMA node",
    "CpuSetPlacement.memory_mib": "Memory on that node",
    "CpuSetPlacement.hugepages": "Hugepages taken from that node's pool",
    "CpuSetPlacement.memory_bandwidth_gbps": "Memory bandwidth charged to the node",
    "HugepageAllocation.size_kib": "Page size",
    "HugepageAllocation.count": "Pages taken",
    "SharedCpus.vcpus": "Number of floating vCPUs",
    "SharedCpus.numa_node": "Node of the shared PUs and memory, if restricted",
    "SharedCpus.memory_mib": "Memory taken from normal memory",
    "SharedCpus.oversubscribed": "Placed on oversubscribed PUs",
    "InterfacePlacement.name": "Interface name from the VM Descriptor",
    "InterfacePlacement.mode": "dedicated, sriov or vswitch",
    "InterfacePlacement.numa_node": "Host NUMA node of the port or VF",
    "InterfacePlacement.bandwidth_gbps": "Bandwidth reserved on the port",
    "PciDeviceAllocation.pci_address": "PCI address of the device",
    "PciDeviceAllocation.device_class": "Device class (field name `class`)",
    "PciDeviceAllocation.numa_node": "Host NUMA node of the device",
    "PciDeviceAllocation.cpu_set": "Cpu-set it belongs to",
    "CpuSetLink.cpu_sets": "The two cpu-set ids",
    "CpuSetLink.numa_nodes": "Their host NUMA nodes",
    "CpuSetLink.bandwidth_mbps": "Bandwidth reserved between them",
    "CacheWays.first_way": "First way of the range (0: the lowest bit of the capacity bitmask)",
    "CacheWays.ways": "Ways in the range (contiguous)",
    "CacheWaysPlacement.first_way": "First way of the range given to the cpu-set",
    "CacheWaysPlacement.ways": "Ways given to the cpu-set (contiguous)",
}
CURRENT_ROOT: list[type[BaseModel] | None] = [None]
MEANINGS.update(
    {
        "ComputeHostDescriptor.id": "Unique host id",
        "VmDescriptor.name": "Name of the VM Descriptor (VM Configurations refer to it)",
        "Variant.name": "Variant name, unique within the descriptor",
        "VnfTemplate.name": "Name of the VNF",
        "VmConfiguration.host": "Id of the host (its CHD `id`)",
    }
)
GENERIC: dict[str, str] = {
    "schema_": "Document kind and version (field name `schema`)",
    "description": "Free text",
    "labels": "Free key/value labels",
    "name": "Name",
    "id": "Identifier",
}


def meaning(model: type[BaseModel], name: str, info: FieldInfo) -> str:
    text = MEANINGS.get(f"{model.__name__}.{name}") or info.description or GENERIC.get(name)
    if not text:
        raise KeyError(f"no meaning for {model.__name__}.{name}: add it to MEANINGS")
    return text


def _strip_optional(annotation: Any) -> tuple[Any, bool]:
    annotation = _plain(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _plain(args[0]), True
    return annotation, False


def _plain(annotation: Any) -> Any:
    """`Annotated[int, ...]` -> `int`."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def type_text(annotation: Any, field_name: str = "") -> str:
    annotation, _ = _strip_optional(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " or ".join(f"`{a}`" for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"list of {type_text(args[0])}"
        inner = {type_text(a) for a in args}
        return f"pair of {inner.pop()}" if len(args) == 2 and len(inner) == 1 else "tuple"
    if origin is dict:
        return f"map of {type_text(args[0])} to {type_text(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        for page, root in PAGES.items():
            if root is annotation and root is not CURRENT_ROOT[0]:
                return f"[{annotation.__name__}](../{page})"
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return "one of " + ", ".join(f"`{m.value}`" for m in annotation)
    annotation = _plain(annotation)
    base = {int: "integer", float: "number", str: "string", bool: "boolean"}.get(
        annotation, str(annotation)
    )
    for suffix, unit in UNITS.items():
        if field_name.endswith(suffix):
            return f"{base}, {unit}" + (
                " (or a string with a unit)" if unit in QUANTITY_UNITS else ""
            )
    if field_name == "size":
        return "string with a unit, e.g. `1GiB`"
    return base


def default_text(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        factory = info.default_factory
        return (
            "defaults" if isinstance(factory, type) and issubclass(factory, BaseModel) else "`{}`"
        )
    value = info.default
    if value is PydanticUndefined or value is None:
        return "unset"
    if isinstance(value, Enum):
        return f"`{value.value}`"
    if value == ():
        return "`[]`"
    if isinstance(value, BaseModel):
        return "defaults"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _submodels(annotation: Any) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.append(annotation)
    for arg in typing.get_args(annotation):
        found.extend(_submodels(arg))
    return found


def models_in(root: type[BaseModel]) -> list[tuple[type[BaseModel], str]]:
    """Every model reachable from `root`, breadth first, with the path where it first appears."""
    order: list[tuple[type[BaseModel], str]] = [(root, "")]
    seen = {root}
    index = 0
    while index < len(order):
        model, path = order[index]
        index += 1
        for name, info in model.model_fields.items():
            key = info.alias or name
            for sub in _submodels(info.annotation):
                if sub not in seen and not (sub in PAGES.values() and sub is not root):
                    seen.add(sub)
                    many = typing.get_origin(_strip_optional(info.annotation)[0]) is tuple
                    order.append((sub, f"{path}.{key}{'[]' if many else ''}".lstrip(".")))
    return order


def field_tables(root: type[BaseModel]) -> str:
    CURRENT_ROOT[0] = root
    out = []
    for model, path in models_in(root):
        clause = CLAUSES.get(model.__name__, "-")
        where = f" (`{path}`)" if path else " (the document)"
        out.append(
            f"### {model.__name__}\n\n{model.__name__}{where}, NFV-PER 001 clause {clause}.\n"
        )
        out.append("| field | type / unit | default | meaning | clause |")
        out.append("|---|---|---|---|---|")
        for name, info in model.model_fields.items():
            key = info.alias or name
            field_clause = FIELD_CLAUSES.get(f"{model.__name__}.{name}", clause)
            text = meaning(model, name, info).replace("|", "\\|")
            out.append(
                f"| `{key}` | {type_text(info.annotation, name)} | {default_text(info)} | {text} | {field_clause} |"
            )
        out.append("")
    return "\n".join(out)


def rule_tables() -> str:
    out = []
    families: dict[str, list[Any]] = {}
    for rule in ALL_RULES:
        families.setdefault(rule.family, []).append(rule)
    for family, rules in families.items():
        out.append(f"## {family}\n")
        out.append("| id | severity | meaning | fix | clause |")
        out.append("|---|---|---|---|---|")
        for rule in rules:
            out.append(
                f'| <a id="{rule.id.lower()}"></a>`{rule.id}` | {rule.severity.value} | {rule.title} | {rule.fix} | {rule.clause or "-"} |'
            )
        out.append("")
    return "\n".join(out)


def generated(page: str) -> str:
    if page == "lint-rules.md":
        return rule_tables()
    return field_tables(PAGES[page])


def render(page: str, current: str) -> str:
    """The page with its generated part replaced (markers appended if missing)."""
    body = f"{BEGIN}\n\n{generated(page)}\n{END}"
    if BEGIN in current and END in current:
        head, rest = current.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        return head + body + tail
    return current.rstrip("\n") + "\n\n" + body + "\n"


def main() -> int:
    for page in [*PAGES, "lint-rules.md"]:
        target = DOCS / page
        current = target.read_text(encoding="utf-8") if target.exists() else f"# {page}\n"
        updated = render(page, current)
        if updated != current:
            target.write_text(updated, encoding="utf-8")
            print(f"wrote {target.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
