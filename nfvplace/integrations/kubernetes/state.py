"""A Kubernetes node's NUMA resources as counts: what the kubelet's CPU, memory and device managers
hold per NUMA node, read from its CHD (itself read from a NodeResourceTopology object).

`NodeState` is mutable on purpose: the admission simulation takes resources from it container by
container, as the kubelet does; `copy()` before simulating.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ...models.chd import ComputeHostDescriptor, CpuState, NodeMemory, NumaNode, TopologyManager
from .hints import NumaInfo

MIB = 2**20
Consumption = dict[str, dict[int, int]]
"""Resource name -> NUMA node -> amount (CPUs, bytes of memory or hugepages, devices)."""


@dataclass
class Pool:
    """One resource on one NUMA node: how much the kubelet may hand out, and how much is free."""

    allocatable: int
    free: int


@dataclass
class NodeState:
    """Per NUMA node: CPUs (all of them, and the free exclusive ones), memory and hugepages (when
    the memory manager is Static), devices; and which group of nodes each node's memory was given
    with (the memory manager's `Cells`, 0 when never assigned)."""

    numa: NumaInfo
    cpu_total: dict[int, int]
    cpus: dict[int, Pool]
    memory: dict[str, dict[int, Pool]]
    devices: dict[str, dict[int, Pool]]
    memory_groups: dict[int, int] = field(default_factory=dict)

    def copy(self) -> NodeState:
        def pools(per_node: dict[int, Pool]) -> dict[int, Pool]:
            return {node: Pool(p.allocatable, p.free) for node, p in per_node.items()}

        return NodeState(
            self.numa,
            self.cpu_total,
            pools(self.cpus),
            {resource: pools(per) for resource, per in self.memory.items()},
            {resource: pools(per) for resource, per in self.devices.items()},
            dict(self.memory_groups),
        )

    @property
    def memory_manager(self) -> bool:
        return "memory" in self.memory

    def take(self, consumption: Consumption) -> None:
        """Subtract what another pod holds (an assumed claim), never below zero."""
        for resource, per_node in consumption.items():
            pools = self._pools(resource)
            for node, amount in per_node.items():
                pool = pools.get(node)
                if pool is not None:
                    pool.free = max(pool.free - amount, 0)
                    if resource in self.memory and amount:
                        self.memory_groups.setdefault(node, 1 << node)

    def _pools(self, resource: str) -> dict[int, Pool]:
        if resource == "cpu":
            return self.cpus
        return self.memory.get(resource) or self.devices.get(resource) or {}

    def free_of(self, resource: str) -> dict[int, int]:
        return {node: pool.free for node, pool in self._pools(resource).items()}


def _distances(host: ComputeHostDescriptor) -> dict[int, dict[int, int]] | None:
    if host.numa_distances is None:
        return None
    ids = [node.id for node in host.numa_nodes]
    return {
        i: dict(zip(ids, row, strict=False))
        for i, row in zip(ids, host.numa_distances, strict=False)
    }


def node_state(host: ComputeHostDescriptor) -> NodeState:
    """The counts a CHD says, as the kubelet's managers hold them. Memory counts only when the
    node's memory manager is Static (the CHD's hypervisor pins NUMA memory); a node's memory in use
    is read as given to that node alone (NodeResourceTopology does not say the groups)."""
    pinning = host.hypervisor is not None and "numa_memory_pinning" in {
        str(c) for c in host.hypervisor.capabilities
    }
    state = NodeState(
        numa=NumaInfo(tuple(n.id for n in host.numa_nodes), _distances(host)),
        cpu_total={},
        cpus={},
        memory={},
        devices={},
    )
    for node in host.numa_nodes:
        eligible = [c for c in node.cpus if c.eligible]
        state.cpu_total[node.id] = len(node.cpus)
        free = sum(c.state is CpuState.free for c in eligible)
        state.cpus[node.id] = Pool(len(eligible), free)
        if pinning:
            _memory(state, node.id, node.memory)
        _node_devices(state, node)
    return state


def _memory(state: NodeState, node_id: int, memory: NodeMemory) -> None:
    allocatable = (memory.normal_total_mib - memory.normal.reserved_mib) * MIB
    used = memory.normal.used_mib > 0
    state.memory.setdefault("memory", {})[node_id] = Pool(allocatable, memory.normal_free_mib * MIB)
    for pool in memory.hugepages:
        name = hugepages_name(pool.size_kib)
        size = pool.size_kib * 1024
        state.memory.setdefault(name, {})[node_id] = Pool(pool.total * size, pool.free * size)
        used = used or pool.used > 0
    if used:
        state.memory_groups[node_id] = 1 << node_id


def hugepages_name(size_kib: int) -> str:
    """1048576 -> `hugepages-1Gi`, 2048 -> `hugepages-2Mi` (the kubelet's resource names)."""
    for unit, factor in (("Gi", 1024 * 1024), ("Mi", 1024), ("Ki", 1)):
        if size_kib % factor == 0:
            return f"hugepages-{size_kib // factor}{unit}"
    raise AssertionError("unreachable: 1 KiB divides every size")


def _node_devices(state: NodeState, node: NumaNode) -> None:
    for port in node.ports:
        if port.physical_network and port.vfs:
            pool = state.devices.setdefault(port.physical_network, {}).setdefault(
                node.id, Pool(0, 0)
            )
            pool.allocatable += len(port.vfs)
            pool.free += sum(not vf.in_use for vf in port.vfs)
    for device in node.pci_devices:
        if device.model and device.eligible:
            pool = state.devices.setdefault(device.model, {}).setdefault(node.id, Pool(0, 0))
            pool.allocatable += 1
            pool.free += not device.in_use


def topology_manager(host: ComputeHostDescriptor) -> TopologyManager:
    """The node's Topology Manager; the kubelet's defaults (policy none) when the CHD has none."""
    return host.topology_manager or TopologyManager()


def total(consumption: Mapping[str, Mapping[int, int]]) -> dict[str, int]:
    return {resource: sum(per_node.values()) for resource, per_node in consumption.items()}
