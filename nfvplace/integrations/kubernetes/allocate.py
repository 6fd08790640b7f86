"""The kubelet's allocations, over counts, once the Topology Manager has chosen a hint: the CPU
manager's `allocateCPUs` (aligned CPUs first, then any; `takeByTopologyNUMAPacked` takes whole free
NUMA nodes first, then from the node with the fewest free CPUs), the memory manager's `Allocate`
(default and extended hints, `updateMachineState`) and the device manager's `devicesToAllocate`
(reusable devices first, then aligned ones, fewest free first, then the rest).

Each function takes from `NodeState` in place and returns what it took per NUMA node, or raises
`AllocationError` with the kubelet's reason and the numbers.
"""

from __future__ import annotations

from collections.abc import Mapping

from .hints import Hint, bits, count, is_narrower
from .providers import Reuse, memory_hints
from .state import NodeState, Pool


class AllocationError(Exception):
    """The kubelet would fail the pod's admission while allocating (an admission error)."""


def _packed(available: dict[int, int], totals: Mapping[int, int], need: int) -> dict[int, int]:
    """How many CPUs `takeByTopologyNUMAPacked` takes from each NUMA node (counts only)."""
    taken: dict[int, int] = {}
    order = sorted((n for n, a in available.items() if a > 0), key=lambda n: (available[n], n))
    for node in order:  # whole NUMA nodes whose every CPU is free
        if need and available[node] == totals.get(node) and available[node] <= need:
            taken[node] = available[node]
            need -= available[node]
    left = {n: available[n] - taken.get(n, 0) for n in order}
    for node in sorted((n for n in left if left[n] > 0), key=lambda n: (left[n], n)):
        if not need:
            break
        step = min(need, left[node])
        taken[node] = taken.get(node, 0) + step
        need -= step
    return taken


def allocate_cpus(
    state: NodeState, want: int, hint: Hint, reuse: Reuse, init: bool
) -> dict[int, int]:
    """`allocateCPUs`: from the hint's NUMA nodes first, then from any; reusable CPUs count as
    allocatable. An init container's CPUs become reusable, a later container's stop being so."""
    allocatable = {n: p.free + reuse.cpus.get(n, 0) for n, p in state.cpus.items()}
    if sum(allocatable.values()) < want:
        raise AllocationError(
            f"not enough cpus available to satisfy request: requested={want}, "
            f"available={sum(allocatable.values())}"
        )
    aligned = {n: a for n, a in allocatable.items() if hint.mask is not None and hint.mask >> n & 1}
    taken = _packed(aligned, state.cpu_total, min(want, sum(aligned.values())))
    rest = {n: allocatable[n] - taken.get(n, 0) for n in allocatable}
    for node, amount in _packed(rest, state.cpu_total, want - sum(taken.values())).items():
        taken[node] = taken.get(node, 0) + amount
    for node, amount in taken.items():
        from_reuse = min(amount, reuse.cpus.get(node, 0))
        state.cpus[node].free -= amount - from_reuse
        if init:
            reuse.cpus[node] = reuse.cpus.get(node, 0) + amount - from_reuse
        elif from_reuse:
            reuse.cpus[node] -= from_reuse
    return taken


def allocate_devices(
    state: NodeState, resource: str, want: int, hint: Hint, reuse: Reuse, init: bool
) -> dict[int, int]:
    """`devicesToAllocate`: reusable devices first, then the hint's NUMA nodes (fewest free
    first), then the others."""
    pools = state.devices.get(resource, {})
    reusable = reuse.devices.setdefault(resource, {})
    taken: dict[int, int] = {}
    for node in sorted(reusable):
        step = min(want - sum(taken.values()), reusable[node])
        if step > 0:
            taken[node] = step
            if not init:  # an init container leaves them reusable; a later container takes them
                reusable[node] -= step
    need = want - sum(taken.values())
    free = sum(p.free for p in pools.values())
    if need > free:
        raise AllocationError(
            f"requested number of devices unavailable for {resource}. "
            f"Requested: {need}, Available: {free}"
        )

    def first(node: int) -> tuple[bool, int, int]:
        inside = hint.mask is not None and bool(hint.mask >> node & 1)
        return (not inside, pools[node].free if inside else 0, node)

    for node in sorted(pools, key=first):
        step = min(need, pools[node].free)
        if step > 0:
            pools[node].free -= step
            taken[node] = taken.get(node, 0) + step
            need -= step
            if init:
                reusable[node] = reusable.get(node, 0) + step
    return taken


def _satisfies(state: NodeState, mask: int, requests: Mapping[str, int]) -> bool:
    return all(
        sum(state.memory.get(r, {}).get(n, Pool(0, 0)).free for n in bits(mask)) >= want
        for r, want in requests.items()
    )


def _best(hints: list[Hint]) -> Hint | None:
    """`findBestHint`: preferred first, then the narrowest."""
    best: Hint | None = None
    for hint in hints:
        if best is None or _better(hint, best):
            best = hint
    return best


def _better(hint: Hint, best: Hint) -> bool:
    if hint.preferred != best.preferred:
        return hint.preferred
    assert hint.mask is not None
    assert best.mask is not None
    return is_narrower(hint.mask, best.mask)


def _memory_mask(state: NodeState, hint: Hint, requests: Mapping[str, int], reuse: Reuse) -> int:
    """The mask the memory manager allocates from: the hint, its default or its extension."""
    best = hint
    if hint.mask is None:
        found = _best(memory_hints(state, requests, reuse).get("memory", []))
        if found is None:
            raise AllocationError(
                "failed to get the default NUMA affinity, no NUMA nodes with enough memory is "
                "available"
            )
        if not found.preferred and hint.preferred:
            raise AllocationError("failed to find the default preferred hint")
        best = found
    assert best.mask is not None
    if not _satisfies(state, best.mask, requests):
        wider = [
            h
            for h in memory_hints(state, requests, reuse).get("memory", [])
            if h.mask is not None and h.mask & best.mask == best.mask
        ]
        extended = _best(wider)
        if extended is None:
            raise AllocationError("failed to find NUMA nodes to extend the current topology hint")
        if not extended.preferred and best.preferred:
            raise AllocationError("failed to find the extended preferred hint")
        best = extended
    assert best.mask is not None
    for node in bits(best.mask):
        group = state.memory_groups.get(node, 0)
        if count(best.mask) > 1 and group and (count(group) == 1 or group != best.mask):
            raise AllocationError("preferred hint violates NUMA node allocation")
    return best.mask


def allocate_memory(
    state: NodeState, requests: Mapping[str, int], hint: Hint, reuse: Reuse, init: bool
) -> dict[str, dict[int, int]]:
    """The memory manager's `Allocate`: each memory type from the mask's nodes in order."""
    mask = _memory_mask(state, hint, requests, reuse)
    reusable = reuse.memory.setdefault(mask, {})
    taken: dict[str, dict[int, int]] = {}
    for resource, want in requests.items():
        need = max(want - reusable.get(resource, 0), 0)
        for node in bits(mask):
            state.memory_groups[node] = mask
            pool = state.memory.get(resource, {}).get(node)
            if pool is None or not need or pool.free <= 0:
                continue
            step = min(need, pool.free)
            pool.free -= step
            need -= step
            taken.setdefault(resource, {})[node] = step
        if init:
            reusable[resource] = max(reusable.get(resource, 0), want)
        elif reusable.get(resource):
            reusable[resource] = max(reusable[resource] - want, 0)
    return taken
