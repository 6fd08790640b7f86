"""`spread`: the host with the largest share of free threads, and on it the emptiest node."""

from __future__ import annotations

import numpy as np

from ...index import FleetIndex
from ...request import CpuSetDemand, Request
from ...resources.base import HostFree, IntArray
from .measures import Objective, leading, node_leading, share

SCALE = 1_000_000  # the share of free threads, in 1/1000000


def host_score(fleet: FleetIndex, request: Request, node_ok: dict[int, np.ndarray]) -> IntArray:
    lead = leading(fleet)
    score: IntArray = -share(lead.free, lead.total, SCALE)
    return score


def terms(fleet: FleetIndex, i: int, request: Request) -> list[tuple[str, int, str]]:
    lead = leading(fleet)
    free, total = int(lead.free[i]), int(lead.total[i])
    meaning = f"minus {free} of {total} {lead.unit} free, in 1/{SCALE}"
    return [(lead.part, -share(free, total, SCALE), meaning)]


def node_cost(free: HostFree, slot: int, cs: CpuSetDemand, request: Request) -> int:
    return -node_leading(free, slot).free


SPREAD = Objective(
    score="minus the share of free threads (in 1/1000000); lowest is the emptiest host",
    node_cost_text="minus its free threads",
    host_score=host_score,
    terms=terms,
    node_cost=node_cost,
)
