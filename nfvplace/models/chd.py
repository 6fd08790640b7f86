"""Compute Host Descriptor (`schema: nfvplace/chd/v1`), NFV-PER 001 clause 8.1.

What a host has (capabilities, topology) and what is still free (availability). Every item of
clause 8.1 has a field here; `docs/descriptors/chd.md` documents them one by one.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Literal, cast

from pydantic import Field, model_validator

from .. import hooks
from .base import (
    Identifier,
    Model,
    NonNegativeFloat,
    NonNegativeInt,
    PciAddress,
    Ratio,
    Text,
)
from .cache import CacheAllocation
from .capabilities import HypervisorCapability, HypervisorType, ProcessorFeature, VSwitchType
from .units import Gbps, KiB, MiB

CHD_SCHEMA: Final = "nfvplace/chd/v1"


class CpuState(StrEnum):
    free = "free"
    dedicated = "dedicated"  # pinned to one VM (owner)
    shared = "shared"  # time-shared by several VMs, within oversubscription_ratio


class PortUsage(StrEnum):
    free = "free"
    dedicated = "dedicated"  # passed through whole to one VM
    sriov = "sriov"  # shared through its SR-IOV virtual functions
    vswitch = "vswitch"  # shared through the host's vSwitch


class VSwitchMode(StrEnum):
    bridge = "bridge"
    nat = "nat"


# --- processor (8.1.1.1) -----------------------------------------------------------------------


class CacheSizes(Model):
    """Processor and core cache sizes (per core for L1/L2, per package for L3)."""

    l1d_kib: KiB | None = None
    l1i_kib: KiB | None = None
    l2_kib: KiB | None = Field(None, description="Core cache size")
    l3_kib: KiB | None = Field(None, description="Processor (last-level) cache size")


class TlbSizes(Model):
    """TLB and IOTLB entries per page size (clause 8.1.1.1's quantitative items)."""

    entries_4k: NonNegativeInt | None = None
    entries_2m: NonNegativeInt | None = None
    entries_1g: NonNegativeInt | None = None
    iotlb_entries: NonNegativeInt | None = None


class Processor(Model):
    vendor: Text = Field(description="As in /proc/cpuinfo vendor_id, e.g. GenuineIntel")
    model: Text = Field(description="As in /proc/cpuinfo model name")
    architecture: Text | None = Field(None, description="e.g. x86_64, aarch64")
    frequency_mhz: NonNegativeFloat | None = None
    packages: NonNegativeInt | None = Field(None, description="Number of sockets")
    flags: tuple[Text, ...] = Field((), description="CPU flags as in /proc/cpuinfo")
    cache: CacheSizes | None = None
    tlb: TlbSizes | None = None
    features: tuple[ProcessorFeature, ...] = Field(
        (), description="Hardware features present and enabled in the BIOS"
    )
    disabled_features: tuple[ProcessorFeature, ...] = Field(
        (), description="Hardware features present but disabled in the BIOS"
    )


# --- memory (8.1.1.2) --------------------------------------------------------------------------


class HostMemory(Model):
    """Installed RAM: what matters to memory-intensive VMs."""

    type: Text | None = Field(None, description="e.g. DDR4, DDR5")
    speed_mts: NonNegativeInt | None = Field(None, description="Transfer rate in MT/s")
    channels: NonNegativeInt | None = Field(None, description="Memory channels per package")
    total_mib: MiB | None = None


# --- hypervisor (8.1.1.3) ----------------------------------------------------------------------


class VSwitch(Model):
    type: VSwitchType = VSwitchType.none
    version: Text | None = None
    accelerated: bool = Field(False, description="Software-accelerated data plane (e.g. DPDK)")
    mode: VSwitchMode = VSwitchMode.bridge
    bandwidth_gbps: Gbps | None = Field(None, description="Throughput the vSwitch can carry")
    bandwidth_used_gbps: Gbps = 0.0
    interfaces_in_use: NonNegativeInt = 0
    pmd_cpus: tuple[NonNegativeInt, ...] = Field(
        (), description="PUs running the vSwitch's poll-mode threads"
    )


class Hypervisor(Model):
    type: HypervisorType
    version: Text | None = None
    qemu_version: Text | None = None
    libvirt_version: Text | None = None
    capabilities: tuple[HypervisorCapability, ...] = Field(
        (), description="Capabilities present and enabled"
    )
    disabled_capabilities: tuple[HypervisorCapability, ...] = Field(
        (), description="Capabilities present but not enabled (BIOS or configuration)"
    )
    vswitch: VSwitch | None = None


class Kernel(Model):
    version: Text | None = None
    cmdline: Text | None = None
    realtime: bool | None = None


# --- resource topology and availability (8.1.1.4) ---------------------------------------------


class Cpu(Model):
    """One hardware thread (PU)."""

    id: NonNegativeInt
    core: NonNegativeInt = Field(description="Physical core id (unique within the host)")
    package: NonNegativeInt | None = None
    siblings: tuple[NonNegativeInt, ...] = Field(
        description="Every PU of the same physical core, this one included"
    )
    eligible: bool = Field(True, description="Usable by VMs (not host-reserved or isolated away)")
    state: CpuState = CpuState.free
    owner: Text | None = Field(None, description="VM holding a dedicated PU")
    oversubscription_ratio: Ratio | None = Field(
        None, description="Shared PU: vCPUs it may carry per hardware thread"
    )
    usage_ratio: Ratio | None = Field(
        None, description="Shared PU: fraction of oversubscription_ratio in use (0..1)"
    )


class HugepagePool(Model):
    size_kib: KiB = Field(gt=0)
    total: NonNegativeInt
    used: NonNegativeInt = 0

    @property
    def free(self) -> int:
        return max(self.total - self.used, 0)

    @property
    def total_mib(self) -> int:
        return self.total * self.size_kib // 1024


class NormalMemory(Model):
    """Memory not in large pages."""

    oversubscription_ratio: Ratio = Field(
        1.0, description="1.0: strictly assigned; above 1: may be oversubscribed by that factor"
    )
    reserved_mib: MiB = Field(0, description="Kept for the host OS and hypervisor")
    used_mib: MiB = Field(0, description="Assigned to VMs")


class NodeMemory(Model):
    total_mib: MiB
    hugepages: tuple[HugepagePool, ...] = ()
    # a factory, not `NormalMemory()`: an instance here would build the validators at import time,
    # a twentieth of a second of every command's start-up; the schema keeps showing the default
    normal: NormalMemory = Field(
        default_factory=NormalMemory,
        json_schema_extra={
            "default": {"oversubscription_ratio": 1.0, "reserved_mib": 0, "used_mib": 0}
        },
    )
    bandwidth_gbps: Gbps | None = Field(None, description="Memory bandwidth of the node")
    bandwidth_used_gbps: Gbps = 0.0

    @property
    def hugepage_mib(self) -> int:
        return sum(pool.total_mib for pool in self.hugepages)

    @property
    def normal_total_mib(self) -> int:
        """Memory outside hugepage pools (the pools are carved out of `total_mib`)."""
        return max(self.total_mib - self.hugepage_mib, 0)

    @property
    def normal_free_mib(self) -> int:
        capacity = int(
            (self.normal_total_mib - self.normal.reserved_mib) * self.normal.oversubscription_ratio
        )
        return max(capacity - self.normal.used_mib, 0)

    def pool(self, size_kib: int) -> HugepagePool | None:
        return next((p for p in self.hugepages if p.size_kib == size_kib), None)


class VirtualFunction(Model):
    pci_address: PciAddress
    in_use: bool = False
    owner: Text | None = None
    rate_gbps: Gbps | None = Field(None, description="Configured pacing (max TX rate)")
    vlan: NonNegativeInt | None = None


class Port(Model):
    pci_address: PciAddress
    name: Text | None = Field(None, description="Kernel interface name, e.g. ens1f0")
    speed_gbps: Gbps
    eligible: bool = True
    usage: PortUsage = PortUsage.free
    owner: Text | None = Field(None, description="VM holding a dedicated port")
    bandwidth_used_gbps: Gbps = 0.0
    sriov_total_vfs: NonNegativeInt | None = Field(None, description="VFs the device supports")
    vfs: tuple[VirtualFunction, ...] = Field((), description="Configured SR-IOV VFs")
    vswitch_mode: VSwitchMode | None = None
    vswitch_interfaces_in_use: NonNegativeInt = 0
    physical_network: Text | None = Field(None, description="Network the port is cabled to")

    @property
    def bandwidth_free_gbps(self) -> float:
        return max(self.speed_gbps - self.bandwidth_used_gbps, 0.0)


class Nic(Model):
    vendor: Text
    model: Text
    vendor_id: Text | None = Field(None, description="PCI vendor id, e.g. 8086")
    device_id: Text | None = Field(None, description="PCI device id, e.g. 1583")
    pcie_generation: NonNegativeInt | None = None
    pcie_lanes: NonNegativeInt | None = None
    pcie_bandwidth_gbps: Gbps | None = Field(None, description="Usable PCIe link bandwidth")
    ports: tuple[Port, ...] = ()


class PciDeviceClass(StrEnum):
    crypto = "crypto"
    accelerator = "accelerator"
    gpu = "gpu"
    fpga = "fpga"
    storage = "storage"
    other = "other"


class PciDevice(Model):
    """A PCI device other than a NIC port, e.g. a crypto accelerator (annex A)."""

    pci_address: PciAddress
    device_class: PciDeviceClass = Field(alias="class")
    vendor: Text | None = None
    model: Text | None = None
    eligible: bool = True
    in_use: bool = False
    owner: Text | None = None


class NumaNode(Model):
    id: NonNegativeInt
    cpus: tuple[Cpu, ...] = ()
    memory: NodeMemory
    nics: tuple[Nic, ...] = ()
    pci_devices: tuple[PciDevice, ...] = ()

    @property
    def ports(self) -> tuple[Port, ...]:
        return tuple(port for nic in self.nics for port in nic.ports)


class InterNodeLink(Model):
    """Bandwidth between two NUMA nodes (optional in clause 8.1.1.4)."""

    nodes: tuple[NonNegativeInt, NonNegativeInt]
    bandwidth_gbps: Gbps
    bandwidth_used_gbps: Gbps = 0.0


class Instance(Model):
    """A VM running on the host, for per-host instance limits (clause 8.2.2.5)."""

    id: Text
    vm: Text = Field(description="Name of the VM Descriptor it was placed from")
    memory_bandwidth_gbps: Gbps = 0.0


class TopologyManagerPolicy(StrEnum):
    """The kubelet's `topologyManagerPolicy`: how NUMA alignment is decided at pod admission."""

    none = "none"
    best_effort = "best-effort"
    restricted = "restricted"
    single_numa_node = "single-numa-node"


class TopologyManagerScope(StrEnum):
    """The kubelet's `topologyManagerScope`: align each container, or the pod as a whole."""

    container = "container"
    pod = "pod"


class TopologyManager(Model):
    """A Kubernetes node's Topology Manager: the kubelet, not the scheduler, decides NUMA alignment
    there, after the node is chosen (read from NodeResourceTopology attributes)."""

    policy: TopologyManagerPolicy = TopologyManagerPolicy.none
    scope: TopologyManagerScope = TopologyManagerScope.container
    prefer_closest_numa_nodes: bool = Field(
        False, description="The `prefer-closest-numa-nodes` policy option"
    )


class Provenance(Model):
    """Where the descriptor came from, and what its source could not tell."""

    source: Literal["live", "hwloc-xml", "manual"] = "manual"
    tool: Text | None = None
    unknown: tuple[Text, ...] = Field((), description="Fields the source could not determine")
    notes: tuple[Text, ...] = ()


class ComputeHostDescriptor(Model):
    schema_: Literal["nfvplace/chd/v1"] = Field(CHD_SCHEMA, alias="schema")
    id: Identifier
    processor: Processor
    memory: HostMemory | None = None
    hypervisor: Hypervisor | None = None
    kernel: Kernel | None = None
    numa_nodes: tuple[NumaNode, ...] = Field(min_length=1)
    numa_distances: tuple[tuple[NonNegativeInt, ...], ...] | None = Field(
        None, description="Relative NUMA distances (ACPI SLIT), rows and columns by node position"
    )
    interconnect: tuple[InterNodeLink, ...] = ()
    instances: tuple[Instance, ...] = ()
    cache_allocation: CacheAllocation | None = Field(
        None, description="L3 cache ways that can be given out (Intel RDT CAT)"
    )
    labels: dict[Text, Text] = Field(default_factory=dict)
    topology_manager: TopologyManager | None = Field(
        None, description="Kubernetes nodes: the kubelet's Topology Manager policy and scope"
    )
    provenance: Provenance | None = None

    @model_validator(mode="after")
    def _node_ids_unique(self) -> ComputeHostDescriptor:
        ids = [node.id for node in self.numa_nodes]
        if len(ids) != len(set(ids)):
            raise ValueError(f"numa_nodes ids must be unique, got {ids}")
        return self

    def node(self, node_id: int) -> NumaNode:
        for node in self.numa_nodes:
            if node.id == node_id:
                return node
        raise KeyError(f"host {self.id} has no NUMA node {node_id}")

    @property
    def cpus(self) -> tuple[Cpu, ...]:
        return tuple(cpu for node in self.numa_nodes for cpu in node.cpus)

    def to_networkx(self) -> Any:
        """The topology as a `networkx.Graph` (see `nfvplace.topology_graph`)."""
        return hooks.lent(hooks.HOST_GRAPH)(self)

    def _repr_svg_(self) -> str:
        """The host drawn as lstopo would, in notebooks (see `nfvplace.visual.host_svg`)."""
        return cast(str, hooks.lent(hooks.HOST_SVG)(self))
