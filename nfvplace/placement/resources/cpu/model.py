"""CPU pinning and thread policy in the exact model (CP-SAT), and the emulator PU.

Counts, not threads: per node the model has the number of free cores with no thread used (`whole`,
grouped by how many free threads they have: 2 on SMT2 hosts, 4 on SMT4), free single-thread cores,
and free threads whose sibling is used by a VM or host-reserved (`half_busy`). Per cpu-set and node it decides how many of each its vCPUs take; the exact PU ids are
chosen after the solve (`assign.py`), since cores of one class are interchangeable.

- a howtogroup pair takes one whole free core (two of its threads; any others are kept idle); on a
  host without SMT it cannot fit;
- `isolate` (default): an unpaired vCPU takes a whole core and keeps its siblings idle (reserved for
  the VM), or a single-thread core (never a thread next to a busy or host-reserved one);
- `prefer`: an unpaired vCPU takes any free thread; up to all threads of a whole core may go to the
  cpu-set's own vCPUs (cheapest for pack), and the threads of a core it leaves free (`left`) may go
  to the emulator PU, to another `prefer` cpu-set on the same node, or later to another VM;
- `require` (`packed`): the descriptor's unpaired vCPUs are paired in order (see request.py); needs
  SMT; every vCPU sits on a whole free core with the cpu-set's own vCPUs: a core of t threads
  holds one pair (`pair_w{t}`), or two pairs when t >= 4 (`pair2_w{t}`), its other threads idle;
  an odd vCPU takes a thread of a whole core (`odd_w{t}`), or of a core of t >= 3 threads beside
  one pair (`po_w{t}`), and leaves the core's other threads free (for the VM's emulator PU, its
  `prefer` cpu-sets, or other VMs), as Nova packs `require` and leaves an odd vCPU's sibling free;
- the emulator PU (`emulator_threads: isolate`): one extra dedicated PU on the node of the first
  cpu-set. It is housekeeping, so it takes any free thread that no isolated vCPU or pair keeps idle:
  preferably a thread whose sibling is already used (nothing stranded) or a thread a `prefer` vCPU
  of the VM leaves free on its core, else one thread of a whole free core (its siblings stay free).
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from ....models.vmd import ThreadPolicy
from ...request import CpuSetDemand
from ..model import ModelContext, ReadBack
from .pools import CpuFree

CpuCountKey = tuple[
    str, int, int
]  # (what is counted: "pairs_w2", "emu_single", ...; cpu-set; node)
COUNTS: ReadBack[CpuCountKey] = ReadBack("cpu")
"""The counts the CPU kind reads back after the solve, per class of free core, cpu-set and node."""
STRAND = 100  # objective weight of a thread left stranded (idle sibling or a half-used core)


def whole(size: int) -> str:
    """Pool name of the whole free cores with `size` free threads."""
    return f"whole{size}"


def _split(
    ctx: ModelContext, total: cp_model.LinearExprT, parts: dict[str, int], tag: str
) -> dict[str, cp_model.LinearExprT]:
    """`total` split over named parts (name -> upper bound); one part is `total` itself."""
    if len(parts) == 1:
        return {next(iter(parts)): total}
    out: dict[str, cp_model.LinearExprT] = {}
    for name, bound in parts.items():
        out[name] = ctx.model.new_int_var(0, bound, f"{name}[{tag}]")
    ctx.model.add(sum(out.values()) == total)
    return out


def _count(ctx: ModelContext, name: str, cs: int, node: int, expr: cp_model.LinearExprT) -> None:
    if isinstance(expr, cp_model.IntVar):
        ctx.keep(COUNTS, (name, cs, node), expr)
    else:
        var = ctx.model.new_int_var(0, 1 << 16, f"{name}[cs{cs}n{node}]")
        ctx.model.add(var == expr)
        ctx.keep(COUNTS, (name, cs, node), var)


def post_cpu_set(ctx: ModelContext, cpu: CpuFree, cs: CpuSetDemand) -> None:
    singles = len(cs.singles)
    pairs = len(cs.pairs)
    for slot, node in enumerate(ctx.free.node_ids):
        y = ctx.node_var(cs.id, node)
        if y is None:
            continue
        tag = f"cs{cs.id}n{node}"
        sizes = cpu.nodes[slot].core_sizes
        if (pairs or (cs.packed and singles)) and not sizes:
            ctx.model.add(y == 0)
            continue
        if cs.packed:
            _post_packed(ctx, cs, node, y, sizes, tag)
            continue
        if pairs:
            split = _split(ctx, pairs * y, {f"pair_w{t}": pairs for t in sizes}, tag)
            for t in sizes:
                ctx.add_use(node, whole(t), split[f"pair_w{t}"])
                _count(ctx, f"pair_w{t}", cs.id, node, split[f"pair_w{t}"])
                if t > 2:
                    ctx.cost("stranded", STRAND * (t - 2) * split[f"pair_w{t}"])  # kept idle
        if not singles:
            continue
        if cs.policy is ThreadPolicy.isolate:
            _post_isolate(ctx, cs, node, y, sizes, tag)
        else:
            _post_prefer(ctx, cs, node, y, sizes, tag)


def _post_packed(
    ctx: ModelContext,
    cs: CpuSetDemand,
    node: int,
    y: cp_model.IntVar,
    sizes: tuple[int, ...],
    tag: str,
) -> None:
    """A `require` cpu-set: its pairs, and its odd vCPU (at most one), on whole cores."""
    m = ctx.model
    pairs, odd = len(cs.pairs), len(cs.singles)
    covered: list[cp_model.LinearExprT] = []
    odds: list[cp_model.LinearExprT] = []
    for t in sizes:
        # name -> (pairs it holds, odd vCPUs, threads left free, threads kept idle)
        shapes = {f"pair_w{t}": (1, 0, 0, t - 2)}
        if t >= 4 and pairs >= 2:
            shapes[f"pair2_w{t}"] = (2, 0, 0, t - 4)
        if odd:
            shapes[f"odd_w{t}"] = (0, 1, t - 1, 0)
            if t >= 3 and pairs:
                shapes[f"po_w{t}"] = (1, 1, t - 3, 0)
        cores = []
        for name, (held, alone, left, idle) in shapes.items():
            var = m.new_int_var(0, pairs if held else 1, f"{name}[{tag}]")
            ctx.keep(COUNTS, (name, cs.id, node), var)
            cores.append(var)
            covered.append(held * var)
            odds.append(alone * var)
            if left:
                ctx.add_use(node, "left_supply", left * var)
            if idle or left:
                ctx.cost("stranded", STRAND * (idle + left) * var)
        ctx.add_use(node, whole(t), sum(cores))
    m.add(sum(covered) == pairs * y)
    m.add(sum(odds) == odd * y)


def _post_isolate(
    ctx: ModelContext,
    cs: CpuSetDemand,
    node: int,
    y: cp_model.IntVar,
    sizes: tuple[int, ...],
    tag: str,
) -> None:
    singles = len(cs.singles)
    parts = {f"iso_w{t}": singles for t in sizes}
    parts.update(iso_single=singles)
    split = _split(ctx, singles * y, parts, tag)
    for t in sizes:
        ctx.add_use(node, whole(t), split[f"iso_w{t}"])
        ctx.cost("stranded", STRAND * (t - 1) * split[f"iso_w{t}"])  # the siblings idle
    ctx.add_use(node, "single", split["iso_single"])
    for name, expr in split.items():
        _count(ctx, name, cs.id, node, expr)


def _post_prefer(
    ctx: ModelContext,
    cs: CpuSetDemand,
    node: int,
    y: cp_model.IntVar,
    sizes: tuple[int, ...],
    tag: str,
) -> None:
    m = ctx.model
    singles = len(cs.singles)
    hb = m.new_int_var(0, singles, f"pre_half_busy[{tag}]")
    sg = m.new_int_var(0, singles, f"pre_single[{tag}]")
    left = m.new_int_var(0, singles, f"pre_left[{tag}]")
    taken: list[cp_model.LinearExprT] = [hb, sg, left]
    for t in sizes:
        cores = []
        for k in range(1, min(t, singles) + 1):
            w = m.new_int_var(0, singles // k, f"pre_w{t}x{k}[{tag}]")
            ctx.keep(COUNTS, (f"pre_w{t}x{k}", cs.id, node), w)
            cores.append(w)
            taken.append(k * w)
            if k < t:
                ctx.add_use(node, "left_supply", (t - k) * w)  # threads it leaves free
                ctx.cost("stranded", STRAND * (t - k) * w)  # a half-used core
        ctx.add_use(node, whole(t), sum(cores))
    m.add(sum(taken) == singles * y)
    ctx.add_use(node, "half_busy", hb)
    ctx.add_use(node, "single", sg)
    ctx.add_use(node, "left", left)
    # a thread left free taken is no longer stranded; one less than STRAND so that filling a core
    # directly (pre_w2x2) wins over the same layout written as pre_w2x1 + pre_left
    ctx.cost("stranded", -(STRAND - 1) * left)
    for name, var in (
        ("pre_half_busy", hb),
        ("pre_single", sg),
        ("pre_left", left),
    ):
        ctx.keep(COUNTS, (name, cs.id, node), var)


def post_emulator(ctx: ModelContext, cpu: CpuFree) -> None:
    """The emulator PU on the node of the first cpu-set, from any pool but the threads kept idle."""
    first = ctx.request.cpu_sets[0].id
    for slot, node in enumerate(ctx.free.node_ids):
        y = ctx.node_var(first, node)
        if y is None:
            continue
        # pool -> objective weight: a whole core strands the threads it leaves; a thread a
        # `prefer` vCPU left free is no longer stranded
        pools = {whole(t): STRAND * (t - 1) for t in cpu.nodes[slot].core_sizes}
        pools.update(single=0, half_busy=0, left=-(STRAND - 1))
        parts = []
        for pool, weight in pools.items():
            var = ctx.model.new_bool_var(f"emulator_{pool}[n{node}]")
            ctx.add_use(node, pool, var)
            ctx.keep(COUNTS, (f"emu_{pool}", first, node), var)
            parts.append(var)
            if weight:
                ctx.cost("stranded", weight * var)
        ctx.model.add(sum(parts) == y)


def post_capacity(ctx: ModelContext, cpu: CpuFree) -> None:
    """Each pool's usage, summed over the cpu-sets (and the emulator PU), within its free count;
    the threads `prefer` cpu-sets leave free on their cores within what they leave."""
    for slot, node in enumerate(ctx.free.node_ids):
        pools = cpu.nodes[slot]
        sizes: dict[str, int] = {
            "single": len(pools.single_cores),
            "half_busy": len(pools.half_busy),
        }
        for t in pools.core_sizes:
            sizes[whole(t)] = pools.whole_of_size(t)
        for (node_id, pool), terms in ctx.use.items():
            if node_id != node or pool in ("left", "left_supply"):
                continue
            ctx.model.add(sum(terms) <= sizes.get(pool, 0))
        used = ctx.use.get((node, "left"))
        if used:
            supply = ctx.use.get((node, "left_supply"), [])
            ctx.model.add(sum(used) <= sum(supply))
