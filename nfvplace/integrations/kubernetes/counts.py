"""A node's CHD with what assumed pods take marked as taken, for the engine to score around them:
free PUs dedicated, normal memory and hugepages used, VFs and devices in use, per NUMA node."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...models.chd import ComputeHostDescriptor, CpuState, NumaNode, Port, VirtualFunction
from .state import MIB, hugepages_name

ASSUMED_OWNER = "kubernetes:assumed"
"""The owner of what an assumed pod takes (the pod's node does not show it yet)."""


def _sum(consumptions: Iterable[Mapping[str, Mapping[int, int]]]) -> dict[str, dict[int, int]]:
    total: dict[str, dict[int, int]] = {}
    for consumption in consumptions:
        for resource, per_node in consumption.items():
            for node, amount in per_node.items():
                total.setdefault(resource, {})[node] = total.get(resource, {}).get(node, 0) + amount
    return total


def with_consumption(
    host: ComputeHostDescriptor, consumptions: Iterable[Mapping[str, Mapping[int, int]]]
) -> ComputeHostDescriptor:
    total = _sum(consumptions)
    nodes = tuple(_node(node, total) for node in host.numa_nodes)
    return host.model_copy(update={"numa_nodes": nodes})


def _node(node: NumaNode, total: Mapping[str, Mapping[int, int]]) -> NumaNode:
    def amount(resource: str | None) -> int:
        return total.get(resource or "", {}).get(node.id, 0)

    cpus, left = [], amount("cpu")
    for cpu in node.cpus:
        if left and cpu.eligible and cpu.state is CpuState.free:
            cpu = cpu.model_copy(update={"state": CpuState.dedicated, "owner": ASSUMED_OWNER})
            left -= 1
        cpus.append(cpu)
    nics = tuple(
        nic.model_copy(
            update={"ports": tuple(_port(p, amount(p.physical_network)) for p in nic.ports)}
        )
        for nic in node.nics
    )
    devices, left_by_model = [], {d.model or "": amount(d.model) for d in node.pci_devices}
    for device in node.pci_devices:
        model = device.model or ""
        if left_by_model[model] and device.eligible and not device.in_use:
            device = device.model_copy(update={"in_use": True, "owner": ASSUMED_OWNER})
            left_by_model[model] -= 1
        devices.append(device)
    memory = node.memory
    pools = tuple(
        pool.model_copy(
            update={
                "used": min(
                    pool.used + amount(hugepages_name(pool.size_kib)) // (pool.size_kib * 1024),
                    pool.total,
                )
            }
        )
        for pool in memory.hugepages
    )
    normal = memory.normal.model_copy(
        update={"used_mib": memory.normal.used_mib + -(-amount("memory") // MIB)}
    )
    return node.model_copy(
        update={
            "cpus": tuple(cpus),
            "memory": memory.model_copy(update={"hugepages": pools, "normal": normal}),
            "nics": nics,
            "pci_devices": tuple(devices),
        }
    )


def _port(port: Port, count: int) -> Port:
    vfs: list[VirtualFunction] = []
    for vf in port.vfs:
        if count and not vf.in_use:
            vf = vf.model_copy(update={"in_use": True, "owner": ASSUMED_OWNER})
            count -= 1
        vfs.append(vf)
    return port.model_copy(update={"vfs": tuple(vfs)})
