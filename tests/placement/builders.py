"""A small builder of synthetic Compute Host Descriptors and VM Descriptors for placement tests.

PU numbering follows Linux: with T cores in the host, core c has threads c and c + T (SMT) or just c.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor

GIB_KIB = 1024 * 1024
MIB2_KIB = 2048
ALL_CAPS = [
    "cpu_pinning",
    "numa_memory_pinning",
    "hugepage_numa_pinning",
    "slat",
    "slat_large_pages",
    "iommu",
    "iommu_large_pages",
    "interrupt_remapping",
]


@dataclass
class PortSpec:
    speed: float = 25
    vfs: int = 4
    vfs_used: int = 0
    usage: str = "free"
    bandwidth_used: float = 0.0
    eligible: bool = True
    network: str | None = None


@dataclass
class NodeSpec:
    cores: int = 4
    hugepages_1g: int = 8
    hugepages_1g_used: int = 0
    hugepages_2m: int = 0
    memory_mib: int = 32768
    ports: list[PortSpec] = field(default_factory=list)
    bandwidth_gbps: float | None = None
    devices: list[str] = field(default_factory=list)  # device classes


def host(
    id: str = "h1",
    nodes: list[NodeSpec] | None = None,
    *,
    smt: bool = True,
    vendor: str = "GenuineIntel",
    model: str = "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
    frequency: float = 2500,
    flags: tuple[str, ...] = ("vmx", "ept", "pdpe1gb", "aes", "avx512f"),
    caps: list[str] | None = None,
    disabled_caps: tuple[str, ...] = (),
    hypervisor: bool = True,
    hv_version: str = "8.2.0",
    vswitch: dict[str, Any] | None = None,
    ineligible: tuple[int, ...] = (),
    used: dict[int, str] | None = None,
    shared: dict[int, tuple[float, float]] | None = None,
    instances: tuple[dict[str, Any], ...] = (),
    interconnect: tuple[dict[str, Any], ...] = (),
) -> ComputeHostDescriptor:
    nodes = nodes if nodes is not None else [NodeSpec(), NodeSpec()]
    total_cores = sum(n.cores for n in nodes)
    used = used or {}
    shared = shared or {}
    out_nodes = []
    core = 0
    pci_bus = 0x10
    for k, spec in enumerate(nodes):
        cpus = []
        for _ in range(spec.cores):
            threads = [core, core + total_cores] if smt else [core]
            for t in threads:
                cpu: dict[str, Any] = {
                    "id": t,
                    "core": core,
                    "siblings": threads,
                    "eligible": t not in ineligible,
                }
                if t in used:
                    cpu.update(state="dedicated", owner=used[t])
                elif t in shared:
                    ratio, usage = shared[t]
                    cpu.update(state="shared", oversubscription_ratio=ratio, usage_ratio=usage)
                cpus.append(cpu)
            core += 1
        cpus.sort(key=lambda c: c["id"])
        pools = [{"size_kib": GIB_KIB, "total": spec.hugepages_1g, "used": spec.hugepages_1g_used}]
        if spec.hugepages_2m:
            pools.append({"size_kib": MIB2_KIB, "total": spec.hugepages_2m, "used": 0})
        nics = []
        for p, port in enumerate(spec.ports):
            bus = pci_bus
            pci_bus += 1
            nics.append(
                {
                    "vendor": "Intel",
                    "model": "E810",
                    "ports": [
                        {
                            "pci_address": f"0000:{bus:02x}:00.{p % 8}",
                            "speed_gbps": port.speed,
                            "eligible": port.eligible,
                            "usage": port.usage,
                            "bandwidth_used_gbps": port.bandwidth_used,
                            "physical_network": port.network,
                            "vfs": [
                                {
                                    "pci_address": f"0000:{bus:02x}:{1 + v // 8:02x}.{v % 8}",
                                    "in_use": v < port.vfs_used,
                                    "owner": "other" if v < port.vfs_used else None,
                                }
                                for v in range(port.vfs)
                            ],
                        }
                    ],
                }
            )
        devices = [
            {"pci_address": f"0000:{0xE0 + k:02x}:00.{d}", "class": cls}
            for d, cls in enumerate(spec.devices)
        ]
        out_nodes.append(
            {
                "id": k,
                "cpus": cpus,
                "memory": {
                    "total_mib": spec.memory_mib,
                    "hugepages": pools,
                    "bandwidth_gbps": spec.bandwidth_gbps,
                },
                "nics": nics,
                "pci_devices": devices,
            }
        )
    data: dict[str, Any] = {
        "schema": "nfvplace/chd/v1",
        "id": id,
        "processor": {"vendor": vendor, "model": model, "frequency_mhz": frequency, "flags": flags},
        "numa_nodes": out_nodes,
        "instances": list(instances),
        "interconnect": list(interconnect),
    }
    if hypervisor:
        data["hypervisor"] = {
            "type": "kvm",
            "version": hv_version,
            "capabilities": ALL_CAPS if caps is None else caps,
            "disabled_capabilities": list(disabled_caps),
            "vswitch": vswitch,
        }
    return ComputeHostDescriptor.model_validate(data)


def cpu_set(
    id: int = 0,
    vcpus: int = 4,
    *,
    first_vcpu: int = 0,
    pairs: bool = True,
    memory_mib: int = 4096,
    hugepages_1g: int = 0,
    interfaces: tuple[dict[str, Any], ...] = (),
    thread_policy: str | None = None,
    memory_bandwidth_gbps: float | None = None,
) -> dict[str, Any]:
    ids = list(range(first_vcpu, first_vcpu + vcpus))
    out: dict[str, Any] = {"id": id, "vcpus": ids, "memory_mib": memory_mib}
    if pairs:
        out["howtogroup"] = [[ids[i], ids[i + 1]] for i in range(0, vcpus - 1, 2)]
    if hugepages_1g:
        out["hugepages"] = {"size": "1GiB", "count": hugepages_1g}
    if interfaces:
        out["interfaces"] = list(interfaces)
    if thread_policy:
        out["thread_policy"] = thread_policy
    if memory_bandwidth_gbps is not None:
        out["memory_bandwidth_gbps"] = memory_bandwidth_gbps
    return out


def vm(
    name: str = "vm", cpu_sets: list[dict[str, Any]] | None = None, **extra: Any
) -> VmDescriptor:
    data: dict[str, Any] = {"schema": "nfvplace/vmd/v1", "name": name}
    if cpu_sets is not None:
        data["cpu_sets"] = cpu_sets
    elif "vcpus" not in extra:
        data["cpu_sets"] = [cpu_set()]
    data.update(extra)
    return VmDescriptor.model_validate(data)
