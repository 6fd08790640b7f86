"""A Kubernetes node's NUMA resources as counts: what the kubelet's CPU, memory and device managers
hold per NUMA node, read from its CHD (itself read from a NodeResourceTopology object).

`NodeState` is mutable on purpose: the admission simulation takes resources from it container by
container, as the kubelet does; `copy()` before simulating.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...models.chd import ComputeHostDescriptor, TopologyManager
from ...placement.resources import KUBELET_COUNTS
from ...placement.resources.kubelet import KubeletPool
from ...store.assumed_rows import totals
from .hints import NumaInfo

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
    # which NodeState this is, for the decisions kept by node: a node's name and generation name
    # another state when its object was created again, or in another store of the same process
    made: int = field(default_factory=itertools.count().__next__, compare=False, repr=False)

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

    def give(self, node: int, totals: Mapping[str, int]) -> None:
        """Give back on `node` what a pod that left held (resource -> amount), never above what
        the kubelet may hand out; a resource the node does not count there is left as it is."""
        for resource, amount in totals.items():
            pool = self._pools(resource).get(node)
            if pool is not None:
                pool.free = min(pool.free + amount, pool.allocatable)

    def add(self, node: int, pool: KubeletPool) -> None:
        """A pool of `node` as a kind reads it: CPUs and memory as they are, devices of one name
        summed over the node's ports or devices."""
        if pool.manager == "cpu":
            self.cpu_total[node] = pool.total
            self.cpus[node] = Pool(pool.allocatable, pool.free)
        elif pool.manager == "memory":
            self.memory.setdefault(pool.resource, {})[node] = Pool(pool.allocatable, pool.free)
            if pool.in_use:
                self.memory_groups[node] = 1 << node
        else:
            held = self.devices.setdefault(pool.resource, {}).setdefault(node, Pool(0, 0))
            held.allocatable += pool.allocatable
            held.free += pool.free

    def _pools(self, resource: str) -> dict[int, Pool]:
        if resource == "cpu":
            return self.cpus
        return self.memory.get(resource) or self.devices.get(resource) or {}

    def free_totals(self) -> dict[str, int]:
        """Resource -> free amount over the node's NUMA nodes."""
        return totals({r: self.free_of(r) for r in ("cpu", *self.memory, *self.devices)})

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
    """The counts a CHD says, as the kubelet's managers hold them: each NUMA node's pools as the
    kinds read them (`resources.KUBELET_COUNTS`, `kubelet_pools`)."""
    state = NodeState(
        numa=NumaInfo(tuple(n.id for n in host.numa_nodes), _distances(host)),
        cpu_total={},
        cpus={},
        memory={},
        devices={},
    )
    for node in host.numa_nodes:
        for kind in KUBELET_COUNTS:
            for pool in kind.kubelet_pools(host, node):
                state.add(node.id, pool)
    return state


def topology_manager(host: ComputeHostDescriptor) -> TopologyManager:
    """The node's Topology Manager; the kubelet's defaults (policy none) when the CHD has none."""
    return host.topology_manager or TopologyManager()


def total(consumption: Mapping[str, Mapping[int, int]]) -> dict[str, int]:
    return {resource: sum(per_node.values()) for resource, per_node in consumption.items()}


class Counted:
    """Each node's counts and Topology Manager, kept for its descriptor object (counting a CHD
    is the cost of a node that did not change: the readers hand out the same object while a node
    is unchanged, and compared by identity it cannot be another store's node of the same name and
    generation)."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, tuple[ComputeHostDescriptor, NodeState, TopologyManager]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def of(self, node: str, host: ComputeHostDescriptor) -> tuple[NodeState, TopologyManager]:
        with self._lock:
            kept = self._kept.get(node)
            if kept is not None and kept[0] is host:
                self._kept.move_to_end(node)
                return kept[1], kept[2]
        state, manager = node_state(host), topology_manager(host)
        with self._lock:
            self._kept[node] = (host, state, manager)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)
        return state, manager


COUNTED = Counted()
