"""The CPU kind's part of the exact model with the cpu-sets' nodes fixed, without CP-SAT
(`ModelDirect`, `resources/direct.py`).

With the nodes fixed, each node's counts are a problem of their own: the pools of that node, the
cpu-set on it and the emulator PU if the first cpu-set is there. This works out the cases the
engine meets most, on nodes whose whole free cores have two threads (or none):

- pairs and `isolate` vCPUs, with or without the emulator PU: every pair takes a whole core; an
  isolated vCPU a single-thread core (cost 0) before a whole core (cost `STRAND`), so for each
  pool the emulator PU may take, the best split is unique; the answer is unique when one of the
  emulator's pools is strictly cheapest;
- `prefer` vCPUs without the emulator PU: two vCPUs on a whole core, one on a half-busy thread
  or a single-thread core cost 0, a core given one vCPU alone costs `STRAND` (and 1 with a
  second vCPU on its other thread, which is never better than two vCPUs on one core), so the
  best layouts are those with the fewest cores given one vCPU alone; the answer when there is
  one such layout; a verdict needs only the count of free threads.

Everything else (`require` cpu-sets, cores of other sizes, two cpu-sets on one node, `prefer` with
the emulator PU when the layout is optimised, two best layouts) is
`NoAnswer.unsure`: CP-SAT decides, as before.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, replace
from typing import cast

from ....models.vmd import ThreadPolicy
from ...request import CpuSetDemand
from ..direct import Assignment, DirectPart, NoAnswer
from .model import COUNTS, STRAND, whole
from .pools import CpuFree, CpuNode

EMULATOR_POOLS = ("whole2", "single", "half_busy", "left")


def skeleton(a: Assignment, cpu: CpuFree) -> tuple[dict[Hashable, int], bool]:
    """Every count the model reads back, at 0, in the order it posts them; and whether it posts a
    `stranded` cost."""
    values: dict[Hashable, int] = {}
    stranded = False
    for cs in a.request.cpu_sets:
        allowed = a.allowed[cs.id]
        for slot, node in enumerate(a.free.node_ids):
            sizes = cpu.nodes[slot].core_sizes
            if node not in allowed or (cs.pairs and not sizes):
                continue
            for t in sizes if cs.pairs else ():
                values[(f"pair_w{t}", cs.id, node)] = 0
                stranded = stranded or t > 2
            if cs.singles and cs.policy is ThreadPolicy.isolate:
                for t in sizes:
                    values[(f"iso_w{t}", cs.id, node)] = 0
                    stranded = True
                values[("iso_single", cs.id, node)] = 0
            elif cs.singles:
                for t in sizes:
                    for k in range(1, min(t, len(cs.singles)) + 1):
                        values[(f"pre_w{t}x{k}", cs.id, node)] = 0
                for name in ("pre_half_busy", "pre_single", "pre_left"):
                    values[(name, cs.id, node)] = 0
                stranded = True
    if a.request.emulator:
        first = a.request.cpu_sets[0].id
        for slot, node in enumerate(a.free.node_ids):
            if node in a.allowed[first]:
                for pool in (*(whole(t) for t in cpu.nodes[slot].core_sizes), *EMULATOR_POOLS[1:]):
                    values[(f"emu_{pool}", first, node)] = 0
                stranded = True
    return values, stranded


@dataclass(frozen=True, slots=True)
class _PoolCounts:
    whole: int  # whole free cores of two threads
    single: int
    half_busy: int

    def less(self, pool: str | None) -> _PoolCounts | None:
        """The pools once the emulator PU took one of `pool` (None: it is not on this node)."""
        took = {pool: 1}
        out = _PoolCounts(
            self.whole - took.get("whole2", 0),
            self.single - took.get("single", 0),
            self.half_busy - took.get("half_busy", 0),
        )
        return out if min(out.whole, out.single, out.half_busy) >= 0 else None


Counts = dict[str, int]  # count name -> value, for one cpu-set (or the emulator PU) on one node
Options = list[tuple[int, Counts]]  # (stranded cost, counts) of each layout worth comparing


def _isolate(cs: CpuSetDemand, pools: _PoolCounts, emulator: str | None) -> Options:
    """Pairs and isolated vCPUs beside the emulator PU in `emulator`'s pool: the unique best."""
    left = pools.less(emulator)
    if left is None or emulator == "left":  # no `prefer` vCPU leaves a thread: its pool is 0
        return []
    singles = len(cs.singles)
    on_single = min(singles, left.single)
    on_whole = singles - on_single
    if len(cs.pairs) + on_whole > left.whole:
        return []
    counts: Counts = {"pair_w2": len(cs.pairs)} if cs.pairs else {}
    if singles:
        counts.update(iso_w2=on_whole, iso_single=on_single)
    return [(STRAND * (on_whole + (emulator == "whole2")), counts)]


def _prefer(cs: CpuSetDemand, pools: _PoolCounts, optimize: bool) -> Options | NoAnswer:
    """`prefer` vCPUs (and pairs) without the emulator PU: for a verdict one layout if any fits,
    found greedily (two vCPUs a core, then half-busy threads and single-thread cores, at most one
    vCPU alone on a core); when optimised, the one best layout, or unsure (a tie)."""
    singles, cores = len(cs.singles), pools.whole - len(cs.pairs)
    if cores < 0 or singles > 2 * cores + pools.single + pools.half_busy:
        return []
    base: Counts = {"pair_w2": len(cs.pairs)} if cs.pairs else {}
    if not optimize:
        both = min(cores, singles // 2)
        rest = singles - 2 * both
        half = min(pools.half_busy, rest)
        alone = min(pools.single, rest - half)
        counts = {"pre_w2x1": rest - half - alone, "pre_w2x2": both}
        return [(0, base | counts | {"pre_half_busy": half, "pre_single": alone})]
    # a core given one vCPU costs STRAND, or 1 with a second vCPU on its other thread (`left`),
    # which two vCPUs on a whole core do for 0: the best gives no vCPU a `left` thread and the
    # fewest cores one vCPU alone (`alone`); unique when one split of the rest has that many
    for alone in range(min(cores, singles) + 1):
        out: Options = []
        rest = singles - alone
        for both in range(min(cores - alone, rest // 2) + 1):
            spare = rest - 2 * both  # for half-busy threads and single-thread cores
            for half in range(max(spare - pools.single, 0), min(pools.half_busy, spare) + 1):
                if out:
                    return NoAnswer.unsure  # two best layouts: CP-SAT's pick is its own
                counts = {"pre_w2x1": alone, "pre_w2x2": both, "pre_half_busy": half}
                out.append((STRAND * alone, base | counts | {"pre_single": spare - half}))
        if out:
            return out
    return []


def _prefer_emulator(cs: CpuSetDemand, pools: _PoolCounts) -> tuple[Counts, str] | None:
    """A verdict's layout of `prefer` vCPUs and the emulator PU: the emulator on a half-busy
    thread, a single-thread core or a whole core, else beside one vCPU on a core it shares."""
    for pool in ("half_busy", "single", "whole2"):
        less = pools.less(pool)
        found = _prefer(cs, less, False) if less is not None else []
        if isinstance(found, list) and found:
            return found[0][1], pool
    if pools.whole < 1:
        return None
    shared = _PoolCounts(pools.whole - 1, pools.single, pools.half_busy)
    found = _prefer(_one_less(cs), shared, False)
    if not isinstance(found, list) or not found:
        return None
    counts = found[0][1]
    return counts | {"pre_w2x1": counts.get("pre_w2x1", 0) + 1}, "left"


def _one_less(cs: CpuSetDemand) -> CpuSetDemand:
    return replace(cs, singles=cs.singles[1:])


def _node(
    cs: CpuSetDemand, node: CpuNode, emulator: bool, optimize: bool
) -> tuple[int, Counts, str | None] | NoAnswer:
    """The counts of `cs` on `node` (with the emulator PU when `emulator`): cost, counts and the
    emulator's pool."""
    pools = _PoolCounts(node.whole_of_size(2), len(node.single_cores), len(node.half_busy))
    if cs.singles and cs.policy is not ThreadPolicy.isolate:
        if not emulator:
            found = _prefer(cs, pools, optimize)
            if isinstance(found, NoAnswer):
                return found
            return (*found[0], None) if found else NoAnswer.infeasible
        if optimize:
            return NoAnswer.unsure
        verdict = _prefer_emulator(cs, pools)
        return NoAnswer.infeasible if verdict is None else (0, *verdict)
    best: list[tuple[int, Counts, str | None]] = []
    for pool in EMULATOR_POOLS if emulator else (None,):
        for cost, counts in _isolate(cs, pools, pool):
            if not optimize:
                return cost, counts, pool
            best.append((cost, counts, pool))
    if not best:
        return NoAnswer.infeasible
    low = min(cost for cost, _, _ in best)
    if sum(1 for cost, _, _ in best if cost == low) > 1:
        return NoAnswer.unsure  # the emulator PU has two pools of the same cost
    return next(b for b in best if b[0] == low)


def cpu_direct(a: Assignment, cpu: CpuFree) -> DirectPart | NoAnswer:
    """The CPU kind's counts with the assignment's nodes: each cpu-set's node worked out alone."""
    request = a.request
    if any(cs.packed for cs in request.cpu_sets):
        return NoAnswer.unsure
    kept = a.memo.get("cpu")
    if kept is None:
        kept = a.memo["cpu"] = skeleton(a, cpu)  # the same for every assignment of the model
    zeros, stranded = cast(tuple[dict[Hashable, int], bool], kept)
    values = dict(zeros)
    first = request.cpu_sets[0].id
    total = 0
    for cs in request.cpu_sets:
        node_id = a.nodes[cs.id]
        node = cpu.nodes[a.free.slot(node_id)]
        if len(a.on(node_id)) > 1 or not set(node.core_sizes) <= {2}:
            return NoAnswer.unsure
        if cs.pairs and not node.core_sizes:
            return NoAnswer.infeasible
        found = _node(cs, node, request.emulator and cs.id == first, a.optimize)
        if isinstance(found, NoAnswer):
            return found
        cost, counts, pool = found
        total += cost
        if pool is not None:
            counts = counts | {f"emu_{pool}": 1}
        for name, value in counts.items():
            key = (name, cs.id, node_id)
            if value and key not in values:
                return NoAnswer.unsure  # a count the model does not have: never silently
            if value:
                values[key] = value
    return DirectPart({COUNTS.kind: values}, {"stranded": total} if stranded and a.optimize else {})
