"""Each NUMA node's set-up and use: reserved, dedicated and shared PUs, hugepages, NIC ports and VFs
(and, for an export without NICs, synthetic ones)."""

from __future__ import annotations

import random

from ..models.chd import (
    ComputeHostDescriptor,
    Cpu,
    CpuState,
    HugepagePool,
    Nic,
    NumaNode,
    Port,
    PortUsage,
    VirtualFunction,
)
from .tables import (
    DEFAULT_SPEED_GBPS,
    NOMINAL_SPEED_GBPS,
    SHARED_CORES_PER_NODE,
    SHARED_RATIO,
    VFS_IN_USE,
    VFS_PER_PORT,
)


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


def nic_in_use(nic: Nic, rng: random.Random, taken: set[str], owners: list[str]) -> Nic:
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


def with_synthetic_nics(chd: ComputeHostDescriptor, taken: set[str]) -> ComputeHostDescriptor:
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


def node_in_use(
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
    nics = tuple(nic_in_use(nic, rng, taken, owners) for nic in node.nics)
    return node.model_copy(update={"cpus": tuple(cpus), "memory": memory, "nics": nics}), reserved
