"""What-if capacity: how many more instances of a VM fit on the fleet as it stands, host by host.

Read-only: nothing is claimed on the caller's hosts. The count of a host is the number of instances the
engine places on it one after the other (each on the availability the previous ones left), until the
next one does not fit; `limited_by` names the resource of that last refusal (cores, sibling pairs,
hugepages, VFs, bandwidth, ...: `Reason.resource`). Placements on one host never change another's, so the fleet's count is
the sum of its hosts' counts: exactly what placing instance after instance on the whole fleet gives.

Cost: one vectorised filter over the fleet drops the hosts that cannot take even one instance. The
others are counted by the counting model (`counting.py`: the engine's choices replayed on integer
counts, microseconds a host) when it covers the request, else by the engine itself, instance after
instance, once per distinct host (hosts whose free resources are the same, up to ids and owner
names, share one count).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...models.chd import ComputeHostDescriptor
from ...models.vmd import VmDescriptor
from ..engine.explain import Reasons
from ..engine.filter import CountRecord, NodeRecord, run_filter
from ..engine.place import place_vm
from ..engine.variants import split
from ..index import FleetIndex, index_of
from ..options import Options, Policy
from ..reasons import Reason, resource_of
from ..request import build_request
from .counting import count_host, covers
from .state import host_signature

MAX_PER_HOST = 4096  # a guard against a VM that takes nothing
Stops = tuple[str, ...]  # the reason codes of what stopped a host's next instance


@dataclass(frozen=True, slots=True)
class HostCount:
    """How many instances one host takes, and the reason codes of what stopped the next."""

    count: int
    stops: Stops


@dataclass(frozen=True, slots=True)
class HostCapacity:
    host: str
    count: int
    limited_by: str

    def to_dict(self) -> dict[str, object]:
        return {"host": self.host, "count": self.count, "limited_by": self.limited_by}


@dataclass(frozen=True, slots=True)
class CapacityReport:
    """`{"vm": name, "count": N, "hosts": [{"host", "count", "limited_by"}, ...]}` (hosts with n > 0)."""

    vm: str
    count: int
    hosts: tuple[HostCapacity, ...]

    def to_dict(self) -> dict[str, object]:
        return {"vm": self.vm, "count": self.count, "hosts": [h.to_dict() for h in self.hosts]}


def _from_filter(single: FleetIndex, vm: VmDescriptor, options: Options) -> Stops | None:
    """The codes of the count filter's first record on a one-host index (None: passes)."""
    exists = single.node_id[0] >= 0
    for descriptor, variant, mask in split(single, vm):
        outcome = run_filter(single, build_request(descriptor, variant), options, mask)
        for record in outcome.records:
            if isinstance(record, NodeRecord):
                alone = [n.code for n in record.needs if not (n.ok[0] & exists).any()]
                if alone:
                    return (alone[0],)
                mixed = [n.code for n in record.needs if not (n.ok[0] & exists).all()]
                return tuple(mixed) or (Reason.numa_nodes,)
            return (record.code if isinstance(record, CountRecord) else record.check.code,)
    return None


def _stopped_by(single: FleetIndex, vm: VmDescriptor, options: Options, reasons: Reasons) -> Stops:
    named = _from_filter(single, vm, options)
    if named is not None:
        return named
    for rejection in reasons.diagnosis(1, 0).rejections:  # the exact model said no
        return (rejection.reason,)
    return ()


def count_on_host(
    host: ComputeHostDescriptor, vm: VmDescriptor, options: Options
) -> tuple[int, Stops]:
    """Instances of `vm` placed one after the other on `host` alone, and the reason codes of
    what stopped the next."""
    single = index_of([host], private=True)
    count = 0
    while count < MAX_PER_HOST:
        reasons = Reasons()
        outcome = place_vm(single, vm, options, reasons=reasons, instance=f"what-if-{count + 1}")
        if outcome.host is None:
            return count, _stopped_by(single, vm, options, reasons)
        single.update(outcome.host)
        count += 1
    return count, ()


def limit_of(stops: Stops) -> str:
    """What `limited_by` says for the reason codes that stopped a host's next instance."""
    return " + ".join(dict.fromkeys(resource_of(code) for code in stops)) or "unknown"


def count_fleet(fleet: FleetIndex, vm: VmDescriptor, options: Options) -> dict[int, HostCount]:
    """Every host that passes the filter (by index): the instances it takes, and what stops it."""
    counts: dict[int, HostCount] = {}
    known: dict[int, tuple[int, Stops]] = {}  # by host signature, for the engine's counts
    spread = options.policy is Policy.spread
    for descriptor, variant, mask in split(fleet, vm):
        request = build_request(descriptor, variant)
        passing = run_filter(fleet, request, options, mask).passing
        modelled = covers(request)
        for i in np.flatnonzero(passing).tolist():
            counted = count_host(fleet, i, request, spread) if modelled else None
            if counted is not None:
                counts[i] = HostCount(counted[0], tuple(counted[1]))
                continue
            key = host_signature(fleet.hosts[i])
            if key not in known:
                known[key] = count_on_host(fleet.hosts[i], vm, options)
            counts[i] = HostCount(*known[key])
    return counts


def capacity_of(fleet: FleetIndex, vm: VmDescriptor, options: Options) -> CapacityReport:
    counts = count_fleet(fleet, vm, options)
    hosts = tuple(
        HostCapacity(fleet.host_ids[i], c.count, limit_of(c.stops))
        for i, c in sorted(counts.items())
        if c.count
    )
    return CapacityReport(vm.name, sum(h.count for h in hosts), hosts)
