"""`pack` (default): the fullest host that fits, counting the share of each kind's free capacity
(threads, normal memory), and keeping hosts with what the VM does not need (free VFs and ports, SMT
for howtogroup pairs) for the VMs that need it; on it the fullest node that fits (keep whole nodes
free), keeping nodes with usable ports when the cpu-set needs none.

One formula at both levels: the sum of the kinds' shares (in 1/10000 of a host, in percent of a
node) plus the points of what is kept.
"""

from __future__ import annotations

import operator
from functools import reduce

import numpy as np

from ...index import FleetIndex
from ...index.derived import Rows
from ...request import CpuSetDemand, Request
from ...resources.base import HostFree, IntArray
from .measures import Objective, fullness, kept, node_fullness, node_kept, share

HOST_SCALE = 10_000  # a host's shares, in 1/10000
NODE_SCALE = 100  # a node's shares, in percent
NODE_SHARES = "pack node shares"  # the key of a node's shares in `HostFree.memo`


def host_score(fleet: FleetIndex, request: Request, node_ok: dict[int, np.ndarray]) -> IntArray:
    """Read only: the score is kept by the index for each set of kept parts that requests give
    (`FleetIndex.derived_column`), worked out again only for the rows claimed since."""
    full = fullness(fleet)
    keeps = kept(fleet, request)

    def score(rows: Rows) -> IntArray:
        summed: IntArray = reduce(
            operator.add, [share(f.free[rows], f.total[rows], HOST_SCALE) for f in full]
        )
        for keep in keeps:
            summed = summed + keep.weight * keep.count[rows]
        return summed

    sources: list[np.ndarray] = [column for f in full for column in (f.free, f.total)]
    sources += [keep.count for keep in keeps]
    name = "pack score, " + ", ".join(keep.part for keep in keeps)
    return fleet.derived_column(name, sources, score)


def terms(fleet: FleetIndex, i: int, request: Request) -> list[tuple[str, int, str]]:
    out = []
    for f in fullness(fleet):
        free, total = int(f.free[i]), int(f.total[i])
        points = share(free, total, HOST_SCALE)
        out.append((f.part, points, f"{free} of {total} {f.unit} free, in 1/{HOST_SCALE}"))
    for keep in kept(fleet, request):
        count = int(keep.count[i])
        meaning = keep.meaning.format(count=count, weight=keep.weight)
        out.append((keep.part, keep.weight * count, meaning))
    return out


def node_cost(free: HostFree, slot: int, cs: CpuSetDemand, request: Request) -> int:
    """The node's shares (of the free resources alone: kept with them, read again for every
    placement that looks at the host until a claim changes it) plus the points of what it keeps."""
    memo = free.memo()
    shares: int | None = memo.get((NODE_SHARES, slot))
    if shares is None:
        shares = 0
        for n in node_fullness(free, slot):
            shares += n.free * NODE_SCALE // max(n.total, 1)  # `share`, on Python integers
        memo[(NODE_SHARES, slot)] = shares
    return shares + node_kept(free, slot, request, cs)


PACK = Objective(
    score="shares of free threads and free normal memory (in 1/10000 each), plus points for "
    "free VFs and ports and for SMT the VM does not need; lowest is the fullest host that fits",
    node_cost_text="percent of free threads plus percent of free normal memory of each node, "
    "lower is fuller",
    host_score=host_score,
    terms=terms,
    node_cost=node_cost,
)
