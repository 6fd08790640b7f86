"""The engine's door: `place`, `capacity`, `evaluate` and `suggest_moves` over any hosts."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from .. import errors
from ..errors import DescriptorError, Issue, NfvplaceError
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from .engine.evaluate import HostEvaluation, evaluate_vm
from .engine.place import place_vm, result_of
from .index import Hosts, index_of
from .joint.batch import BatchItem, of_batch
from .joint.capacity import CapacityReport, capacity_of
from .joint.moves import MovesAdvice
from .joint.moves import suggest_moves as _suggest_moves
from .joint.place import MODES, place_joint
from .joint.vnf import place_vnf
from .options import Policy, parse_options
from .result import PlacementResult


def _vm(vm: object, what: str = "a VM Descriptor") -> VmDescriptor:
    if not isinstance(vm, VmDescriptor):
        raise DescriptorError(
            errors.INPUT_INVALID,
            f"vm is a {type(vm).__name__}, not {what}",
            issues=(Issue("give a VmDescriptor (nfvplace.load)", path="vm"),),
        )
    return vm


def _check_mode(mode: str, count: int) -> None:
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
    fleet = index_of(hosts)
    _check_mode(mode, count)
    if isinstance(vm, VnfTemplate):
        return place_vnf(fleet, vm, opts, mode)
    if isinstance(vm, Sequence) or count > 1 or mode != "all":
        items = list(vm) if isinstance(vm, Sequence) else [vm]
        batch = [item if isinstance(item, BatchItem) else BatchItem(item, count) for item in items]
        return place_joint(fleet, of_batch(batch), opts, mode=mode, limit_s=opts.search_limit_s)
    single = _vm(vm, "a VM Descriptor or VNF template")
    consider = None
    if exclude:
        consider = np.ones(len(fleet), dtype=np.bool_)
        consider[[fleet.positions[h] for h in exclude if h in fleet.positions]] = False
    return result_of(place_vm(fleet, single, opts, consider=consider, instance=opts.instance))


def capacity(hosts: Hosts, vm: VmDescriptor, **options: Any) -> CapacityReport:
    """How many more instances of `vm` fit on `hosts` as they stand, per host, and what runs out
    first on each (read-only: nothing is claimed). Keywords as for `place`."""
    return capacity_of(index_of(hosts), _vm(vm), parse_options(**options))


def evaluate(
    hosts: Hosts, vm: VmDescriptor, *, configurations: bool = True, **options: Any
) -> tuple[HostEvaluation, ...]:
    """Every host's answer for `vm`, in the order given, without claiming anything: whether it fits,
    a score (0-100, higher is better under the policy), the reasons it does not fit, and the
    configuration it would get (`configurations=False`: none, for a filter that reads only the
    verdicts, at about half the cost of a fitting host). For schedulers that pick the host
    themselves (Nova's filter and weigher, a Kubernetes scheduler extender). Keywords as for
    `place`."""
    return evaluate_vm(index_of(hosts), _vm(vm), parse_options(**options), configurations)


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
        index_of(hosts),
        vm,
        placements,
        parse_options(**options),
        descriptors=descriptors,
        max_moves=max_moves,
    )
