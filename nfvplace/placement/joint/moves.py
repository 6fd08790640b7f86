"""Defragmentation advice: for a VM that fits nowhere, a few moves of existing VMs that make room.

Read-only: nothing is moved. For the hosts where the VM passes the host-level checks (most free
threads first), the advice releases one placed VM (then two, up to `max_moves`) on that host, checks
that the new VM then fits there (the exact engine, on the host with those VMs released), and that
every released VM fits again on another host (the exact engine, on the fleet as the earlier moves left
it). The first combination that works is the advice: the moves (each with the moved VM's new
configuration) and the new VM's configuration on the host the moves freed.

A moved VM is re-placed from its VM Descriptor when one is given (by VM name), otherwise from a
descriptor read back from its configuration (`descriptor_of`): the same cpu-sets, SMT pairs, thread
policy, hugepages, memory, interfaces (mode and bandwidth) and PCI devices.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...claims import release
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.vmd import VmDescriptor
from ..engine.filter import HostCheckRecord, run_filter
from ..engine.place import VmOutcome, place_vm
from ..engine.policies.measures import leading
from ..engine.variants import split
from ..index import FleetIndex
from ..options import Options
from ..request import build_request
from ..resources import implementing
from ..resources.draft import DescriptorDraft
from ..resources.stages import Describes

_DESCRIBES = implementing(Describes)  # each writes its own keys of the descriptor: any order

MAX_HOSTS = 12  # hosts tried, most free threads first
MAX_COMBINATIONS = 40  # sets of VMs released per host


@dataclass(frozen=True, slots=True)
class Move:
    instance: str
    vm: str
    source: str  # host id it leaves
    target: str  # host id it goes to
    configuration: VmConfiguration  # its configuration on the target

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "vm": self.vm,
            "from": self.source,
            "to": self.target,
            "configuration": self.configuration.model_dump(
                mode="json", by_alias=True, exclude_none=True
            ),
        }


@dataclass(frozen=True, slots=True)
class MovesAdvice:
    moves: tuple[Move, ...]
    configuration: VmConfiguration  # the new VM, after the moves
    hosts: Mapping[str, ComputeHostDescriptor]  # every host touched, as it would be after

    def to_dict(self) -> dict[str, Any]:
        return {
            "moves": [m.to_dict() for m in self.moves],
            "configuration": self.configuration.model_dump(
                mode="json", by_alias=True, exclude_none=True
            ),
        }


def descriptor_of(config: VmConfiguration) -> VmDescriptor:
    """A VM Descriptor asking for what `config` holds (to place a running VM somewhere else): each
    kind asks for its part (`describe`); whether cpu-sets may share a node is the engine's own."""
    draft = DescriptorDraft(
        {"schema": "nfvplace/vmd/v1", "name": config.vm},
        {cs.id: {"id": cs.id} for cs in config.cpu_sets},
    )
    for kind in _DESCRIBES:
        kind.describe(draft, config)
    if config.cpu_sets:
        nodes = {cs.numa_node for cs in config.cpu_sets}
        draft.fields["cpu_sets_may_share_node"] = len(nodes) < len(config.cpu_sets)
    elif config.shared is None:
        draft.fields.update(vcpus=config.vcpus or 1, memory_mib=config.memory_mib or 0)
    return draft.build()


def _hosts_to_try(fleet: FleetIndex, vm: VmDescriptor, options: Options) -> list[int]:
    """Hosts that pass the VM's host-level checks (processor, hypervisor, ...), most free first."""
    ok = np.zeros(len(fleet), dtype=np.bool_)
    for descriptor, variant, mask in split(fleet, vm):
        outcome = run_filter(fleet, build_request(descriptor, variant), options, mask)
        host_ok = mask.copy()
        for record in outcome.records:
            if isinstance(record, HostCheckRecord):
                host_ok[record.hosts] = False
        ok |= host_ok
    order = np.flatnonzero(ok)
    free = leading(fleet).free  # the most free threads first
    ranked: list[int] = order[np.argsort(-free[order], kind="stable")].tolist()
    return ranked


def _fits_alone(host: ComputeHostDescriptor, vm: VmDescriptor, options: Options) -> VmOutcome:
    return place_vm(FleetIndex([host]), vm, options, instance=options.instance)


def suggest_moves(
    fleet: FleetIndex,
    vm: VmDescriptor,
    placements: Sequence[VmConfiguration],
    options: Options,
    *,
    descriptors: Mapping[str, VmDescriptor] | None = None,
    max_moves: int = 2,
) -> MovesAdvice | None:
    """The first set of at most `max_moves` moves that makes room for `vm` (None: none found)."""
    descriptors = descriptors or {}
    on_host: dict[str, list[VmConfiguration]] = {}
    for config in placements:
        if config.host in fleet.positions:
            on_host.setdefault(config.host, []).append(config)
    for i in _hosts_to_try(fleet, vm, options)[:MAX_HOSTS]:
        host = fleet.hosts[i]
        mine = sorted(on_host.get(host.id, []), key=lambda c: len(c.held_cpus))
        combos = (
            combo
            for size in range(1, max_moves + 1)
            for combo in itertools.combinations(mine, size)
        )
        for combo in itertools.islice(combos, MAX_COMBINATIONS):
            advice = _try(fleet, i, vm, combo, options, descriptors)
            if advice is not None:
                return advice
    return None


def _try(
    fleet: FleetIndex,
    i: int,
    vm: VmDescriptor,
    combo: tuple[VmConfiguration, ...],
    options: Options,
    descriptors: Mapping[str, VmDescriptor],
) -> MovesAdvice | None:
    freed = fleet.hosts[i]
    for config in combo:
        freed = release(freed, config)
    outcome = _fits_alone(freed, vm, options)
    if outcome.configuration is None or outcome.host is None:
        return None
    work = fleet.copy()
    work.update(outcome.host)
    elsewhere = np.ones(len(work), dtype=np.bool_)
    elsewhere[i] = False
    moves: list[Move] = []
    touched = {outcome.host.id: outcome.host}
    for config in combo:
        moved_vm = descriptors.get(config.vm) or descriptor_of(config)
        moved = place_vm(work, moved_vm, options, consider=elsewhere, instance=config.owner)
        if moved.configuration is None or moved.host is None:
            return None
        work.update(moved.host)
        touched[moved.host.id] = moved.host
        moves.append(
            Move(config.owner, config.vm, fleet.host_ids[i], moved.host.id, moved.configuration)
        )
    return MovesAdvice(tuple(moves), outcome.configuration, touched)
