"""What the policies read of the fleet and of a host: the kinds' measures (`resources/scoring.py`),
gathered over the kinds that give them; and `Objective`, the shape of one policy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...index import FleetIndex
from ...request import CpuSetDemand, Request
from ...resources import FILLS, implementing
from ...resources.base import HostFree, IntArray
from ...resources.scoring import Fullness, Keeps, Kept, NodeFills, NodeFullness, NodeKeeps, Room

_ROOMY: tuple[Room[Any], ...] = implementing(Room)
_KEEPING: tuple[Keeps[Any], ...] = implementing(Keeps)  # sorted by weight below
_NODE_FULL: tuple[NodeFills[Any], ...] = implementing(NodeFills)
_NODE_KEEPING: tuple[NodeKeeps[Any], ...] = implementing(NodeKeeps)  # summed


def fullness(fleet: FleetIndex) -> list[Fullness]:
    """Every kind's free-of-total per host."""
    return [f for k in FILLS if (f := k.fullness(fleet.table(k))) is not None]


def leading(fleet: FleetIndex) -> Fullness:
    """The measure spread and least-fragmentation rank by (threads)."""
    return next(f for f in fullness(fleet) if f.leads)


def room(fleet: FleetIndex) -> IntArray:
    """Per host and node slot, what a cpu-set could take of the leading measure."""
    return next(r for k in _ROOMY if (r := k.room(fleet.table(k))) is not None)


def kept(fleet: FleetIndex, request: Request) -> list[Kept]:
    """What hosts keep, per kind, for VMs that need what `request` does not; the lightest weight
    first (the order the score's parts are said in)."""
    found = [c for k in _KEEPING if (c := k.kept(fleet.table(k), request)) is not None]
    return sorted(found, key=lambda keep: keep.weight)


def node_fullness(free: HostFree, slot: int) -> list[NodeFullness]:
    """Every kind's free-of-total on one node."""
    return [f for k in _NODE_FULL if (f := k.node_fullness(free.of(k), slot)) is not None]


def node_leading(free: HostFree, slot: int) -> NodeFullness:
    return next(f for f in node_fullness(free, slot) if f.leads)


def node_kept(free: HostFree, slot: int, request: Request, cs: CpuSetDemand) -> int:
    """The points of what the node keeps for cpu-sets that need what `cs` does not."""
    return sum(k.node_kept(free.of(k), slot, request, cs) for k in _NODE_KEEPING)


def share(free: np.ndarray | int, total: np.ndarray | int, scale: int) -> Any:
    """`free` of `total` in 1/`scale` (rounded down)."""
    return free * scale // total


@dataclass(frozen=True, slots=True)
class Objective:
    """One policy: its host score (lower is better), the score in words, and its node cost."""

    score: str  # what the host score counts, in words
    node_cost_text: str  # what the node cost counts, in words
    host_score: Callable[[FleetIndex, Request, dict[int, np.ndarray]], IntArray]
    terms: Callable[[FleetIndex, int, Request], list[tuple[str, int, str]]]
    node_cost: Callable[[HostFree, int, CpuSetDemand, Request], int]
