"""What a VM Configuration holds, as rows the store can make unique (pure functions): the units
each resource kind says its configurations hold alone (`placement/resources/holding.py`), and the
hugepages they take from each pool."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..placement.resources import HOLDS_UNITS

HOLDERS = HOLDS_UNITS  # the kinds whose configurations hold units of a host alone, in order


@dataclass(frozen=True, slots=True, order=True)
class Held:
    """One unit of a host held alone: a row of `claims` (UNIQUE on all three)."""

    host: str
    kind: str
    resource: str


def held_resources(config: VmConfiguration) -> list[Held]:
    """Every unit `config` holds alone, as each kind says (`HoldsUnits`): PUs, VFs, dedicated
    ports, PCI devices and L3 cache ways."""
    return [
        Held(config.host, held.kind, held.unit)
        for kind in HOLDERS
        for held in kind.held_units(config)
    ]


def hugepages_held(configs: Iterable[VmConfiguration]) -> Counter[tuple[str, int, int]]:
    """Hugepages held per (host, NUMA node, page size in KiB)."""
    pages: Counter[tuple[str, int, int]] = Counter()
    for config in configs:
        for cs in config.cpu_sets:
            if cs.hugepages is not None and cs.hugepages.count:
                pages[(config.host, cs.numa_node, cs.hugepages.size_kib)] += cs.hugepages.count
    return pages


def hugepage_capacity(chd: ComputeHostDescriptor) -> dict[tuple[int, int], int]:
    """Free hugepages the host itself reports, per (NUMA node, page size in KiB)."""
    return {
        (node.id, pool.size_kib): pool.free
        for node in chd.numa_nodes
        for pool in node.memory.hugepages
    }
