"""The units of a host a placed VM holds alone, by kind (the store's double-claim guard).

A PU pinned to a VM, an SR-IOV VF, a dedicated port, a PCI device and an L3 cache way can each be
held by one VM at a time. The store keeps one row per held unit under a UNIQUE constraint, so two
placements committed at once can never hold the same unit (`store/resources.py` loops over the
kinds that implement the stage `stages.HoldsUnits`, in the order `resources.HOLDS_UNITS` says). A
kind whose resource is exclusive implements it; a new exclusive kind that does is guarded with no
change to the store.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class HeldUnit:
    """One unit of a host that one VM at a time holds."""

    kind: str  # stored in the claim rows: at most 16 characters, and never renamed
    unit: str  # the unit's id on its host, at most 64 characters: "17", "0000:18:00.2", "0/3"


PU = "pu"
VF = "vf"
PORT = "port"
PCI = "pci"
CACHE_WAY = "cache_way"

__all__ = ["CACHE_WAY", "PCI", "PORT", "PU", "VF", "HeldUnit"]
