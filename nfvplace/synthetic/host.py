"""`realistic_host`: the documented realistic set-up and use of a host (see the package docstring)."""

from __future__ import annotations

import random
import re

from ..discovery.features import features_from_flags
from ..discovery.hypervisor import HostProbe, derive_capabilities
from ..models.cache import CacheAllocation
from ..models.capabilities import HypervisorType, ProcessorFeature, VSwitchType
from ..models.chd import (
    ComputeHostDescriptor,
    CpuState,
    HostMemory,
    Hypervisor,
    Kernel,
    NumaNode,
    Processor,
    Provenance,
    VSwitch,
)
from .nodes import node_in_use, with_synthetic_nics
from .tables import IOMMU_FEATURES, MEMORY_BY_MODEL, cpu_flags


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
        chd = with_synthetic_nics(chd, taken)
    nodes: list[NumaNode] = []
    reserved: list[int] = []
    for node in chd.numa_nodes:
        new, held = node_in_use(node, rng, taken, owners)
        nodes.append(new)
        reserved.extend(held)
    vendor = chd.processor.vendor if chd.processor.vendor != "unknown" else "GenuineIntel"
    flags, vmx = cpu_flags(vendor)
    smt = any(len(cpu.siblings) > 1 for cpu in chd.cpus)
    features = features_from_flags(flags, vmx, smt_active=smt)
    processor = _processor(chd, vendor, flags, features)
    cache = _cache_allocation(chd, flags)
    return chd.model_copy(
        update={
            "id": host_id,
            "processor": processor,
            "memory": _installed_memory(chd, processor.model),
            "hypervisor": _hypervisor(features, reserved, rng),
            "kernel": _kernel(nodes, reserved),
            "numa_nodes": tuple(nodes),
            "cache_allocation": cache,
            "labels": {"origin": origin or "unknown", "example": "realistic-use-transform"},
            "provenance": _provenance(origin, synthetic_nics, cache is not None),
        }
    )


SCALABLE = re.compile(r"Xeon\(R\) (Bronze|Silver|Gold|Platinum)")


def _cache_allocation(chd: ComputeHostDescriptor, flags: list[str]) -> CacheAllocation | None:
    """The L3 caches discovery found, with 16 classes of service, on a Xeon Scalable (where L3 CAT
    is in every model; older Xeons of the corpus have none)."""
    allocation = chd.cache_allocation
    if allocation is None or "cat_l3" not in flags or not SCALABLE.search(chd.processor.model):
        return None
    return allocation if allocation.classes else allocation.model_copy(update={"classes": 16})


def _processor(
    chd: ComputeHostDescriptor,
    vendor: str,
    flags: list[str],
    features: tuple[ProcessorFeature, ...],
) -> Processor:
    model = chd.processor.model if chd.processor.model != "unknown" else "Intel(R) Xeon(R) CPU"
    return chd.processor.model_copy(
        update={
            "vendor": vendor,
            "model": model,
            "frequency_mhz": chd.processor.frequency_mhz or 2400.0,
            "flags": tuple(flags),
            "features": features + IOMMU_FEATURES,
        }
    )


def _installed_memory(chd: ComputeHostDescriptor, model: str) -> HostMemory | None:
    return next(
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


def _hypervisor(
    features: tuple[ProcessorFeature, ...], reserved: list[int], rng: random.Random
) -> Hypervisor:
    probe = HostProbe(
        kvm=True,
        qemu=(8, 2, 2),
        libvirt=(10, 0, 0),
        slat_enabled=True,
        iommu=True,
        iommu_large_pages=True,
        interrupt_remapping=True,
    )
    return Hypervisor(
        type=HypervisorType.kvm,
        version="8.2.2",
        qemu_version="8.2.2",
        libvirt_version="10.0.0",
        capabilities=derive_capabilities(probe, features).capabilities,
        vswitch=VSwitch(
            type=VSwitchType.ovs_dpdk,
            version="3.3.0",
            accelerated=True,
            bandwidth_gbps=20.0,
            bandwidth_used_gbps=round(rng.uniform(1, 6), 1),
            interfaces_in_use=rng.randint(2, 12),
            pmd_cpus=tuple(sorted(reserved)[:2]),
        ),
    )


def _kernel(nodes: list[NumaNode], reserved: list[int]) -> Kernel:
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
    return Kernel(version="5.14.0-427.13.1.el9_4.x86_64", cmdline=cmdline, realtime=False)


def _provenance(origin: str | None, synthetic_nics: bool, cache: bool) -> Provenance:
    return Provenance(
        source="hwloc-xml",
        tool="nfvplace.synthetic.realistic_host",
        notes=(
            f"topology from hwloc export {origin}" if origin else "topology from an hwloc export",
            "set-up and use (hypervisor, hugepages, reserved/dedicated PUs, port speeds, "
            "VFs) are synthetic, from the documented realistic-use transform",
            *(("the L3 cache's 16 classes of service are synthetic",) if cache else ()),
            *(
                ("the export has no NIC: the E810-XXV NICs are synthetic",)
                if synthetic_nics
                else ()
            ),
        ),
    )


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
