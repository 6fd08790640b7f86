"""Names of processor features and hypervisor capabilities (NFV-PER 001 clauses 8.1.1.1 and 8.1.1.3)."""

from __future__ import annotations

from enum import StrEnum


class ProcessorFeature(StrEnum):
    """Hardware features of clause 8.1.1.1; a CHD lists each as enabled or disabled in the BIOS."""

    large_pages = "large_pages"
    io_large_pages = "io_large_pages"
    tlb_large_pages = "tlb_large_pages"
    iotlb_large_pages = "iotlb_large_pages"
    hw_virtualization = "hw_virtualization"  # VT-x / AMD-V
    vm_exit_reduction = "vm_exit_reduction"  # e.g. posted interrupts, APICv
    slat = "slat"  # EPT / RVI
    slat_large_pages = "slat_large_pages"
    cache_tagging = "cache_tagging"  # cache lines tagged to survive VM exits
    tlb_tagging = "tlb_tagging"  # VPID / ASID
    iommu = "iommu"  # VT-d / AMD-Vi
    iommu_large_pages = "iommu_large_pages"
    interrupt_remapping = "interrupt_remapping"
    direct_cache_access = "direct_cache_access"  # DDIO
    smt = "smt"


class HypervisorCapability(StrEnum):
    """Hypervisor capabilities of clause 8.1.1.3 (and the requirements of 8.2.2.3)."""

    slat = "slat"
    slat_large_pages = "slat_large_pages"
    iommu = "iommu"
    iommu_large_pages = "iommu_large_pages"
    interrupt_remapping = "interrupt_remapping"
    no_instruction_emulation = "no_instruction_emulation"
    cpu_pinning = "cpu_pinning"
    numa_memory_pinning = "numa_memory_pinning"
    hugepage_numa_pinning = "hugepage_numa_pinning"


class CapabilitySet(StrEnum):
    """The two capability sets of clause 8.2.2.3."""

    hw_virtualization = "hw_virtualization"
    io_virtualization = "io_virtualization"


CAPABILITY_SETS: dict[CapabilitySet, frozenset[HypervisorCapability]] = {
    CapabilitySet.hw_virtualization: frozenset(
        {HypervisorCapability.slat, HypervisorCapability.slat_large_pages}
    ),
    CapabilitySet.io_virtualization: frozenset(
        {
            HypervisorCapability.iommu,
            HypervisorCapability.iommu_large_pages,
            HypervisorCapability.interrupt_remapping,
        }
    ),
}


class HypervisorType(StrEnum):
    kvm = "kvm"
    xen = "xen"
    vmware = "vmware"
    hyperv = "hyperv"
    other = "other"


class VSwitchType(StrEnum):
    none = "none"
    linux_bridge = "linux_bridge"
    ovs = "ovs"
    ovs_dpdk = "ovs_dpdk"
    vpp = "vpp"
    vmware_vds = "vmware_vds"
    other = "other"
