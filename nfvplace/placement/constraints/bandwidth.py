"""Cpu-set to cpu-set bandwidth over the NUMA interconnect (`cpu_set_bandwidth`).

Two cpu-sets on different nodes need the stated bandwidth free on the link between those nodes when
the host describes that link in `interconnect` (a link the host does not describe is not limited); on
the same node they need nothing. Only the exact model sees node pairs, so this family has no filter
part.
"""

from __future__ import annotations

from ...exact import kbps_of_mbps
from .base import ModelContext


def post(ctx: ModelContext) -> None:
    m = ctx.model
    load: dict[tuple[int, int], list[object]] = {}
    for link in ctx.request.links:
        a, b = link.cpu_sets
        need = kbps_of_mbps(link.bandwidth_mbps)
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
                if key in ctx.view.links_free_kbps:
                    load.setdefault(key, []).append(need * z)
    for key, terms in load.items():
        m.add(sum(terms) <= ctx.view.links_free_kbps[key])  # type: ignore[arg-type]
