"""What a VM Configuration holds, as rows the store guards (pure functions): the units each
resource kind says its configurations hold alone, one unique row each, and the shares they take of
each pool of alike units (hugepages), one counter per pool (`placement/resources/holding.py`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..placement.resources import HOLDS_SHARES, HOLDS_UNITS

HOLDERS = HOLDS_UNITS  # the kinds whose configurations hold units of a host alone, in order
SHARERS = HOLDS_SHARES  # the kinds whose configurations take shares of a host's pools, in order


@dataclass(frozen=True, slots=True, order=True)
class Held:
    """One unit of a host held alone: a row of `claims` (UNIQUE on all three)."""

    host: str
    kind: str
    resource: str


def held_order(held: Held) -> tuple[str, str, str]:
    """`Held`'s order (its fields in turn) as a sort key: each row's tuple made once, where the
    dataclass's own comparison makes two a comparison."""
    return (held.host, held.kind, held.resource)


def held_resources(config: VmConfiguration) -> list[Held]:
    """Every unit `config` holds alone, as each kind says (`HoldsUnits`): PUs, VFs, dedicated
    ports, PCI devices and L3 cache ways."""
    return [
        Held(config.host, held.kind, held.unit)
        for kind in HOLDERS
        for held in kind.held_units(config)
    ]


def shares_held(configs: Iterable[VmConfiguration]) -> Counter[tuple[str, int, int]]:
    """Units taken per pool (host, NUMA node, unit size in KiB), as each kind says
    (`HoldsShares`): hugepages."""
    taken: Counter[tuple[str, int, int]] = Counter()
    for config in configs:
        for kind in SHARERS:
            for share in kind.held_shares(config):
                taken[(config.host, share.node, share.size_kib)] += share.count
    return taken


def pool_capacity(chd: ComputeHostDescriptor) -> dict[tuple[int, int], int]:
    """Units free in each pool (NUMA node, unit size in KiB) as the host itself reports them."""
    return {(pool.node, pool.size_kib): pool.count for kind in SHARERS for pool in kind.pools(chd)}
