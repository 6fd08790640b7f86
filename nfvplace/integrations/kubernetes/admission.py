"""Whether the kubelet of a node would admit a pod, and on which NUMA nodes it would put it: the
Topology Manager's scopes (`scope_container.go`, `scope_pod.go`, `scope.go` of kubelet v1.34) over
the hint providers and allocations of this package, on a node's counts.

At `container` scope each container (init containers and sidecars first, in order, then the app
containers) gets the merged hint of the providers, must be admitted by the policy, and is allocated
before the next is considered. At `pod` scope the pod's totals get one hint, which every container
is then allocated with. Policy `none` aligns nothing but still allocates (and fails when too few
exclusive CPUs or devices are free).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...dialects.kubernetes import (
    INIT,
    Container,
    Pod,
    device_requests,
    exclusive_cpus,
    memory_requests,
    pod_total,
)
from ...models.chd import TopologyManager
from .allocate import AllocationError, allocate_cpus, allocate_devices, allocate_memory
from .hints import NONE, Hint, UndecidedError, bits, merge
from .providers import Reuse, providers
from .state import Consumption, NodeState


@dataclass(frozen=True)
class Demand:
    """What one container (or the pod, at pod scope) asks of the kubelet's managers."""

    name: str
    cpus: int
    memory: Mapping[str, int]
    devices: Mapping[str, int]

    @property
    def empty(self) -> bool:
        return not (self.cpus or self.memory or self.devices)


@dataclass(frozen=True)
class Admission:
    """The kubelet's answer for a pod on a node: admitted or not (and why, with the numbers), the
    NUMA nodes each container (or the pod) was aligned to, and what it takes per NUMA node."""

    admit: bool
    reason: str = ""
    affinity: tuple[tuple[str, tuple[int, ...] | None], ...] = ()
    consumption: Consumption | None = None


def container_demand(pod: Pod, container: Container) -> Demand:
    return Demand(
        container.name,
        exclusive_cpus(pod, container),
        memory_requests(pod, container),
        device_requests(container),
    )


def pod_demand(pod: Pod) -> Demand:
    """The pod's totals as the providers' `GetPodTopologyHints` count them (the memory manager
    counts only the memory types its app containers ask for)."""
    cpus = pod_total(pod, lambda c: {"cpu": exclusive_cpus(pod, c)}).get("cpu", 0)
    memory = pod_total(pod, lambda c: memory_requests(pod, c))
    app_types = {name for c in pod.app_containers for name in memory_requests(pod, c)}
    return Demand(
        pod.name,
        cpus,
        {name: amount for name, amount in memory.items() if name in app_types},
        pod_total(pod, device_requests),
    )


def _allocate(state: NodeState, pod: Pod, container: Container, hint: Hint, reuse: Reuse) -> None:
    demand = container_demand(pod, container)
    init = container.kind == INIT
    try:
        if demand.cpus:
            allocate_cpus(state, demand.cpus, hint, reuse, init)
        if demand.memory and state.memory_manager:
            allocate_memory(state, demand.memory, hint, reuse, init)
        for resource, want in demand.devices.items():
            if resource in state.devices:
                allocate_devices(state, resource, want, hint, reuse, init)
    except AllocationError as exc:
        raise AllocationError(f"container {container.name!r}: {exc}") from None


MAX_NUMA_NODES = 16
"""Most NUMA nodes decided for (the kubelet's Topology Manager takes 8 unless given the
`max-allowable-numa-nodes` option; every set of them is a mask the providers consider)."""


def admit(pod: Pod, node: NodeState, manager: TopologyManager) -> Admission:
    """What the kubelet (Topology Manager `manager`) does with `pod` on a node in state `node`.

    Raises `UndecidedError` for a node of more than `MAX_NUMA_NODES` NUMA nodes, or when the hints to
    merge are too many."""
    if len(node.numa.nodes) > MAX_NUMA_NODES:
        raise UndecidedError(f"{len(node.numa.nodes)} NUMA nodes (at most {MAX_NUMA_NODES})")
    state, reuse = node.copy(), Reuse()
    policy, closest = str(manager.policy), manager.prefer_closest_numa_nodes
    chosen: list[tuple[str, tuple[int, ...] | None]] = []
    try:
        if policy == NONE:
            for container in pod.containers:
                _allocate(state, pod, container, Hint(None, False), reuse)
        elif str(manager.scope) == "container":
            for container in pod.containers:
                demand = container_demand(pod, container)
                hint, admitted = merge(
                    policy, state.numa, providers(state, *_parts(demand), reuse), closest
                )
                if not admitted:
                    return Admission(False, topology_error(manager, demand, state))
                chosen.append((container.name, _nodes(hint)))
                _allocate(state, pod, container, hint, reuse)
        else:
            demand = pod_demand(pod)
            hint, admitted = merge(
                policy, state.numa, providers(state, *_parts(demand), None), closest
            )
            if not admitted:
                return Admission(False, topology_error(manager, demand, state))
            chosen.append((pod.name, _nodes(hint)))
            for container in pod.containers:
                _allocate(state, pod, container, hint, reuse)
    except AllocationError as exc:
        return Admission(False, f"UnexpectedAdmissionError: {exc}")
    return Admission(True, "", tuple(chosen), consumption(node, state))


def _parts(demand: Demand) -> tuple[int, Mapping[str, int], Mapping[str, int]]:
    return demand.cpus, demand.memory, demand.devices


def _nodes(hint: Hint) -> tuple[int, ...] | None:
    return None if hint.mask is None else tuple(bits(hint.mask))


def consumption(before: NodeState, after: NodeState) -> Consumption:
    """What was taken between two states, per resource and NUMA node."""
    out: Consumption = {}
    pairs = [("cpu", before.cpus, after.cpus)]
    pairs += [(r, p, after.memory[r]) for r, p in before.memory.items()]
    pairs += [(r, p, after.devices[r]) for r, p in before.devices.items()]
    for resource, old, new in pairs:
        taken = {n: old[n].free - new[n].free for n in old if old[n].free > new[n].free}
        if taken:
            out[resource] = taken
    return out


def amount(resource: str, value: int) -> str:
    """`8 CPUs`, `4 GiB hugepages-1Gi`, `2 intel.com/sriov`: an amount in words."""
    if resource == "cpu":
        return f"{value} CPU{'s' if value != 1 else ''}"
    if resource == "memory" or resource.startswith("hugepages-"):
        for unit, size in (("GiB", 2**30), ("MiB", 2**20)):
            if value >= size and value % size == 0:
                return f"{value // size} {unit} {resource}"
        return f"{value / 2**20:.1f} MiB {resource}"
    return f"{value} {resource}"


def topology_error(manager: TopologyManager, demand: Demand, state: NodeState) -> str:
    """The kubelet's `TopologyAffinityError`, with what was asked and what each NUMA node has."""
    memory = demand.memory if state.memory_manager else {}
    asked = {"cpu": demand.cpus, **memory, **demand.devices}
    wanted = [amount(r, v) for r, v in asked.items() if v]
    per_node = []
    for node in state.numa.nodes:
        free = [amount(r, state.free_of(r).get(node, 0)) for r, v in asked.items() if v]
        per_node.append(f"NUMA node {node}: {', '.join(free)}")
    return (
        f"Topology Affinity Error: the kubelet's {manager.policy} policy ({manager.scope} scope) "
        f"cannot align {demand.name!r} ({', '.join(wanted)}); free: {'; '.join(per_node)}"
    )
