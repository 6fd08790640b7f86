"""What a kind tells the placement policies (`engine/policies/`), through five hooks of `Kind`:

- `fullness(table)`: how much of the kind each host has free, of how much (`Fullness`); `pack` adds
  up the shares of every kind that says one. The share that `leads` (threads) is also the one
  `spread` and `least-fragmentation` rank by, and `room(table)` is what a cpu-set could take of it
  on each node;
- `kept(table, request)`: points a host gets under `pack` for what the request does not need, so
  that it stays free for the VMs that do (`Kept`);
- `node_fullness(free, slot)` and `node_kept(free, slot, request, cs)`: the same on one node of one
  host, for the exact model's node cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..request import CpuSetDemand, Request
from .base import BoolArray, FreeKey, IntArray, Table, TableKey

KEEP_VF = 200  # pack: host score per free VF or port (in 1/10000 shares), for VMs that need none
KEEP_SMT = 2000  # pack: host score of SMT, for VMs with no howtogroup pair
PORT_KEEP = 100  # pack / least-fragmentation: keep nodes with usable ports for VMs that need them


@dataclass(frozen=True, slots=True)
class Fullness:
    """Per host, what is free of a kind and of how much: a part of `pack`'s score."""

    part: str  # the score's part, in words: "free threads"
    unit: str  # what `free` and `total` count: "eligible threads"
    free: IntArray
    total: IntArray  # at least 1 (a share's denominator)
    leads: bool = False  # the measure spread and least-fragmentation rank by (one kind)


@dataclass(frozen=True, slots=True)
class Kept:
    """Per host, `weight` points for each of `count` that the request does not need."""

    part: str  # "ports kept"
    weight: int
    count: IntArray | BoolArray
    meaning: str  # in words, formatted with {count} and {weight}


@dataclass(frozen=True, slots=True)
class NodeFullness:
    """On one node: what is free of a kind and of how much."""

    free: int
    total: int
    leads: bool = False


# the stages (`stages.py` lists them in `STAGES`)


@runtime_checkable
class Fills[T: Table](TableKey[T], Protocol):
    def fullness(self, table: T) -> Fullness | None: ...


@runtime_checkable
class Room[T: Table](TableKey[T], Protocol):
    def room(self, table: T) -> IntArray:
        """Per host and node slot, what a cpu-set could take of the leading measure."""
        ...


@runtime_checkable
class Keeps[T: Table](TableKey[T], Protocol):
    def kept(self, table: T, request: Request) -> Kept | None: ...


@runtime_checkable
class NodeFills[F](FreeKey[F], Protocol):
    def node_fullness(self, free: F, slot: int) -> NodeFullness | None: ...


@runtime_checkable
class NodeKeeps[F](FreeKey[F], Protocol):
    def node_kept(self, free: F, slot: int, request: Request, cs: CpuSetDemand) -> int: ...
