"""What a placed VM holds of a host, by kind (the store's double-claim guard).

- **Units held alone**: a PU pinned to a VM, an SR-IOV VF, a dedicated port, a PCI device and an
  L3 cache way can each be held by one VM at a time. The store keeps one row per held unit under a
  UNIQUE constraint, so two placements committed at once can never hold the same unit
  (`store/resources.py` loops over the kinds that implement the stage `stages.HoldsUnits`, in the
  order `resources.HOLDS_UNITS` says). A new exclusive kind that implements it is guarded with no
  change to the store.
- **Shares of a pool of alike units**: hugepages of one size on one NUMA node. A configuration says
  how many it takes, not which, so there is no unit to make unique: the store keeps a counter per
  pool that a commit raises only within the pool's capacity (`stages.HoldsShares`, ordered by
  `resources.HOLDS_SHARES`). The counters' table is keyed by (host, NUMA node, unit size) without
  a kind: a second kind taking shares needs a migration that adds one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class HeldUnit:
    """One unit of a host that one VM at a time holds."""

    kind: str  # stored in the claim rows: at most 16 characters, and never renamed
    unit: str  # the unit's id on its host, at most 64 characters: "17", "0000:18:00.2", "0/3"


@dataclass(frozen=True, slots=True, order=True)
class PoolShare:
    """How many units of one pool of a host (NUMA node, unit size) a VM takes, or the pool has."""

    node: int
    size_kib: int
    count: int


PU = "pu"
VF = "vf"
PORT = "port"
PCI = "pci"
CACHE_WAY = "cache_way"

__all__ = ["CACHE_WAY", "PCI", "PORT", "PU", "VF", "HeldUnit", "PoolShare"]
