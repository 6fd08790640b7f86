"""`least-fragmentation`: the host and node where the VM fits most tightly (fewest free threads
left on the chosen node), which keeps large holes for large VMs."""

from __future__ import annotations

import numpy as np

from ...index import FleetIndex
from ...request import CpuSetDemand, Request
from ...resources.base import HostFree, IntArray
from ...resources.rows import rows_min
from .measures import Objective, leading, node_kept, node_leading, room

NO_NODE = 1 << 20  # the leftover of a node the first cpu-set may not use
TIGHTNESS = 4096  # the leftover's weight; the host's free threads break ties (at most 4095)


def host_score(fleet: FleetIndex, request: Request, node_ok: dict[int, np.ndarray]) -> IntArray:
    need = request.cpu_sets[0] if request.cpu_sets else None
    ok = node_ok.get(need.id if need else -1)
    vcpus = len(need.vcpus) if need else (request.shared.vcpus if request.shared else 0)
    usable = ok if ok is not None else fleet.node_id >= 0
    leftover = np.where(usable, room(fleet) - vcpus, NO_NODE)
    score: IntArray = rows_min(leftover).astype(np.int64) * TIGHTNESS + np.minimum(
        leading(fleet).free, TIGHTNESS - 1
    )
    return score


def terms(fleet: FleetIndex, i: int, request: Request) -> list[tuple[str, int, str]]:
    return []  # the score itself is the measure (`score`)


def node_cost(free: HostFree, slot: int, cs: CpuSetDemand, request: Request) -> int:
    left = abs(node_leading(free, slot).free - len(cs.vcpus))
    return left + node_kept(free, slot, request, cs)


LEAST_FRAGMENTATION = Objective(
    score="free threads left on the tightest node after the first cpu-set x 4096, plus the "
    "host's free threads (at most 4095); lowest is the tightest fit",
    node_cost_text="free threads left beyond the cpu-set",
    host_score=host_score,
    terms=terms,
    node_cost=node_cost,
)
