"""Placement pipeline: host checks and a vectorised count filter over the fleet, policy ranking, an
exact CP-SAT model on the best candidates, exact ids, claim. See docs/placement.md."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from .. import errors
from ..errors import DescriptorError, Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from .batch import BatchItem, of_batch
from .cache import index_for
from .capacity import CapacityReport, HostCapacity, capacity_of
from .engine import place_vm, result_of
from .evaluate import HostEvaluation, evaluate_vm
from .index import FleetIndex
from .joint import MODES, place_joint
from .moves import Move, MovesAdvice
from .moves import suggest_moves as _suggest_moves
from .options import Options, Policy, ProcessorMatch, parse_options
from .result import Diagnosis, NoFitError, PlacementResult, Rejection, Unplaced
from .vnf import place_vnf

Hosts = FleetIndex | Sequence[ComputeHostDescriptor] | Mapping[str, ComputeHostDescriptor]


def _as_fleet(hosts: Hosts) -> FleetIndex:
    if isinstance(hosts, FleetIndex):
        return hosts
    items = list(hosts.values()) if isinstance(hosts, Mapping) else list(hosts)
    bad = [k for k, h in enumerate(items) if not isinstance(h, ComputeHostDescriptor)]
    if bad:
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"hosts[{bad[0]}] is a {type(items[bad[0]]).__name__}, not a Compute Host Descriptor",
            issues=(
                Issue(
                    "give ComputeHostDescriptor objects (nfvplace.load)", path=f"hosts[{bad[0]}]"
                ),
            ),
        )
    return index_for(items)


def place(
    hosts: Hosts,
    vm: VmDescriptor | VnfTemplate | Sequence[VmDescriptor | BatchItem],
    *,
    count: int = 1,
    mode: str = "all",
    policy: str | Policy = "pack",
    seed: int = 0,
    explain: bool = False,
    max_candidates: int | None = None,
    exclude: Collection[str] = (),
    **options: Any,
) -> PlacementResult:
    """Place one VM Descriptor, every member of a VNF template, or a batch, on `hosts`.

    A batch is a list of VM Descriptors (or `BatchItem(vm, count)`); `count` places that many
    instances of a single VM Descriptor (or of each VM of a list) jointly. VNFs and batches are placed
    by one search with backtracking (`search_limit_s`): `mode="all"` (default) places all or
    nothing, `mode="max"` as many instances as fit and lists the others in `result.unplaced`.

    `hosts` is a sequence or mapping of Compute Host Descriptors (the index of a list of host
    objects is kept while they live, so placing again on the same objects does not rebuild it), or
    a `FleetIndex`. To place many VMs, `nfvplace.Fleet` places and claims in one call.
    Keywords: `policy` (pack | spread | least-fragmentation), `seed`, `explain`, `max_candidates`
    (hosts given to the exact solver; default: until one fits), `processor_match`
    (exact | family | any), `frequency_scaling`, `min_frequency_ratio`, `time_limit_s`, `instance`,
    `exclude` (ids of hosts a single VM is not placed on, e.g. hosts the service just lost a race on).
    Inputs are never changed; `result.hosts` holds the updated descriptors of the hosts used.
    """
    opts = parse_options(
        policy=policy, seed=seed, explain=explain, max_candidates=max_candidates, **options
    )
    fleet = _as_fleet(hosts)
    if mode not in MODES:
        raise NfvplaceError(
            errors.PLACEMENT_INVALID_POLICY,
            f"unknown mode {mode!r}",
            issues=(Issue("use all (all or nothing) or max (as many as fit)", path="mode"),),
        )
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise NfvplaceError(
            errors.PLACEMENT_INVALID_POLICY,
            f"count must be a positive integer, got {count!r}",
            issues=(Issue("e.g. count=4", path="count"),),
        )
    if isinstance(vm, VnfTemplate):
        return place_vnf(fleet, vm, opts, mode)
    if isinstance(vm, Sequence) or count > 1 or mode != "all":
        items = list(vm) if isinstance(vm, Sequence) else [vm]
        batch = [item if isinstance(item, BatchItem) else BatchItem(item, count) for item in items]
        return place_joint(fleet, of_batch(batch), opts, mode=mode, limit_s=opts.search_limit_s)
    if not isinstance(vm, VmDescriptor):
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"vm is a {type(vm).__name__}, not a VM Descriptor or VNF template",
            issues=(Issue("give a VmDescriptor or VnfTemplate (nfvplace.load)", path="vm"),),
        )
    consider = None
    if exclude:
        consider = np.ones(len(fleet), dtype=np.bool_)
        consider[[fleet.index[h] for h in exclude if h in fleet.index]] = False
    return result_of(place_vm(fleet, vm, opts, consider=consider, instance=opts.instance))


def capacity(hosts: Hosts, vm: VmDescriptor, **options: Any) -> CapacityReport:
    """How many more instances of `vm` fit on `hosts` as they stand, per host, and what runs out
    first on each (read-only: nothing is claimed). Keywords as for `place`."""
    if not isinstance(vm, VmDescriptor):
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"vm is a {type(vm).__name__}, not a VM Descriptor",
            issues=(Issue("give a VmDescriptor (nfvplace.load)", path="vm"),),
        )
    return capacity_of(_as_fleet(hosts), vm, parse_options(**options))


def evaluate(hosts: Hosts, vm: VmDescriptor, **options: Any) -> tuple[HostEvaluation, ...]:
    """Every host's answer for `vm`, in the order given, without claiming anything: whether it fits,
    a score (0-100, higher is better under the policy), the reasons it does not fit, and the
    configuration it would get. For schedulers that pick the host themselves (Nova's filter and
    weigher, a Kubernetes scheduler extender). Keywords as for `place`."""
    if not isinstance(vm, VmDescriptor):
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"vm is a {type(vm).__name__}, not a VM Descriptor",
            issues=(Issue("give a VmDescriptor (nfvplace.load)", path="vm"),),
        )
    return evaluate_vm(_as_fleet(hosts), vm, parse_options(**options))


def suggest_moves(
    hosts: Hosts,
    vm: VmDescriptor,
    placements: Sequence[VmConfiguration],
    *,
    descriptors: Mapping[str, VmDescriptor] | None = None,
    max_moves: int = 2,
    **options: Any,
) -> MovesAdvice | None:
    """For a VM that fits nowhere: at most `max_moves` moves of the placed VMs (`placements`, their
    VM Configurations) that make room, with the resulting configuration; None if none is found.
    Read-only. `descriptors` (by VM name) re-place moved VMs; else their configurations are read
    back into descriptors."""
    return _suggest_moves(
        _as_fleet(hosts),
        vm,
        placements,
        parse_options(**options),
        descriptors=descriptors,
        max_moves=max_moves,
    )


__all__ = [
    "BatchItem",
    "CapacityReport",
    "Diagnosis",
    "FleetIndex",
    "HostCapacity",
    "HostEvaluation",
    "Move",
    "MovesAdvice",
    "NoFitError",
    "Options",
    "PlacementResult",
    "Policy",
    "ProcessorMatch",
    "Rejection",
    "Unplaced",
    "capacity",
    "evaluate",
    "place",
    "suggest_moves",
]
