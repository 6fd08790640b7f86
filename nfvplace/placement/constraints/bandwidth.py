"""Cpu-set to cpu-set bandwidth over the NUMA interconnect (`cpu_set_bandwidth`), and NUMA distance.

Two cpu-sets on different nodes need the stated bandwidth free on the link between those nodes when
the host describes that link in `interconnect` (a link the host does not describe is not limited); on
the same node they need nothing. When the host gives `numa_distances`, every two cpu-sets on different
nodes cost their distance in the objective (`DISTANCE` per unit above the local 10), so that nearer
nodes win over farther ones at equal fit. Only the exact model sees node pairs, so this family has no
filter part.
"""

from __future__ import annotations

from itertools import combinations

from ...exact import kbps_of_mbps
from .base import ModelContext

DISTANCE = 20  # objective weight per unit of SLIT distance above 10 (local)


def post(ctx: ModelContext) -> None:
    m = ctx.model
    need: dict[tuple[int, int], int] = {}
    for link in ctx.request.links:
        a, b = link.cpu_sets
        need[(a, b)] = need.get((a, b), 0) + kbps_of_mbps(link.bandwidth_mbps)
    if ctx.view.distances:
        for a, b in combinations([cs.id for cs in ctx.request.cpu_sets], 2):
            if (a, b) not in need and (b, a) not in need:
                need[(a, b)] = 0
    load: dict[tuple[int, int], list[object]] = {}
    for (a, b), kbit in need.items():
        for na in ctx.view.nodes:
            ya = ctx.placed(a, na.id)
            if ya is None:
                continue
            for nb in ctx.view.nodes:
                yb = ctx.placed(b, nb.id)
                if yb is None or na.id == nb.id:
                    continue
                key = (min(na.id, nb.id), max(na.id, nb.id))
                z = m.new_bool_var(f"link[cs{a}@n{na.id}<->cs{b}@n{nb.id}]")
                m.add(z >= ya + yb - 1)
                m.add(z <= ya)
                m.add(z <= yb)
                ctx.links[(a, b, na.id, nb.id)] = z
                if kbit and key in ctx.view.links_free_kbps:
                    load.setdefault(key, []).append(kbit * z)
                distance = ctx.view.distances.get((na.id, nb.id), 10)
                if distance > 10:
                    ctx.cost("distance", DISTANCE * (distance - 10) * z)
    for key, terms in load.items():
        m.add(sum(terms) <= ctx.view.links_free_kbps[key])  # type: ignore[arg-type]
