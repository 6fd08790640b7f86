"""Copies of one VM: a batch (or a VNF) whose instances are all the same VM Descriptor.

What-if capacity counts, host by host, the instances the engine places there one after the other
(`capacity.py`; placements on one host never change another's, so the count of the fleet is what
placing instance after instance on it gives). For copies of one VM that count is exact, so it
decides the batch, not a search: one more copy than it is refused, with what each host runs out of
(cores, hugepages, VFs, ...: what the VM asks). Capacity and batch placement are one counting model.

When the counting model covers the VM (`counting.covers`: microseconds a host), a batch of more than
the count is refused at once, and a batch of at most it is dealt to hosts by the policy (`_plan`),
each host's share placed there by the engine, instance after instance, as capacity counted it. By
policy: pack uses the fewest hosts (and of those the fullest first), spread gives each instance
to the host with the largest share of free threads (that share going down as the host's count is
used up), least-fragmentation fills the hosts that take the fewest first (the tightest); equal
counts go in the policy's single-VM host order. Otherwise (several cpu-sets, PCI devices, ...:
capacity places instance after instance with the engine too) the copies are placed one after the
other on the whole fleet, each where the engine puts a single VM, until all are placed or one fits
nowhere: the fleet's count, refused with the engine's reasons for that instance.

Groups with links or anti-affinity, or of several VMs, are the joint search's (`search.py`).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterator

import numpy as np

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.vmd import VmDescriptor
from ..engine.explain import Reasons
from ..engine.place import place_vm, rank
from ..engine.policies.measures import leading
from ..engine.variants import split
from ..index import FleetIndex, index_of
from ..options import Options, Policy
from ..reasons import BY_CODE
from ..request import build_request
from ..result import Diagnosis, PlacementResult, Rejection, Unplaced
from .batch import Group, Unit
from .capacity import HostCount, count_fleet, limit_of
from .counting import covers

Placed = tuple[VmConfiguration, ComputeHostDescriptor]  # a copy's configuration, its host after it


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
    if options.policy is Policy.pack:
        return _pack(room, key, n)
    plan: list[tuple[int, int]] = []
    for i in sorted(room, key=lambda i: (room[i], key[i])):  # the tightest hosts first
        if n <= 0:
            break
        plan.append((i, min(room[i], n)))
        n -= plan[-1][1]
    return plan


def _pack(room: dict[int, int], key: dict[int, tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """The fewest hosts, and of those the first in pack's single-VM order (the fullest): host after
    host, the first in that order with which the hosts that take the most still cover the rest."""
    largest = sorted(room, key=lambda i: (-room[i], key[i]))
    hosts, covered = 0, 0
    while covered < n:
        covered += room[largest[hosts]]
        hosts += 1
    order = sorted(room, key=key.__getitem__)
    plan: list[tuple[int, int]] = []
    for slot in range(hosts):
        after = hosts - slot - 1  # hosts still to choose after this one
        chosen = {i for i, _ in plan}
        top = [i for i in largest if i not in chosen][: after + 1]
        leading = set(top[:after])  # the `after` hosts that take the most, and what they take
        most = sum(room[j] for j in leading)
        for i in (i for i in order if i not in chosen):
            # with i among them, the next one takes its place
            rest = most - room[i] + room[top[after]] if i in leading else most
            if room[i] + rest >= n:
                plan.append((i, min(room[i], n)))
                n -= plan[-1][1]
                break
    return plan


def _spread(
    fleet: FleetIndex, room: dict[int, int], key: dict[int, tuple[int, int]], n: int
) -> list[tuple[int, int]]:
    """One instance at a time to the host with the largest share of free threads (spread's host
    score), that share going down with each instance as the host's count is used up."""
    lead = leading(fleet)
    share = {i: float(lead.free[i]) / max(int(lead.total[i]), 1) for i in room}
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
) -> list[Placed] | None:
    """Each host's share placed there by the engine, one after the other (None: the engine took
    fewer than counted, which the counting model's tests rule out)."""
    placed: list[Placed] = []
    for i, share in plan:
        single = index_of([fleet.hosts[i]], private=True)
        for _ in range(share):
            outcome = place_vm(single, vm, options, instance=units[len(placed)].instance)
            if outcome.host is None or outcome.configuration is None:
                return None
            single.update(outcome.host)
            placed.append((outcome.configuration, outcome.host))
    return placed


def _one_by_one(
    fleet: FleetIndex, vm: VmDescriptor, options: Options, units: list[Unit], why: list[Reasons]
) -> Iterator[Placed]:
    """Copies placed one after the other on the whole fleet until one fits nowhere (`why` then
    holds the engine's reasons for it)."""
    work = fleet.copy()
    for unit in units:
        reasons = Reasons()
        outcome = place_vm(work, vm, options, reasons=reasons, instance=unit.instance)
        if outcome.host is None or outcome.configuration is None:
            why.append(reasons)
            return
        work.update(outcome.host)
        yield outcome.configuration, outcome.host


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


def _counted(fleet: FleetIndex, vm: VmDescriptor) -> bool:
    """Whether the counting model counts `vm` on `fleet` (every variant of it)."""
    return all(covers(build_request(d, variant)) for d, variant, _ in split(fleet, vm))


def place_copies(
    fleet: FleetIndex, group: Group, vm: VmDescriptor, options: Options, mode: str
) -> PlacementResult | None:
    """Place `group`, copies of `vm`, as capacity counts them (None: leave it to the joint search,
    should the engine take fewer than counted)."""
    units = group.units(options.instance)
    if not _counted(fleet, vm):
        why: list[Reasons] = []
        placed = list(_one_by_one(fleet, vm, options, units, why))
        refusal = (len(placed), why[0]) if why else None
        return _result(fleet, group, vm, options, units, placed, refusal, mode)
    counts = count_fleet(fleet, vm, options)
    total = sum(c.count for c in counts.values())
    refusal = (total, _refusal(fleet, vm, options, counts)) if total < len(units) else None
    realised: list[Placed] | None = []
    if refusal is None or (mode == "max" and total):
        plan = _plan(fleet, vm, options, counts, min(total, len(units)))
        realised = _realise(fleet, vm, options, plan, units)
    if realised is None:
        return None
    return _result(fleet, group, vm, options, units, realised, refusal, mode)


def _result(
    fleet: FleetIndex,
    group: Group,
    vm: VmDescriptor,
    options: Options,
    units: list[Unit],
    placed: list[Placed],
    refusal: tuple[int, Reasons] | None,
    mode: str,
) -> PlacementResult:
    """The copies placed, or (`refusal`: the count, and why one more fits nowhere) the refusal:
    all or nothing, or (mode="max") the others listed as unplaced."""
    count = len(placed)
    if refusal is not None:
        total, why = refusal
        reasons = why.diagnosis(len(fleet), 0)
        fit = (
            f"{total} instances of {vm.name} fit on these hosts as they stand, as capacity "
            "counts them"
        )
        if mode == "all" or not placed:
            head = (
                f"{group.title}: {units[total].label} does not fit ({fit}; {len(units)} are "
                "asked); "
            )
            return PlacementResult(
                diagnosis=Diagnosis(len(fleet), 0, reasons.rejections, head + reasons.summary)
            )
        unplaced = tuple(
            Unplaced(u.member.name, u.k + 1, f"{reasons.summary} ({fit})") for u in units[count:]
        )
    else:
        unplaced = ()
    explanation: tuple[str, ...] = ()
    if options.explain:
        used = Counter(config.host for config, _ in placed)
        shares = ", ".join(f"{host} {n}" for host, n in used.items())
        explanation = (
            f"{count} copies of {vm.name} on {len(used)} hosts ({options.policy.value}), each "
            f"host's share within what capacity counts there: {shares}",
            *(f"{config.owner} -> {config.host}" for config, _ in placed),
        )
    return PlacementResult(
        configurations=tuple(config for config, _ in placed),
        hosts={host.id: host for _, host in placed},  # each host as its last copy left it
        explanation=explanation,
        unplaced=unplaced,
    )
