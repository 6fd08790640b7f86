"""Variant selection (clause 8.2.2.5, last paragraph): different requirement lists for different
processors or hypervisors. For each host the first variant whose `match` the host meets applies; a host
matching none gets the descriptor's default requirements."""

from __future__ import annotations

import numpy as np

from ...models.vmd import VariantMatch, VmDescriptor
from ..index import FleetIndex
from ..resources.base import BoolArray
from ..resources.capabilities import CAPABILITIES_KIND
from ..resources.capabilities.table import version_key


def matches(fleet: FleetIndex, match: VariantMatch) -> BoolArray:
    t = fleet.table(CAPABILITIES_KIND)
    ok: BoolArray = np.ones(len(fleet), dtype=np.bool_)
    if match.processor_vendor:
        ok &= t.vendor == fleet.vocab.code(match.processor_vendor.lower())
    if match.processor_models:
        codes = [fleet.vocab.code(m.lower()) for m in match.processor_models]
        ok &= np.isin(t.model, codes)
    if match.min_frequency_mhz:
        ok &= t.frequency >= match.min_frequency_mhz
    if match.hypervisor_type is not None:
        ok &= t.hv_type == fleet.vocab.code(str(match.hypervisor_type))
    if match.hypervisor_min_version:
        ok &= t.hv_version >= version_key(match.hypervisor_min_version)
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
