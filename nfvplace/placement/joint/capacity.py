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

from collections.abc import Sequence
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
from ..reasons import resource_of
from ..request import build_request
from .counting import count_host, covers
from .state import host_signature

MAX_PER_HOST = 4096  # a guard against a VM that takes nothing


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


def _name(code: str) -> str:
    """The resource a rejection code names in `limited_by`."""
    return resource_of(code)


def _from_filter(single: FleetIndex, vm: VmDescriptor, options: Options) -> str | None:
    """The resource named by the count filter's first record on a one-host index (None: passes)."""
    exists = single.node_id[0] >= 0
    for descriptor, variant, mask in split(single, vm):
        outcome = run_filter(single, build_request(descriptor, variant), options, mask)
        for record in outcome.records:
            if isinstance(record, NodeRecord):
                alone = [n.code for n in record.needs if not (n.ok[0] & exists).any()]
                if alone:
                    return _name(alone[0])
                mixed = [n.code for n in record.needs if not (n.ok[0] & exists).all()]
                return " + ".join(dict.fromkeys(_name(c) for c in mixed)) or "NUMA nodes"
            return _name(record.code if isinstance(record, CountRecord) else record.check.code)
    return None


def _limited_by(single: FleetIndex, vm: VmDescriptor, options: Options, reasons: Reasons) -> str:
    named = _from_filter(single, vm, options)
    if named is not None:
        return named
    for rejection in reasons.diagnosis(1, 0).rejections:  # the exact model said no
        return _name(rejection.reason)
    return "unknown"


def count_on_host(
    host: ComputeHostDescriptor, vm: VmDescriptor, options: Options
) -> tuple[int, str]:
    """Instances of `vm` placed one after the other on `host` alone, and what stopped the next."""
    single = index_of([host], private=True)
    count = 0
    while count < MAX_PER_HOST:
        reasons = Reasons()
        outcome = place_vm(single, vm, options, reasons=reasons, instance=f"what-if-{count + 1}")
        if outcome.host is None:
            return count, _limited_by(single, vm, options, reasons)
        single.update(outcome.host)
        count += 1
    return count, "unknown"


def _limit(stops: Sequence[str]) -> str:
    return " + ".join(dict.fromkeys(_name(code) for code in stops)) or "unknown"


def capacity_of(fleet: FleetIndex, vm: VmDescriptor, options: Options) -> CapacityReport:
    counts: dict[int, tuple[int, str]] = {}
    known: dict[int, tuple[int, str]] = {}  # by host signature, for the engine's counts
    spread = options.policy is Policy.spread
    for descriptor, variant, mask in split(fleet, vm):
        request = build_request(descriptor, variant)
        passing = run_filter(fleet, request, options, mask).passing
        modelled = covers(request)
        for i in np.flatnonzero(passing).tolist():
            counted = count_host(fleet, i, request, spread) if modelled else None
            if counted is not None:
                counts[i] = (counted[0], _limit(counted[1]))
                continue
            host = fleet.hosts[i]
            key = host_signature(host)
            if key not in known:
                known[key] = count_on_host(host, vm, options)
            counts[i] = known[key]
    hosts = tuple(
        HostCapacity(fleet.host_ids[i], n, limit) for i, (n, limit) in sorted(counts.items()) if n
    )
    return CapacityReport(vm.name, sum(h.count for h in hosts), hosts)
