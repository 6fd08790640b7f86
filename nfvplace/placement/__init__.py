"""Placement pipeline: host checks and a vectorised count filter over the fleet, policy ranking, an
exact CP-SAT model on the best candidates, exact ids, claim. See docs/placement.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import errors
from ..errors import DescriptorError, Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from .batch import BatchItem, of_batch
from .engine import place_vm, result_of
from .index import FleetIndex
from .joint import MODES, place_joint
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
    return FleetIndex(items)


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
    **options: Any,
) -> PlacementResult:
    """Place one VM Descriptor, every member of a VNF template, or a batch, on `hosts`.

    A batch is a list of VM Descriptors (or `BatchItem(vm, count)`); `count` places that many
    instances of a single VM Descriptor (or of each VM of a list) jointly. VNFs and batches are placed
    by one search with backtracking (`search_limit_s`): `mode="all"` (default) places all or
    nothing, `mode="max"` as many instances as fit and lists the others in `result.unplaced`.

    `hosts` is a sequence or mapping of Compute Host Descriptors, or a `FleetIndex` (an index kept between
    calls: faster for many placements; refresh it with `fleet.update_many(result.hosts.values())`).
    Keywords: `policy` (pack | spread | least-fragmentation), `seed`, `explain`, `max_candidates`
    (hosts given to the exact solver; default: until one fits), `processor_match`
    (exact | family | any), `frequency_scaling`, `min_frequency_ratio`, `time_limit_s`, `instance`.
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
    return result_of(place_vm(fleet, vm, opts, instance=opts.instance))


__all__ = [
    "BatchItem",
    "Diagnosis",
    "FleetIndex",
    "NoFitError",
    "Options",
    "PlacementResult",
    "Policy",
    "ProcessorMatch",
    "Rejection",
    "Unplaced",
    "place",
]
