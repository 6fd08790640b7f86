"""The facts the realistic-use transform states: port speeds, installed memory, cpuinfo flags."""

from __future__ import annotations

from typing import Final

from ..models.capabilities import ProcessorFeature

# Nominal port speed (Gb/s) of the controllers in the corpus, by vendor:device.
NOMINAL_SPEED_GBPS: Final[dict[str, float]] = {
    "8086:1521": 1,  # I350
    "8086:10c9": 1,  # 82576
    "8086:37d2": 10,  # X722
    "8086:1583": 40,  # XL710
    "8086:158b": 25,  # XXV710
    "8086:159b": 25,  # E810-XXV (the synthetic NIC of I/O-less exports)
    "14e4:1639": 1,  # BCM5709
    "14e4:163b": 1,  # BCM5716
    "14e4:164c": 1,  # BCM5708
    "15b3:1003": 40,  # ConnectX-3
    "15b3:1013": 100,  # ConnectX-4
    "15b3:6746": 40,  # ConnectX-2 VPI
    "15b3:634a": 20,  # InfiniHost / ConnectX DDR
    "1077:7322": 40,  # QLogic QDR IB
    "1137:0043": 10,  # Cisco VIC
}
DEFAULT_SPEED_GBPS: Final = 10.0

# Memory type, speed (MT/s) and channels per package by processor model, first match wins: what
# those platforms were sold with (memory type is not in an hwloc export).
MEMORY_BY_MODEL: Final[tuple[tuple[str, str, int, int], ...]] = (
    ("Gold 62", "DDR4", 2933, 6),  # Cascade Lake Gold
    ("Silver 41", "DDR4", 2400, 6),  # Skylake Silver
    ("E7-", "DDR3", 1333, 4),  # Westmere-EX
    ("E5-", "DDR3", 1600, 4),  # Sandy/Ivy Bridge-EP
)
IOMMU_FEATURES: Final = (
    ProcessorFeature.iommu,
    ProcessorFeature.iommu_large_pages,
    ProcessorFeature.interrupt_remapping,
)
SHARED_CORES_PER_NODE: Final = 1
SHARED_RATIO: Final = 4.0
VFS_PER_PORT: Final = 8
VFS_IN_USE: Final = 2

INTEL_FLAGS: Final = (  # cpuinfo `flags` of a Xeon Scalable (Skylake-SP) server
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx "
    "fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc arch_perfmon pebs bts "
    "rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni pclmulqdq dtes64 monitor ds_cpl vmx "
    "smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt "
    "tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb cat_l3 "
    "cdp_l3 invpcid_single pti intel_ppin ssbd mba ibrs ibpb stibp tpr_shadow vnmi flexpriority ept "
    "vpid ept_ad fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm cqm mpx rdt_a avx512f "
    "avx512dq rdseed adx smap clflushopt clwb intel_pt avx512cd avx512bw avx512vl xsaveopt xsavec "
    "xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local dtherm ida arat pln pts pku "
    "ospke md_clear flush_l1d arch_capabilities"
)
INTEL_VMX_FLAGS: Final = (  # its `vmx flags`
    "vnmi preemption_timer posted_intr invvpid ept_x_only ept_ad ept_1gb flexpriority apicv "
    "tsc_offset vtpr mtf vapic ept vpid unrestricted_guest vapic_reg vid ple shadow_vmcs pml"
)
AMD_FLAGS: Final = (  # cpuinfo `flags` of an EPYC (Zen 2) server
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse "
    "sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc "
    "cpuid extd_apicid aperfmperf pni pclmulqdq monitor ssse3 fma cx16 sse4_1 sse4_2 x2apic movbe "
    "popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a "
    "misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core perfctr_nb bpext "
    "perfctr_llc mwaitx cpb cat_l3 cdp_l3 hw_pstate ssbd mba ibrs ibpb stibp vmmcall fsgsbase bmi1 "
    "avx2 smep bmi2 erms invpcid cqm rdt_a avx512f avx512dq rdseed adx smap clflushopt clwb "
    "avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves npt lbrv svm_lock nrip_save "
    "tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold avic v_vmsave_vmload vgif"
)


def cpu_flags(vendor: str) -> tuple[list[str], list[str]]:
    """The cpuinfo `flags` and `vmx flags` of the vendor's server parts."""
    if vendor == "AuthenticAMD":
        return AMD_FLAGS.split(), []
    return INTEL_FLAGS.split(), INTEL_VMX_FLAGS.split()
