"""Copies of one VM: a batch (or a VNF) whose instances are all the same VM Descriptor.

What-if capacity counts, host by host, the instances the engine places there one after the other
(`capacity.py`; placements on one host never change another's). For copies of one VM that count is
exact, so it decides the batch, not a search: a batch of more than it is refused at once, with each
host's count and what stopped it (cores, hugepages, VFs, ...: what the VM asks); a batch of at most it
is dealt to hosts by the policy (`_plan`) and each host's share placed there by the engine, instance
after instance, as capacity counted them. Capacity and batch placement are one counting model.

The hosts of a share, by policy: pack fills the hosts that take the most first (the fewest hosts),
spread gives each instance to the host with the largest share of free threads (that share going down
as the host's count is used up), least-fragmentation fills the hosts that take the fewest first (the
tightest); equal counts go in the policy's single-VM host order.
Groups with links or anti-affinity, or of several VMs, are the joint search's (`search.py`).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import Counter

import numpy as np

from ...models.vmd import VmDescriptor
from ..engine.explain import Reasons
from ..engine.place import place_vm, rank
from ..index import FleetIndex, index_of
from ..options import Options, Policy
from ..reasons import BY_CODE
from ..resources.cpu import CPU
from ..result import Diagnosis, PlacementResult, Rejection, Unplaced
from .batch import Group, Unit
from .capacity import HostCount, count_fleet, limit_of


def copies_of(group: Group) -> VmDescriptor | None:
    """The VM every instance of `group` is, if they are copies of one VM without joint rules."""
    first = group.members[0].vm
    if group.links or group.apart or any(m.vm != first for m in group.members[1:]):
        return None
    return first


def _plan(
    fleet: FleetIndex, vm: VmDescriptor, options: Options, counts: dict[int, HostCount], n: int
) -> list[tuple[int, int]]:
    """(host, instances) for `n` instances, each host within its count, in the policy's order."""
    everything = np.ones(len(fleet), dtype=np.bool_)
    keys = rank(fleet, vm, options, everything, Reasons()).keys
    room = {i: c.count for i, c in counts.items() if c.count}
    key = {i: (int(keys[i]), i) for i in room}
    if options.policy is Policy.spread:
        return _spread(fleet, room, key, n)
    sign = 1 if options.policy is Policy.least_fragmentation else -1
    plan: list[tuple[int, int]] = []
    for i in sorted(room, key=lambda i: (sign * room[i], key[i])):
        if n <= 0:
            break
        plan.append((i, min(room[i], n)))
        n -= plan[-1][1]
    return plan


def _spread(
    fleet: FleetIndex, room: dict[int, int], key: dict[int, tuple[int, int]], n: int
) -> list[tuple[int, int]]:
    """One instance at a time to the host with the largest share of free threads (spread's host
    score), that share going down with each instance as the host's count is used up."""
    cpu = fleet.table(CPU)
    share = {i: float(cpu.free_threads[i]) / max(int(cpu.total_threads[i]), 1) for i in room}
    given: Counter[int] = Counter()
    heap = [(-share[i], key[i]) for i in room]
    heapq.heapify(heap)
    for _ in range(n):
        _, (k, i) = heapq.heappop(heap)
        given[i] += 1
        if given[i] < room[i]:
            heapq.heappush(heap, (-share[i] * (room[i] - given[i]) / room[i], (k, i)))
    return sorted(given.items(), key=lambda item: key[item[0]])


def _realise(
    fleet: FleetIndex,
    vm: VmDescriptor,
    options: Options,
    plan: list[tuple[int, int]],
    units: list[Unit],
) -> PlacementResult | None:
    """Each host's share placed there by the engine, one after the other (None: the engine took
    fewer than counted, which the counting model's tests rule out)."""
    configurations, hosts = [], {}
    todo = iter(units)
    for i, share in plan:
        single = index_of([fleet.hosts[i]], private=True)
        for _ in range(share):
            outcome = place_vm(single, vm, options, instance=next(todo).instance)
            if outcome.host is None or outcome.configuration is None:
                return None
            single.update(outcome.host)
            configurations.append(outcome.configuration)
        hosts[fleet.host_ids[i]] = single.hosts[0]
    explanation: tuple[str, ...] = ()
    if options.explain:
        shares = ", ".join(f"{fleet.host_ids[i]} {share}" for i, share in plan)
        explanation = (
            f"{len(configurations)} copies of {vm.name} on {len(plan)} hosts, each host's share "
            f"within what capacity counts there ({options.policy.value}): {shares}",
            *(f"{c.owner} -> {c.host}" for c in configurations),
        )
    return PlacementResult(
        configurations=tuple(configurations), hosts=hosts, explanation=explanation
    )


def _refusal(
    fleet: FleetIndex, vm: VmDescriptor, options: Options, counts: dict[int, HostCount]
) -> Reasons:
    """Why one more copy fits nowhere: each host's count and what stopped it there, and the
    engine's own reasons for the hosts that take none."""
    reasons = Reasons()
    full: dict[str, list[int]] = {}
    for i, c in sorted(counts.items()):
        if c.count:
            full.setdefault(limit_of(c.stops), []).append(i)
    for limit, hosts in full.items():
        phrase = f"run out of {limit} after their share"

        def build(
            hosts: list[int] = hosts, phrase: str = phrase, limit: str = limit
        ) -> list[Rejection]:
            out = []
            for i in hosts:
                c = counts[i]
                stops = dict.fromkeys(c.stops)
                meaning = "; ".join(BY_CODE[s].meaning for s in stops if s in BY_CODE)
                message = f"takes {c.count} instances of {vm.name}, then {meaning or limit}"
                code = c.stops[0] if c.stops else "unknown"
                out.append(
                    Rejection(
                        fleet.host_ids[i], code, message, phrase, c.count + 1, c.count, "capacity"
                    )
                )
            return out

        reasons.add(phrase, len(hosts), build)
    none = np.ones(len(fleet), dtype=np.bool_)
    none[[i for i, c in counts.items() if c.count]] = False
    if none.any():  # the hosts that take not even one: the single-VM engine says why
        place_vm(fleet, vm, options, consider=none, reasons=reasons)
    return reasons


def place_copies(
    fleet: FleetIndex, group: Group, vm: VmDescriptor, options: Options, mode: str
) -> PlacementResult | None:
    """Place `group`, copies of `vm`, by capacity's count (None: leave it to the joint search)."""
    counts = count_fleet(fleet, vm, options)
    total = sum(c.count for c in counts.values())
    units = group.units(options.instance)
    if len(units) > total and (mode == "all" or not total):
        summary = _refusal(fleet, vm, options, counts).diagnosis(len(fleet), 0)
        head = (
            f"{group.title}: {units[total].label} does not fit ({total} instances of {vm.name} "
            f"fit on these hosts as they stand, as capacity counts them; {len(units)} are asked); "
        )
        return PlacementResult(
            diagnosis=Diagnosis(len(fleet), 0, summary.rejections, head + summary.summary)
        )
    placed = min(len(units), total)
    result = _realise(fleet, vm, options, _plan(fleet, vm, options, counts, placed), units)
    if result is None or placed == len(units):
        return result
    reasons = _refusal(fleet, vm, options, counts).diagnosis(len(fleet), 0).summary
    why = f"{reasons} ({total} instances of {vm.name} fit, as capacity counts them)"
    unplaced = tuple(Unplaced(u.member.name, u.k + 1, why) for u in units[placed:])
    return dataclasses.replace(result, unplaced=unplaced)
