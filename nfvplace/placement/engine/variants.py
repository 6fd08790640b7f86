"""Variant selection (clause 8.2.2.5, last paragraph): different requirement lists for different
processors or hypervisors. For each host the first variant whose `match` the host meets applies; a host
matching none gets the descriptor's default requirements."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...models.vmd import VariantMatch, VmDescriptor
from ..index import FleetIndex
from ..resources import implementing
from ..resources.base import BoolArray
from ..resources.stages import Variants

_MATCHING: tuple[Variants[Any], ...] = implementing(Variants)


def matches(fleet: FleetIndex, match: VariantMatch) -> BoolArray:
    """The hosts that meet every kind's part of `match` (processor, hypervisor)."""
    ok: BoolArray = np.ones(len(fleet), dtype=np.bool_)
    for kind in _MATCHING:
        hosts = kind.variant_hosts(fleet.table(kind), fleet.vocab, match)
        if hosts is not None:
            ok &= hosts
    return ok


def split(fleet: FleetIndex, vm: VmDescriptor) -> list[tuple[VmDescriptor, str | None, BoolArray]]:
    """(descriptor with the variant applied, variant name, hosts it applies to), in order."""
    left: BoolArray = np.ones(len(fleet), dtype=np.bool_)
    out: list[tuple[VmDescriptor, str | None, BoolArray]] = []
    for variant in vm.variants:
        hit = left & matches(fleet, variant.match)
        if hit.any():
            out.append((vm.with_variant(variant), variant.name, hit))
            left &= ~hit
    base = vm.model_copy(update={"variants": ()}) if vm.variants else vm
    out.append((base, None, left))
    return out
