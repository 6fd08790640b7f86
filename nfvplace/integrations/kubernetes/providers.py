"""The kubelet's three hint providers, over counts: the CPU manager's static policy
(`generateCPUTopologyHints`), the memory manager's Static policy (`calculateHints`) and the device
manager (`generateDeviceTopologyHints`), kubelet v1.34, `pkg/kubelet/cm/{cpumanager,memorymanager,
devicemanager}`.

Where the kubelet holds sets of CPU and device ids, these hold how many of them each NUMA node has:
a CPU or device is on one NUMA node, so every count the kubelet compares is a sum of these.
`Reuse` is what a pod's init containers hold that its later containers may take again (the
kubelet's `cpusToReuse`, `devicesToReuse` and `initContainersReusableMemory`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import combinations

from .hints import Hint, ProviderHints, bits, count, mask_of
from .state import NodeState, Pool


@dataclass
class Reuse:
    """A pod's reusable resources: CPUs and devices per NUMA node, memory per NUMA mask."""

    cpus: dict[int, int] = field(default_factory=dict)
    devices: dict[str, dict[int, int]] = field(default_factory=dict)
    memory: dict[int, dict[str, int]] = field(default_factory=dict)


def iterate_masks(nodes: tuple[int, ...]) -> Iterator[int]:
    """`bitmask.IterateBitMasks`: every non-empty set of nodes, one node first, then two, ..."""
    for size in range(1, len(nodes) + 1):
        for chosen in combinations(nodes, size):
            yield mask_of(chosen)


def _prefer_narrowest(hints: list[Hint], narrowest: int) -> list[Hint]:
    return [Hint(h.mask, h.mask is not None and count(h.mask) == narrowest) for h in hints]


def cpu_hints(state: NodeState, request: int, reusable: Mapping[int, int]) -> list[Hint]:
    """`generateCPUTopologyHints`: the masks with enough free (or reusable) CPUs; preferred those
    as narrow as the narrowest whose CPUs (all of them) could hold the request."""
    nodes = tuple(n for n in state.numa.nodes if state.cpu_total.get(n, 0) > 0)
    narrowest = len(nodes)
    hints = []
    for mask in iterate_masks(nodes):
        chosen = bits(mask)
        if sum(state.cpu_total[n] for n in chosen) >= request and count(mask) < narrowest:
            narrowest = count(mask)
        if any(amount and not mask >> n & 1 for n, amount in reusable.items()):
            continue  # a reusable CPU outside the mask: the kubelet disregards the mask
        matching = sum(reusable.values()) + sum(state.cpus[n].free for n in chosen)
        if matching >= request:
            hints.append(Hint(mask, False))
    return _prefer_narrowest(hints, narrowest)


def device_hints(
    pools: Mapping[int, Pool], nodes: tuple[int, ...], request: int, reusable: Mapping[int, int]
) -> list[Hint]:
    """`generateDeviceTopologyHints` over devices counted per NUMA node."""
    narrowest = len(nodes)
    hints = []
    for mask in iterate_masks(nodes):
        chosen = bits(mask)
        in_mask = sum(pools[n].allocatable for n in chosen if n in pools)
        if in_mask >= request and count(mask) < narrowest:
            narrowest = count(mask)
        if any(amount and not mask >> n & 1 for n, amount in reusable.items()):
            continue
        matching = sum(reusable.values()) + sum(pools[n].free for n in chosen if n in pools)
        if matching >= request:
            hints.append(Hint(mask, False))
    return _prefer_narrowest(hints, narrowest)


def devices_provider(
    state: NodeState, requests: Mapping[str, int], reuse: Reuse | None
) -> dict[str, list[Hint] | None]:
    """The device manager's hints per resource: None for a resource with no NUMA affinity (no
    NUMA node reports it), [] when too few are free."""
    out: dict[str, list[Hint] | None] = {}
    for resource, request in requests.items():
        pools = state.devices.get(resource)
        if not pools or not any(p.allocatable for p in pools.values()):
            out[resource] = None
            continue
        reusable = (reuse.devices.get(resource, {}) if reuse else {}) or {}
        if sum(p.free for p in pools.values()) + sum(reusable.values()) < request:
            out[resource] = []
            continue
        out[resource] = device_hints(pools, state.numa.nodes, request, reusable)
    return out


def memory_hints(
    state: NodeState, requests: Mapping[str, int], reuse: Reuse | None
) -> dict[str, list[Hint]]:
    """`calculateHints` of the memory manager's Static policy (an empty map when no mask holds the
    request, which the Topology Manager reads as no preference)."""
    nodes = state.numa.nodes
    narrowest = len(nodes)
    hints: dict[str, list[Hint]] = {}
    for mask in iterate_masks(nodes):
        chosen = bits(mask)
        pools = {r: [state.memory.get(r, {}).get(n, Pool(0, 0)) for n in chosen] for r in requests}
        if any(sum(p.allocatable for p in pools[r]) < want for r, want in requests.items()):
            continue
        narrowest = min(narrowest, count(mask))
        if not _memory_group_allows(state, mask):
            continue
        reusable = reuse.memory.get(mask, {}) if reuse else {}
        if any(
            sum(p.free for p in pools[r]) + reusable.get(r, 0) < want
            for r, want in requests.items()
        ):
            continue
        for resource in requests:
            hints.setdefault(resource, []).append(Hint(mask, False))
    return {r: _prefer_narrowest(h, narrowest) for r, h in hints.items()}


def _memory_group_allows(state: NodeState, mask: int) -> bool:
    """A node whose memory went to a group of nodes serves that very group only."""
    chosen = bits(mask)
    for node in chosen:
        group = state.memory_groups.get(node, 0)
        if len(chosen) == 1:
            if count(group) > 1:
                return False
        elif group and (count(group) == 1 or group != mask):
            return False
    return True


def providers(
    state: NodeState,
    cpus: int,
    memory: Mapping[str, int],
    devices: Mapping[str, int],
    reuse: Reuse | None,
) -> list[ProviderHints]:
    """The three providers' hints for one container (or a pod): CPU, memory, devices."""
    cpu: ProviderHints = (
        {"cpu": cpu_hints(state, cpus, reuse.cpus if reuse else {})} if cpus else None
    )
    mem: ProviderHints = (
        memory_hints(state, memory, reuse) if memory and state.memory_manager else None
    )
    return [cpu, mem, devices_provider(state, devices, reuse) or None]
