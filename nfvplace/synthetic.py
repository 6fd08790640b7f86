"""Realistic example hosts from real topologies: a documented, reproducible transform.

An hwloc export tells the hardware but not how a host is set up or used. `realistic_host` fills that
in the way an NFV compute host is commonly configured (seeds 000-003), deterministically from a seed:

- hypervisor: KVM with QEMU 8.2.2 and libvirt 10.0.0 (capabilities from the discovery version table,
  IOMMU with large pages and interrupt remapping on), OVS-DPDK 3.3.0 with its PMD threads on the
  host-reserved PUs;
- processor: the export's vendor and model, with the cpuinfo flags of that vendor's server parts;
- installed memory: type, speed and channels of the processor generation (`MEMORY_BY_MODEL`);
- kernel: RHEL 9 with `isolcpus`/`nohz_full`/`rcu_nocbs` on the guest PUs and hugepages preallocated;
- CPUs: the first core of every NUMA node is host-reserved (`eligible: false`), PUs the export
  disallowed stay ineligible, `dedicated` PUs (whole cores) are held by a few VMs, and the last
  `SHARED_CORES_PER_NODE` cores of a node with at least 6 cores form its shared pool for
  oversubscribed cloud VMs (`shared`, ratio `SHARED_RATIO`, partly used; left out of `isolcpus`);
- memory: per node, half the memory in 1 GiB pages and 2048 x 2 MiB pages, some of both used;
- NICs: port speeds from the controller's nominal speed (table below); ports of 10 Gb/s and more are
  SR-IOV with 8 configured VFs (2 in use), except the last port of a multi-port NIC, which stays
  free for passthrough; 1 Gb/s ports carry the vSwitch. An export with no NIC at
  all (CPU-only or I/O-less dumps) gets one synthetic dual-port 25 Gb/s Intel E810-XXV on the first
  NUMA node of each package, said so in the host's provenance notes.

Pure: takes a CHD, returns a new one.
"""

from __future__ import annotations

import random
from typing import Final

from .discovery.features import features_from_flags
from .discovery.hypervisor import HostProbe, derive_capabilities
from .models.capabilities import HypervisorType, ProcessorFeature, VSwitchType
from .models.chd import (
    ComputeHostDescriptor,
    Cpu,
    CpuState,
    HostMemory,
    HugepagePool,
    Hypervisor,
    Kernel,
    Nic,
    NumaNode,
    Port,
    PortUsage,
    Provenance,
    VirtualFunction,
    VSwitch,
)

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


def _flags(vendor: str) -> tuple[list[str], list[str]]:
    if vendor == "AuthenticAMD":
        return AMD_FLAGS.split(), []
    return INTEL_FLAGS.split(), INTEL_VMX_FLAGS.split()


def _vf_addresses(pf: str, index: int, taken: set[str]) -> list[str]:
    """VF addresses as an Intel/Mellanox PF lays them out: same bus, device 0x02 + 8 x PF index."""
    domain_bus = pf.rsplit(":", 1)[0]
    out: list[str] = []
    device = 0x02 + 0x08 * index
    while len(out) < VFS_PER_PORT and device < 0x20:
        for function in range(8):
            address = f"{domain_bus}:{device:02x}.{function}"
            if address not in taken and len(out) < VFS_PER_PORT:
                out.append(address)
        device += 1
    taken.update(out)
    return out


def _ports(nic: Nic, rng: random.Random, taken: set[str], owners: list[str]) -> Nic:
    speed = NOMINAL_SPEED_GBPS.get(f"{nic.vendor_id}:{nic.device_id}", DEFAULT_SPEED_GBPS)
    ports: list[Port] = []
    for index, port in enumerate(nic.ports):
        if port.vfs:  # the export shows VFs (e.g. Cisco usNIC): keep them, some in use
            vfs = tuple(
                vf.model_copy(update={"in_use": True, "owner": rng.choice(owners)})
                if i < VFS_IN_USE
                else vf
                for i, vf in enumerate(port.vfs)
            )
            ports.append(
                port.model_copy(
                    update={
                        "speed_gbps": speed,
                        "usage": PortUsage.sriov,
                        "sriov_total_vfs": max(len(vfs), 16),
                        "vfs": vfs,
                    }
                )
            )
        elif speed >= 10 and index == len(nic.ports) - 1 and index > 0:
            # the last port of a multi-port NIC stays whole, for PCI passthrough (`dedicated`)
            ports.append(port.model_copy(update={"speed_gbps": speed, "usage": PortUsage.free}))
        elif speed >= 10:
            addresses = _vf_addresses(port.pci_address, index, taken)
            vfs = tuple(
                VirtualFunction(
                    pci_address=address,
                    in_use=i < VFS_IN_USE,
                    owner=rng.choice(owners) if i < VFS_IN_USE else None,
                )
                for i, address in enumerate(addresses)
            )
            ports.append(
                port.model_copy(
                    update={
                        "speed_gbps": speed,
                        "usage": PortUsage.sriov,
                        "sriov_total_vfs": 64,
                        "vfs": vfs,
                        "physical_network": "physnet-data",
                    }
                )
            )
        else:
            ports.append(
                port.model_copy(
                    update={
                        "speed_gbps": speed,
                        "usage": PortUsage.vswitch,
                        "vswitch_interfaces_in_use": rng.randint(1, 6),
                        "bandwidth_used_gbps": round(rng.uniform(0.05, 0.4) * speed, 2),
                        "physical_network": "physnet-mgmt",
                    }
                )
            )
    return nic.model_copy(update={"ports": tuple(ports)})


def _with_synthetic_nics(chd: ComputeHostDescriptor, taken: set[str]) -> ComputeHostDescriptor:
    """`chd` with a dual-port 25 Gb/s E810-XXV on the first NUMA node of each package."""
    first_node: dict[int, int] = {}
    for node in sorted(chd.numa_nodes, key=lambda n: n.id):
        for package in {cpu.package for cpu in node.cpus if cpu.package is not None} or {0}:
            first_node.setdefault(package, node.id)
    chosen = sorted(set(first_node.values()))
    nodes = []
    for node in chd.numa_nodes:
        if node.id not in chosen:
            nodes.append(node)
            continue
        bus = 0x18 + 0x80 * chosen.index(node.id)
        while f"0000:{bus:02x}:00.0" in taken:
            bus += 1
        ports = tuple(
            Port(pci_address=f"0000:{bus:02x}:00.{function}", speed_gbps=0.0)
            for function in range(2)
        )
        taken.update(port.pci_address for port in ports)
        nic = Nic(
            vendor="Intel Corporation",
            model="Ethernet Controller E810-XXV for SFP (synthetic)",
            vendor_id="8086",
            device_id="159b",
            pcie_generation=4,
            pcie_lanes=8,
            ports=ports,
        )
        nodes.append(node.model_copy(update={"nics": (*node.nics, nic)}))
    return chd.model_copy(update={"numa_nodes": tuple(nodes)})


def _node(
    node: NumaNode, rng: random.Random, taken: set[str], owners: list[str]
) -> tuple[NumaNode, list[int]]:
    """(node with use applied, its host-reserved PUs)."""
    cores = sorted({cpu.core for cpu in node.cpus if cpu.eligible})
    reserved_cores = set(cores[:1])
    dedicated_cores = cores[1 : 1 + min(len(cores) // 3, 2 * len(owners))]
    core_owner = {core: owners[i // 2 % len(owners)] for i, core in enumerate(dedicated_cores)}
    shared_cores = (
        set(cores[-SHARED_CORES_PER_NODE:]) - set(dedicated_cores) if len(cores) >= 6 else set()
    )
    cpus: list[Cpu] = []
    reserved: list[int] = []
    for cpu in node.cpus:
        if not cpu.eligible:
            cpus.append(cpu)
        elif cpu.core in reserved_cores:
            cpus.append(cpu.model_copy(update={"eligible": False}))
            reserved.append(cpu.id)
        elif cpu.core in core_owner:
            cpus.append(
                cpu.model_copy(update={"state": CpuState.dedicated, "owner": core_owner[cpu.core]})
            )
        elif cpu.core in shared_cores:
            usage = round(rng.uniform(0.1, 0.6), 2)
            cpus.append(
                cpu.model_copy(
                    update={
                        "state": CpuState.shared,
                        "oversubscription_ratio": SHARED_RATIO,
                        "usage_ratio": usage,
                    }
                )
            )
        else:
            cpus.append(cpu)
    total_mib = node.memory.total_mib
    giant = max(int(total_mib / 1024 * 0.5), 0) if total_mib else 0
    pools = (
        HugepagePool(size_kib=2048, total=2048, used=rng.choice([256, 512, 1024])),
        HugepagePool(
            size_kib=1048576, total=giant, used=min(giant, rng.randint(1, giant // 3 + 1))
        ),
    )
    memory = node.memory.model_copy(
        update={"hugepages": pools if total_mib > 4096 + giant * 1024 else ()}
    )
    nics = tuple(_ports(nic, rng, taken, owners) for nic in node.nics)
    return node.model_copy(update={"cpus": tuple(cpus), "memory": memory, "nics": nics}), reserved


def _cpulist(ids: list[int]) -> str:
    ids = sorted(ids)
    ranges: list[str] = []
    start = prev = None
    for i in [*ids, None]:
        if i is not None and prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            ranges.append(f"{start}-{prev}" if start != prev else f"{start}")
        start = prev = i
    return ",".join(ranges)


def realistic_host(
    chd: ComputeHostDescriptor, host_id: str, *, seed: int = 0, origin: str | None = None
) -> ComputeHostDescriptor:
    """`chd` with the documented realistic set-up and use applied (deterministic for a seed)."""
    rng = random.Random(f"{host_id}:{seed}")
    owners = [f"vm-{host_id}-{i}" for i in range(1, 4)]
    taken = {
        address
        for node in chd.numa_nodes
        for nic in node.nics
        for port in nic.ports
        for address in (port.pci_address, *(vf.pci_address for vf in port.vfs))
    } | {dev.pci_address for node in chd.numa_nodes for dev in node.pci_devices}
    synthetic_nics = not any(node.nics for node in chd.numa_nodes)
    if synthetic_nics:
        chd = _with_synthetic_nics(chd, taken)
    nodes: list[NumaNode] = []
    reserved: list[int] = []
    for node in chd.numa_nodes:
        new, held = _node(node, rng, taken, owners)
        nodes.append(new)
        reserved.extend(held)
    vendor = chd.processor.vendor if chd.processor.vendor != "unknown" else "GenuineIntel"
    flags, vmx = _flags(vendor)
    smt = any(len(cpu.siblings) > 1 for cpu in chd.cpus)
    features = features_from_flags(flags, vmx, smt_active=smt)
    probe = HostProbe(
        kvm=True,
        qemu=(8, 2, 2),
        libvirt=(10, 0, 0),
        slat_enabled=True,
        iommu=True,
        iommu_large_pages=True,
        interrupt_remapping=True,
    )
    derived = derive_capabilities(probe, features)
    guest = sorted(
        c.id
        for node in nodes
        for c in node.cpus
        if c.id not in reserved and c.eligible and c.state != CpuState.shared
    )
    giant_pages = sum(p.total for n in nodes for p in n.memory.hugepages if p.size_kib == 1048576)
    cmdline = (
        "BOOT_IMAGE=(hd0,gpt2)/vmlinuz-5.14.0-427.13.1.el9_4.x86_64 root=/dev/mapper/rhel-root ro "
        f"intel_iommu=on iommu=pt default_hugepagesz=1G hugepagesz=1G hugepages={giant_pages} "
        f"hugepagesz=2M hugepages={2048 * len(nodes)} "
        f"isolcpus=managed_irq,domain,{_cpulist(guest)} nohz_full={_cpulist(guest)} "
        f"rcu_nocbs={_cpulist(guest)} skew_tick=1 tsc=reliable"
    )
    model = chd.processor.model if chd.processor.model != "unknown" else "Intel(R) Xeon(R) CPU"
    memory = next(
        (
            HostMemory(
                type=kind,
                speed_mts=speed,
                channels=channels,
                total_mib=sum(n.memory.total_mib for n in chd.numa_nodes),
            )
            for needle, kind, speed, channels in MEMORY_BY_MODEL
            if needle in model
        ),
        chd.memory,
    )
    processor = chd.processor.model_copy(
        update={
            "vendor": vendor,
            "model": model,
            "frequency_mhz": chd.processor.frequency_mhz or 2400.0,
            "flags": tuple(flags),
            "features": features + IOMMU_FEATURES,
        }
    )
    return chd.model_copy(
        update={
            "id": host_id,
            "processor": processor,
            "memory": memory,
            "hypervisor": Hypervisor(
                type=HypervisorType.kvm,
                version="8.2.2",
                qemu_version="8.2.2",
                libvirt_version="10.0.0",
                capabilities=derived.capabilities,
                vswitch=VSwitch(
                    type=VSwitchType.ovs_dpdk,
                    version="3.3.0",
                    accelerated=True,
                    bandwidth_gbps=20.0,
                    bandwidth_used_gbps=round(rng.uniform(1, 6), 1),
                    interfaces_in_use=rng.randint(2, 12),
                    pmd_cpus=tuple(sorted(reserved)[:2]),
                ),
            ),
            "kernel": Kernel(
                version="5.14.0-427.13.1.el9_4.x86_64", cmdline=cmdline, realtime=False
            ),
            "numa_nodes": tuple(nodes),
            "labels": {"origin": origin or "unknown", "example": "realistic-use-transform"},
            "provenance": Provenance(
                source="hwloc-xml",
                tool="nfvplace.synthetic.realistic_host",
                notes=(
                    f"topology from hwloc export {origin}"
                    if origin
                    else "topology from an hwloc export",
                    "set-up and use (hypervisor, hugepages, reserved/dedicated PUs, port speeds, "
                    "VFs) are synthetic, from the documented realistic-use transform",
                    *(
                        ("the export has no NIC: the E810-XXV NICs are synthetic",)
                        if synthetic_nics
                        else ()
                    ),
                ),
            ),
        }
    )
