"""Emulator/housekeeping PU (`emulator_threads: isolate`): one extra dedicated PU on the node of the
first cpu-set. It is housekeeping, so it takes any free thread: preferably a thread whose sibling is
already used (nothing stranded), else one thread of a whole free core (its sibling stays free)."""

from __future__ import annotations

from .base import ModelContext
from .cpu import STRAND


def post(ctx: ModelContext) -> None:
    if not ctx.request.emulator or not ctx.request.cpu_sets:
        return
    first = ctx.request.cpu_sets[0].id
    m = ctx.model
    for node in ctx.view.nodes:
        y = ctx.placed(first, node.id)
        if y is None:
            continue
        parts = []
        for pool in ("whole", "single", "half_iso", "half_busy"):
            var = m.new_bool_var(f"emulator_{pool}[n{node.id}]")
            ctx.add_use(node.id, pool, var)
            ctx.counts[(f"emu_{pool}", first, node.id)] = var
            parts.append(var)
            if pool == "whole":
                ctx.objective.append(STRAND * var)
        m.add(sum(parts) == y)
