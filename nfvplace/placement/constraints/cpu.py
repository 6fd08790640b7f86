"""CPU pinning and thread policy.

Counts, not threads: per node the model has the number of wholly free cores, free single-thread cores,
free threads whose sibling no VM can get (`half_iso`) and free threads whose sibling a VM uses
(`half_busy`). Per cpu-set and node it decides how many of each its vCPUs take; the exact PU ids are
chosen after the solve (`assign.py`), since cores of one class are interchangeable.

- a howtogroup pair takes one whole free core (both threads); on a host without SMT it cannot fit;
- `isolate` (default): an unpaired vCPU takes a whole core and keeps its sibling idle (reserved for the
  VM), or a free thread whose sibling is host-reserved, or a single-thread core;
- `prefer`: an unpaired vCPU takes any free thread; two of them may share a core (cheapest for pack),
  and a sibling left free may later go to another VM;
- `require`: the descriptor's unpaired vCPUs are paired in order (see request.py); needs SMT.
"""

from __future__ import annotations

import numpy as np

from ...models.vmd import ThreadPolicy
from ..request import CpuSetDemand
from .base import FilterInput, HostCheck, ModelContext, NodeNeed

POOLS = ("whole", "single", "half_iso", "half_busy")
STRAND = 100  # objective weight of a thread left stranded (idle sibling or a half-used core)


def host_checks(inp: FilterInput) -> list[HostCheck]:
    fleet = inp.fleet
    if not any(cs.requires_smt for cs in inp.request.cpu_sets):
        return []
    return [
        HostCheck(
            "smt",
            "have no SMT (howtogroup pairs need the two threads of one core)",
            ~fleet.smt,
            lambda i: ("the host has one thread per core; howtogroup pairs need two", None, None),
        )
    ]


def node_needs(inp: FilterInput, cs: CpuSetDemand, emulator: int) -> list[NodeNeed]:
    f = inp.fleet
    pairs = len(cs.pairs)
    singles = len(cs.singles)
    out = []
    if pairs:
        out.append(
            NodeNeed(
                "core_pairs",
                f"{pairs} free core pairs",
                f.whole >= pairs,
                f.whole,
                pairs,
                "free core pairs",
            )
        )
    spare = np.maximum(f.whole - pairs, 0)
    threads = 2 * spare + f.half_iso + f.half_busy + f.single
    if singles and cs.policy is ThreadPolicy.isolate:
        isolated = spare + f.half_iso + f.single
        out.append(
            NodeNeed(
                "cores",
                f"{singles} free cores for unpaired vCPUs",
                isolated >= singles,
                isolated,
                singles,
                "free cores besides the pairs",
            )
        )
    if singles + emulator:
        need = singles + emulator
        label = "free threads" if not emulator else "free threads (vCPUs and emulator)"
        out.append(
            NodeNeed(
                "threads",
                f"{need} {label}",
                threads >= need,
                threads,
                need,
                "free threads besides the pairs",
            )
        )
    return out


def post(ctx: ModelContext, cs: CpuSetDemand) -> None:
    m = ctx.model
    singles = len(cs.singles)
    pairs = len(cs.pairs)
    for node in ctx.view.nodes:
        y = ctx.placed(cs.id, node.id)
        if y is None:
            continue
        if pairs:
            ctx.add_use(node.id, "whole", pairs * y)
        if not singles:
            continue
        tag = f"cs{cs.id}n{node.id}"
        if cs.policy is ThreadPolicy.isolate:
            iw = m.new_int_var(0, singles, f"iso_whole[{tag}]")
            ih = m.new_int_var(0, singles, f"iso_half[{tag}]")
            isg = m.new_int_var(0, singles, f"iso_single[{tag}]")
            m.add(iw + ih + isg == singles * y)
            ctx.add_use(node.id, "whole", iw)
            ctx.add_use(node.id, "half_iso", ih)
            ctx.add_use(node.id, "single", isg)
            ctx.counts[("iso_whole", cs.id, node.id)] = iw
            ctx.counts[("iso_half", cs.id, node.id)] = ih
            ctx.counts[("iso_single", cs.id, node.id)] = isg
            ctx.objective.append(STRAND * iw)  # the sibling idles
        else:
            w1 = m.new_int_var(0, singles, f"pre_whole1[{tag}]")
            w2 = m.new_int_var(0, singles, f"pre_whole2[{tag}]")
            hi = m.new_int_var(0, singles, f"pre_half_iso[{tag}]")
            hb = m.new_int_var(0, singles, f"pre_half_busy[{tag}]")
            sg = m.new_int_var(0, singles, f"pre_single[{tag}]")
            m.add(w1 + 2 * w2 + hi + hb + sg == singles * y)
            ctx.add_use(node.id, "whole", w1 + w2)
            ctx.add_use(node.id, "half_iso", hi)
            ctx.add_use(node.id, "half_busy", hb)
            ctx.add_use(node.id, "single", sg)
            for name, var in (
                ("pre_whole1", w1),
                ("pre_whole2", w2),
                ("pre_half_iso", hi),
                ("pre_half_busy", hb),
                ("pre_single", sg),
            ):
                ctx.counts[(name, cs.id, node.id)] = var
            ctx.objective.append(STRAND * w1)  # leaves a half-used core behind


def post_capacity(ctx: ModelContext) -> None:
    """Each pool's usage, summed over the cpu-sets (and the emulator PU), within its free count."""
    for node in ctx.view.nodes:
        sizes = {
            "whole": len(node.whole_cores),
            "single": len(node.single_cores),
            "half_iso": len(node.half_isolated),
            "half_busy": len(node.half_busy),
        }
        for pool in POOLS:
            terms = ctx.use.get((node.id, pool))
            if terms:
                ctx.model.add(sum(terms) <= sizes[pool])
