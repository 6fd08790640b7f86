"""VM Descriptor (`schema: nfvplace/vmd/v1`), NFV-PER 001 clause 8.2.

What one VM needs: processor, memory and hypervisor requirements, the number of resources, the
cpu-set topology of clause 8.2.2.4, its impact limits (8.2.2.5), and optional variants that change
the requirements for particular processors or hypervisors (8.2.2.5, last paragraph).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, Literal

from pydantic import Field, model_validator

from .base import (
    MAX_VCPUS,
    Identifier,
    Model,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveInt,
    Text,
    VcpuCount,
    VcpuId,
)
from .capabilities import CAPABILITY_SETS, CapabilitySet, HypervisorCapability, HypervisorType
from .chd import PciDeviceClass
from .units import Gbps, GiB, KiB, Mbps, MiB, PageSize

VMD_SCHEMA: Final = "nfvplace/vmd/v1"


class InterfaceMode(StrEnum):
    dedicated = "dedicated"  # a whole physical port (PCI passthrough)
    sriov = "sriov"  # one SR-IOV virtual function
    vswitch = "vswitch"  # a virtual port on the host's vSwitch


class ThreadPolicy(StrEnum):
    """What happens to the other thread of a core given to an unpaired vCPU.

    Comparable to Nova's `hw:cpu_thread_policy`: `isolate` keeps the sibling away from every other VM
    (the default), `prefer` allows the sibling to go to others, `require` demands that every vCPU be in
    a howtogroup pair (so whole cores are taken by the VM itself).
    """

    isolate = "isolate"
    prefer = "prefer"
    require = "require"


class EmulatorThreads(StrEnum):
    """Where the hypervisor's emulator/housekeeping threads run."""

    share = "share"  # float over the VM's own vCPU PUs (default)
    isolate = "isolate"  # one extra dedicated PU on the node of cpu-set 0


class DiskType(StrEnum):
    hdd = "hdd"
    ssd = "ssd"
    nvme = "nvme"
    network = "network"


class ProcessorRequirements(Model):
    vendor: Text | None = Field(None, description="Required vendor, e.g. GenuineIntel")
    model: Text | None = Field(None, description="Reference processor model the VM was sized on")
    compatible_models: tuple[Text, ...] = Field(
        (), description="Other models known to give the expected performance"
    )
    required_flags: tuple[Text, ...] = Field((), description="/proc/cpuinfo flags the guest needs")
    min_frequency_mhz: NonNegativeFloat | None = None
    reference_frequency_mhz: NonNegativeFloat | None = Field(
        None, description="Frequency the vCPU counts were sized for (for frequency scaling)"
    )
    architecture: Text | None = None


class MemoryRequirements(Model):
    """Clause 8.2.2.2: RAM speed and channels for memory-intensive VMs."""

    type: Text | None = None
    min_speed_mts: NonNegativeInt | None = None
    min_channels: NonNegativeInt | None = None


class VSwitchRequirements(Model):
    accelerated: bool = Field(False, description="Needs a software-accelerated vSwitch")
    types: tuple[Text, ...] = Field((), description="Acceptable vSwitch types; empty: any")


class HypervisorRequirements(Model):
    type: HypervisorType | None = None
    version: Text | None = Field(None, description="Version the VM was validated on")
    min_version: Text | None = None
    required_capabilities: tuple[HypervisorCapability, ...] = ()
    required_capability_sets: tuple[CapabilitySet, ...] = Field(
        (), description="hw_virtualization and/or io_virtualization (clause 8.2.2.3)"
    )
    vswitch: VSwitchRequirements | None = None

    @property
    def all_required_capabilities(self) -> frozenset[HypervisorCapability]:
        caps = set(self.required_capabilities)
        for capability_set in self.required_capability_sets:
            caps |= CAPABILITY_SETS[capability_set]
        return frozenset(caps)


class NumaAffinity(StrEnum):
    """Where a PCI device or port must sit relative to the VM's NUMA nodes (Nova's
    `hw:pci_numa_affinity_policy`, a Neutron port's `numa_affinity_policy`): the nodes of its
    cpu-set, or of every cpu-set when it names none."""

    required = "required"  # on one of those nodes
    legacy = "legacy"  # the same (nfvplace knows every device's node)
    preferred = "preferred"  # anywhere, on one of those nodes when one is free there
    socket = "socket"  # on a node of the same socket as one of those nodes


class Interface(Model):
    name: Identifier
    mode: InterfaceMode = InterfaceMode.vswitch
    speed_gbps: Gbps | None = Field(None, description="Port speed the interface needs")
    bandwidth_gbps: Gbps | None = Field(None, description="Bandwidth the interface uses")
    restricted_to_topology: bool = Field(
        True, description="Must sit on its cpu-set's NUMA node (always true inside a cpu-set)"
    )
    physical_network: Text | None = None
    vlan: NonNegativeInt | None = None
    numa_affinity: NumaAffinity | None = Field(
        None,
        description="Locality of a dedicated or SR-IOV port to the VM's NUMA nodes (its cpu-set's, "
        "or any cpu-set's outside them); none: restricted_to_topology decides",
    )


class PageSizeChoice(StrEnum):
    """A page size the placement chooses on the node, for the cpu-set's whole memory (Nova's
    `hw:mem_page_size` words): the largest size whose free pages on the node hold it."""

    large = "large"  # a hugepage size
    any = "any"  # a hugepage size, else normal memory (small pages)


class Hugepages(Model):
    size: PageSize | PageSizeChoice = Field(
        description="A page size ('1GiB', '2MiB'), or 'large'/'any': the size is chosen on the "
        "node (the largest whose free pages hold the cpu-set's memory; 'any' falls back to "
        "normal memory), and the configuration records it"
    )
    count: NonNegativeInt | None = Field(
        None, description="Pages of a given size; none with 'large'/'any' (the whole memory)"
    )

    @model_validator(mode="after")
    def _count_matches_size(self) -> Hugepages:
        if isinstance(self.size, PageSizeChoice):
            if self.count is not None:
                raise ValueError(
                    f"size '{self.size}' backs the cpu-set's whole memory: give no count"
                )
        elif self.count is None:
            raise ValueError("give the number of pages ('count') of that size")
        return self

    @property
    def choice(self) -> PageSizeChoice | None:
        """The size word ('large'/'any') when the size is chosen at placement."""
        return self.size if isinstance(self.size, PageSizeChoice) else None

    @property
    def size_kib(self) -> int | None:
        """The page size in KiB (None: chosen at placement)."""
        return None if isinstance(self.size, PageSizeChoice) else self.size

    @property
    def pages(self) -> int:
        """Pages of a given size (0 for a size chosen at placement)."""
        return self.count or 0

    @property
    def total_mib(self) -> int:
        """Memory in pages of a given size (0 for a size chosen at placement)."""
        return self.pages * (self.size_kib or 0) // 1024


class Disk(Model):
    name: Identifier
    size_gib: GiB
    type: DiskType = DiskType.ssd
    dedicated: bool = False


class PciDeviceRequest(Model):
    device_class: PciDeviceClass = Field(PciDeviceClass.crypto, alias="class")
    count: PositiveInt = 1
    vendor: Text | None = None
    model: Text | None = None
    cpu_set: NonNegativeInt | None = Field(None, description="Cpu-set whose node must hold it")
    numa_affinity: NumaAffinity | None = Field(
        None,
        description="Locality to the VM's NUMA nodes (the cpu-set's, or any cpu-set's); none: "
        "on the cpu-set's node when it names one, else anywhere",
    )


class CpuSet(Model):
    """One host NUMA node's worth of the VM (clause 8.2.2.4, topology of resources)."""

    id: NonNegativeInt
    vcpus: tuple[VcpuId, ...] = Field(min_length=1, max_length=MAX_VCPUS)
    howtogroup: tuple[tuple[VcpuId, VcpuId], ...] = Field(
        (), description="Pairs of vCPUs to put on the two threads of one core"
    )
    memory_mib: MiB
    hugepages: Hugepages | None = None
    memory_bandwidth_gbps: Gbps | None = None
    interfaces: tuple[Interface, ...] = ()
    thread_policy: ThreadPolicy | None = Field(
        None, description="Overrides the VM's cpu_thread_policy for this cpu-set"
    )
    cache_ways: PositiveInt | None = Field(
        None,
        description="L3 cache ways reserved exclusively for this cpu-set's vCPUs (Intel RDT CAT)",
    )
    floating: bool = Field(
        False,
        description="The vCPUs float (unpinned) over the shared PUs of the cpu-set's NUMA node, "
        "at most one vCPU per PU; memory, hugepages and interfaces stay on that node",
    )

    @property
    def paired_vcpus(self) -> frozenset[int]:
        return frozenset(v for pair in self.howtogroup for v in pair)

    @property
    def single_vcpus(self) -> tuple[int, ...]:
        paired = self.paired_vcpus
        return tuple(v for v in self.vcpus if v not in paired)


class CpuSetBandwidth(Model):
    cpu_sets: tuple[NonNegativeInt, NonNegativeInt]
    bandwidth_mbps: Mbps


class Impact(Model):
    """Clause 8.2.2.5: limits on the VM's impact from/to other VMs on the same host."""

    max_instances_per_host: PositiveInt | None = Field(
        None, description="At most this many instances of this descriptor on one host"
    )
    memory_bandwidth_gbps: Gbps | None = Field(
        None, description="Pessimistic memory-bandwidth use, charged to the host's nodes"
    )
    interconnect_bandwidth_gbps: Gbps | None = None
    benchmark_class: Text | None = Field(
        None, description="Result of a standardised interference benchmark (option 1)"
    )
    cache_occupancy_kib: KiB | None = Field(
        None, description="Pessimistic last-level cache occupancy (option 3: data cache use)"
    )


# the requirement lists a variant can replace (the fields of `Variant` besides `name` and `match`)
VARIANT_OVERRIDES = (
    "vcpus",
    "memory_mib",
    "cpu_sets",
    "cpu_set_bandwidth",
    "processor",
    "hypervisor",
    "impact",
)


class VariantMatch(Model):
    processor_vendor: Text | None = None
    processor_models: tuple[Text, ...] = ()
    min_frequency_mhz: NonNegativeFloat | None = None
    hypervisor_type: HypervisorType | None = None
    hypervisor_min_version: Text | None = None


class Variant(Model):
    """Different requirement lists for different processors or hypervisors (clause 8.2.2.5)."""

    name: Identifier
    match: VariantMatch
    vcpus: VcpuCount | None = None
    memory_mib: MiB | None = None
    cpu_sets: tuple[CpuSet, ...] | None = None
    cpu_set_bandwidth: tuple[CpuSetBandwidth, ...] | None = None
    processor: ProcessorRequirements | None = None
    hypervisor: HypervisorRequirements | None = None
    impact: Impact | None = None


class VmDescriptor(Model):
    schema_: Literal["nfvplace/vmd/v1"] = Field(VMD_SCHEMA, alias="schema")
    name: Identifier
    description: Text | None = None
    processor: ProcessorRequirements | None = None
    memory: MemoryRequirements | None = None
    hypervisor: HypervisorRequirements | None = None
    vcpus: VcpuCount | None = Field(None, description="Number of vCPUs (derived from cpu_sets)")
    cpu_oversubscription: bool = Field(False, description="May run on shared, oversubscribed PUs")
    memory_mib: MiB | None = Field(None, description="Memory size (derived from cpu_sets)")
    memory_oversubscription: bool = False
    cpu_thread_policy: ThreadPolicy = ThreadPolicy.isolate
    emulator_threads: EmulatorThreads = EmulatorThreads.share
    realtime_vcpus: tuple[VcpuId, ...] = Field(
        (),
        max_length=MAX_VCPUS,
        description="vCPUs running real-time threads (FIFO scheduling in the guest)",
    )
    cpu_sets: tuple[CpuSet, ...] = ()
    cpu_sets_may_share_node: bool = Field(
        False, description="Allow two cpu-sets on the same NUMA node (default: distinct nodes)"
    )
    cpu_set_bandwidth: tuple[CpuSetBandwidth, ...] = ()
    interfaces: tuple[Interface, ...] = Field(
        (), description="Interfaces outside any cpu-set (no NUMA restriction)"
    )
    storage: tuple[Disk, ...] = ()
    pci_devices: tuple[PciDeviceRequest, ...] = ()
    impact: Impact | None = None
    variants: tuple[Variant, ...] = ()
    labels: dict[Text, Text] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _has_size(self) -> VmDescriptor:
        if not self.cpu_sets and (self.vcpus is None or self.memory_mib is None):
            raise ValueError("give either cpu_sets, or vcpus and memory_mib at the top level")
        return self

    @property
    def total_vcpus(self) -> int:
        if self.cpu_sets:
            return sum(len(cs.vcpus) for cs in self.cpu_sets)
        return self.vcpus or 0

    @property
    def total_memory_mib(self) -> int:
        if self.cpu_sets:
            return sum(cs.memory_mib for cs in self.cpu_sets)
        return self.memory_mib or 0

    @property
    def all_interfaces(self) -> tuple[Interface, ...]:
        return tuple(i for cs in self.cpu_sets for i in cs.interfaces) + self.interfaces

    def with_variant(self, variant: Variant) -> VmDescriptor:
        """This descriptor with a variant's requirement lists in place of the defaults."""
        update: dict[str, object] = {"variants": ()}
        for field in VARIANT_OVERRIDES:
            value = getattr(variant, field)
            if value is not None:
                update[field] = value
        return self.model_copy(update=update)
