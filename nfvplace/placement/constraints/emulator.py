"""Emulator/housekeeping PU (`emulator_threads: isolate`): one extra dedicated PU on the node of the
first cpu-set. It is housekeeping, so it takes any free thread that no isolated vCPU or pair keeps idle:
preferably a thread whose sibling is already used (nothing stranded) or a thread a `prefer` vCPU of the
VM leaves free on its core, else one thread of a whole free core (its siblings stay free)."""

from __future__ import annotations

from .base import ModelContext
from .cpu import STRAND, whole


def post(ctx: ModelContext) -> None:
    if not ctx.request.emulator or not ctx.request.cpu_sets:
        return
    first = ctx.request.cpu_sets[0].id
    m = ctx.model
    for node in ctx.view.nodes:
        y = ctx.placed(first, node.id)
        if y is None:
            continue
        # pool -> objective weight: a whole core strands the threads it leaves; a thread a
        # `prefer` vCPU left free is no longer stranded
        pools = {whole(t): STRAND * (t - 1) for t in node.core_sizes}
        pools.update(single=0, half_iso=0, half_busy=0, left=-(STRAND - 1))
        parts = []
        for pool, weight in pools.items():
            var = m.new_bool_var(f"emulator_{pool}[n{node.id}]")
            ctx.add_use(node.id, pool, var)
            ctx.counts[(f"emu_{pool}", first, node.id)] = var
            parts.append(var)
            if weight:
                ctx.cost("stranded", weight * var)
        m.add(sum(parts) == y)
