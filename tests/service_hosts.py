"""Small synthetic hosts and VMs for the service tests (plain data, as an agent would send)."""

from __future__ import annotations

from typing import Any


def host(
    host_id: str,
    *,
    nodes: int = 2,
    cores: int = 4,
    pages_1g: int = 4,
    vfs: int = 2,
    ports: int = 1,
) -> dict[str, Any]:
    """A CHD: `nodes` NUMA nodes of `cores` 2-thread cores (PU 0 host-reserved on node 0),
    `pages_1g` free 1 GiB pages per node, `ports` 10G ports per node with `vfs` VFs each."""
    numa_nodes = []
    per_node = cores * 2
    for n in range(nodes):
        cpus = []
        for c in range(cores):
            first = n * per_node + c
            second = first + cores
            for pu in (first, second):
                cpus.append(
                    {
                        "id": pu,
                        "core": n * cores + c,
                        "siblings": [first, second],
                        "eligible": pu != 0,
                        "state": "free",
                    }
                )
        nics = [
            {
                "vendor": "Intel",
                "model": "Ethernet Controller X710",
                "ports": [
                    {
                        "pci_address": f"0000:{0x18 + n * 0x40 + p:02x}:00.0",
                        "speed_gbps": 10,
                        "vfs": [
                            {"pci_address": f"0000:{0x18 + n * 0x40 + p:02x}:02.{v}"}
                            for v in range(vfs)
                        ],
                    }
                    for p in range(ports)
                ],
            }
        ]
        numa_nodes.append(
            {
                "id": n,
                "cpus": cpus,
                "memory": {
                    "total_mib": 65536,
                    "hugepages": [{"size_kib": 1048576, "total": pages_1g, "used": 0}],
                },
                "nics": nics,
            }
        )
    return {
        "schema": "nfvplace/chd/v1",
        "id": host_id,
        "processor": {"vendor": "GenuineIntel", "model": "Xeon", "flags": ["aes", "vmx"]},
        "hypervisor": {"type": "kvm", "capabilities": ["cpu_pinning", "hugepage_numa_pinning"]},
        "numa_nodes": numa_nodes,
    }


def vm(
    name: str = "dp-vm",
    *,
    vcpus: int = 2,
    pages: int = 1,
    sriov: int = 1,
    dedicated: int = 0,
    paired: bool = False,
) -> dict[str, Any]:
    """A one-cpu-set VM Descriptor: `vcpus` pinned vCPUs (in howtogroup pairs when `paired`),
    `pages` 1 GiB pages, SR-IOV VFs."""
    interfaces = [{"name": f"vf{i}", "mode": "sriov", "bandwidth_gbps": 1} for i in range(sriov)]
    interfaces += [{"name": f"pt{i}", "mode": "dedicated"} for i in range(dedicated)]
    cpu_set: dict[str, Any] = {
        "id": 0,
        "vcpus": list(range(vcpus)),
        "memory_mib": max(pages, 1) * 1024,
        "interfaces": interfaces,
    }
    if paired:
        cpu_set["howtogroup"] = [[v, v + 1] for v in range(0, vcpus - 1, 2)]
    if pages:
        cpu_set["hugepages"] = {"size": "1GiB", "count": pages}
    return {"schema": "nfvplace/vmd/v1", "name": name, "cpu_sets": [cpu_set]}
