"""VM Configuration (`schema: nfvplace/vm-configuration/v1`): one placed VM on one host.

Enough to deploy the VM (renderers turn it into libvirt XML and friends) and to check it: every host
resource it holds is named exactly (PUs, hugepages per node, ports and VFs, bandwidth).
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from .base import Identifier, Model, NonNegativeInt, PciAddress, Text
from .units import Gbps, KiB, Mbps, MiB
from .vmd import InterfaceMode, ThreadPolicy, VmDescriptor

CONFIGURATION_SCHEMA: Final = "nfvplace/vm-configuration/v1"
CONFIGURATIONS_SCHEMA: Final = "nfvplace/vm-configurations/v1"


class HugepageAllocation(Model):
    size_kib: KiB = Field(gt=0)
    count: NonNegativeInt

    @property
    def total_mib(self) -> int:
        return self.count * self.size_kib // 1024


class CacheWaysPlacement(Model):
    """L3 cache ways given to a cpu-set: `ways` contiguous ways from `first_way` of one cache."""

    domain: NonNegativeInt = Field(description="L3 cache id (the resctrl domain id)")
    first_way: NonNegativeInt
    ways: NonNegativeInt
    way_kib: KiB | None = Field(None, description="Size of one way, when the host states it")

    @property
    def mask(self) -> int:
        """The capacity bitmask (resctrl's schemata value)."""
        return ((1 << self.ways) - 1) << self.first_way


class FloatingVcpus(Model):
    """The vCPUs of a floating cpu-set, spread evenly over shared PUs of its node (one PU each at
    least: a VM never overcommits against itself); each PU is charged vCPUs / PUs of its ratio."""

    vcpus: tuple[NonNegativeInt, ...] = Field(min_length=1, description="The cpu-set's vCPU ids")
    cpus: tuple[NonNegativeInt, ...] = Field(description="Host PUs the vCPUs float over")


class CpuSetPlacement(Model):
    id: NonNegativeInt
    numa_node: NonNegativeInt
    vcpu_pins: dict[NonNegativeInt, NonNegativeInt] = Field(description="vCPU id -> host PU id")
    memory_mib: MiB
    hugepages: HugepageAllocation | None = None
    memory_bandwidth_gbps: Gbps | None = None
    reserved_siblings: tuple[NonNegativeInt, ...] = Field(
        (), description="Sibling PUs kept idle for this VM (thread policy 'isolate')"
    )
    howtogroup: tuple[tuple[NonNegativeInt, NonNegativeInt], ...] = Field(
        (),
        description="vCPU pairs placed on the two threads of one core (copied from the VM "
        "Descriptor); renderers show them to the guest as SMT siblings",
    )
    thread_policy: ThreadPolicy | None = Field(
        None,
        description="This cpu-set's own thread policy when the VM Descriptor overrides the VM's "
        "(copied from the cpu-set); None: the configuration's thread_policy",
    )
    cache_ways: CacheWaysPlacement | None = Field(
        None, description="L3 cache ways reserved exclusively for the cpu-set's vCPUs"
    )
    floating: FloatingVcpus | None = Field(
        None,
        description="A floating cpu-set's vCPUs and the shared PUs of its node they float over "
        "(its vcpu_pins are empty)",
    )

    @property
    def normal_memory_mib(self) -> int:
        """Memory taken from the node's normal (non-hugepage) memory."""
        huge = self.hugepages.total_mib if self.hugepages else 0
        return max(self.memory_mib - huge, 0)


class InterfacePlacement(Model):
    name: Identifier
    cpu_set: NonNegativeInt | None = Field(None, description="None for an unrestricted interface")
    mode: InterfaceMode
    pci_address: PciAddress | None = Field(None, description="Port or VF given to the VM")
    physical_function: PciAddress | None = Field(None, description="Port a VF belongs to")
    numa_node: NonNegativeInt | None = None
    bandwidth_gbps: Gbps = 0.0
    vhost_user: bool = Field(False, description="vSwitch port is vhost-user (accelerated)")
    physical_network: Text | None = Field(
        None, description="Network the interface attaches to (copied from the VM Descriptor)"
    )
    vlan: NonNegativeInt | None = Field(
        None, description="VLAN tag of the interface (copied from the VM Descriptor)"
    )


class SharedCpus(Model):
    """vCPUs that float over shared (time-shared) PUs instead of being pinned."""

    vcpus: NonNegativeInt
    cpus: tuple[NonNegativeInt, ...] = Field(description="Host PUs the vCPUs may run on")
    numa_node: NonNegativeInt | None = None
    memory_mib: MiB = 0
    oversubscribed: bool = False


class PciDeviceAllocation(Model):
    pci_address: PciAddress
    device_class: Text = Field(alias="class")
    numa_node: NonNegativeInt
    cpu_set: NonNegativeInt | None = None


class CpuSetLink(Model):
    cpu_sets: tuple[NonNegativeInt, NonNegativeInt]
    numa_nodes: tuple[NonNegativeInt, NonNegativeInt]
    bandwidth_mbps: Mbps


class VmConfiguration(Model):
    schema_: Literal["nfvplace/vm-configuration/v1"] = Field(CONFIGURATION_SCHEMA, alias="schema")
    vm: Identifier = Field(description="Name of the VM Descriptor")
    instance: Text | None = Field(None, description="Instance id, used as owner on the host")
    host: Identifier
    vcpus: NonNegativeInt | None = Field(None, description="Total vCPUs")
    memory_mib: MiB | None = Field(None, description="Total memory")
    thread_policy: ThreadPolicy | None = None
    cpu_sets: tuple[CpuSetPlacement, ...] = ()
    shared: SharedCpus | None = None
    emulator_pins: tuple[NonNegativeInt, ...] = Field(
        (), description="Dedicated PUs for emulator/housekeeping threads"
    )
    realtime_vcpus: tuple[NonNegativeInt, ...] = ()
    interfaces: tuple[InterfacePlacement, ...] = ()
    pci_devices: tuple[PciDeviceAllocation, ...] = ()
    cpu_set_links: tuple[CpuSetLink, ...] = ()
    memory_bandwidth_gbps: Gbps = 0.0
    variant: Text | None = Field(None, description="VM Descriptor variant that was applied")
    descriptor: VmDescriptor | None = Field(
        None,
        description="The VM Descriptor placed (its variant applied): renderers read from it what "
        "a configuration does not hold (disks, processor flags, ...), so a configuration renders "
        "alone exactly as with --vm",
    )

    @property
    def owner(self) -> str:
        """The name written as owner of the host resources this VM holds."""
        return self.instance or self.vm

    @property
    def pinned_cpus(self) -> tuple[int, ...]:
        return tuple(pu for cs in self.cpu_sets for pu in cs.vcpu_pins.values()) + tuple(
            self.emulator_pins
        )

    @property
    def floating_cpus(self) -> tuple[int, ...]:
        """Every shared PU this VM's vCPUs float over (`shared` and its floating cpu-sets)."""
        shared = self.shared.cpus if self.shared else ()
        return shared + tuple(pu for cs in self.cpu_sets if cs.floating for pu in cs.floating.cpus)

    @property
    def held_cpus(self) -> tuple[int, ...]:
        """Every PU this VM holds exclusively: pins, emulator PUs and reserved siblings."""
        return self.pinned_cpus + tuple(pu for cs in self.cpu_sets for pu in cs.reserved_siblings)


class VmConfigurations(Model):
    """Several VM Configurations in one document: what placing a VNF template gives.

    `nfvplace place` prints this kind for a VNF template, and `render` and `lint` read it as it is.
    Each configuration's `instance` carries the member name (`<vnf>.<member>-<k>`).
    """

    schema_: Literal["nfvplace/vm-configurations/v1"] = Field(CONFIGURATIONS_SCHEMA, alias="schema")
    vnf: Identifier | None = Field(None, description="Name of the VNF template placed, if any")
    configurations: tuple[VmConfiguration, ...] = Field(
        min_length=1, description="One VM Configuration per VM instance, in placement order"
    )
