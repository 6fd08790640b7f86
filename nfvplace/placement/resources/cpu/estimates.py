"""The CPU kind in the counting model (capacity) and in the relaxation (joint placement)."""

from __future__ import annotations

from dataclasses import dataclass

from ortools.sat.python import cp_model

from ....models.vmd import ThreadPolicy
from ...reasons import Reason
from ...request import CpuSetDemand, Part, Request
from ..kind import RelaxModel, Uncounted
from .table import CpuTable

USES = ("pairs", "isolated", "loose", "packed")


@dataclass
class CpuCount:
    """The free cores and threads of one NUMA node, taken from as instances are counted onto it."""

    whole: int
    half_busy: int
    single: int


def count_state(t: CpuTable, i: int, slot: int) -> CpuCount:
    if t.whole_threads[i, slot] != 2 * t.whole[i, slot]:
        raise Uncounted  # cores of more than two threads: the engine counts those
    return CpuCount(
        whole=int(t.whole[i, slot]),
        half_busy=int(t.half_busy[i, slot]),
        single=int(t.single[i, slot]),
    )


def take(node: CpuCount, cs: CpuSetDemand, emulator: bool) -> Reason | None:
    """One instance's cpu-set (and emulator PU) on the node, as the engine's objective takes it:
    pairs whole cores (and `require`'s odd vCPU, its sibling left free); isolated vCPUs
    single-thread cores first, then whole cores; other vCPUs loose
    threads, then whole cores, the last odd one leaving its sibling free; the emulator PU that
    thread, else a loose thread, else a thread of a whole core."""
    pairs, singles = len(cs.pairs), len(cs.singles)
    if pairs > node.whole:
        return Reason.core_pairs
    node.whole -= pairs
    left = 0
    if cs.packed and singles:  # `require`'s odd vCPU: a whole core, its sibling left free
        if node.whole < 1:
            return Reason.core_pairs
        node.whole -= 1
        left = 1
    elif cs.policy is ThreadPolicy.isolate:
        loose = min(singles, node.single)
        if singles - loose > node.whole:
            return Reason.cores
        node.whole -= singles - loose
        node.single -= loose
    else:
        loose = min(singles, node.half_busy + node.single)
        rest = singles - loose
        cores = (rest + 1) // 2
        if cores > node.whole:
            return Reason.threads
        node.whole -= cores
        left = 2 * cores - rest
        _take_loose(node, loose)
    if emulator:
        if left:
            left = 0
        elif node.half_busy + node.single:
            _take_loose(node, 1)
        elif node.whole:
            node.whole -= 1
            left = 1
        else:
            return Reason.threads
    node.half_busy += left  # a thread the instance left free: its sibling is now used
    return None


def _take_loose(node: CpuCount, n: int) -> None:
    for name in ("half_busy", "single"):
        got = min(n, getattr(node, name))
        setattr(node, name, getattr(node, name) - got)
        n -= got


def relax_uses(request: Request, part: Part) -> list[tuple[str, int]]:
    """Per instance: pairs (a whole core each), isolated vCPUs (a core each) and loose threads
    (other unpaired vCPUs, and the emulator PU with the first cpu-set)."""
    if not isinstance(part, CpuSetDemand):
        return []
    singles = len(part.singles)
    isolate = part.policy is ThreadPolicy.isolate and not part.packed
    first = bool(request.cpu_sets) and part is request.cpu_sets[0]
    return [
        ("packed" if part.packed else "pairs", len(part.pairs)),
        ("isolated", singles if isolate else 0),
        ("loose", (0 if isolate else singles) + int(request.emulator and first)),
    ]


def relax_cpus(model: RelaxModel, t: CpuTable) -> None:
    """Pairs, isolated vCPUs and loose threads on each node (a `require` cpu-set's pairs are
    `packed`, two to a core of four threads; its odd vCPU is loose). On SMT2 nodes, exactly how
    they can share its cores: every whole core holds a pair, an isolated vCPU or loose threads (up
    to two), every single-thread core an isolated vCPU or a loose thread, every thread whose
    sibling is used or host-reserved a loose thread."""
    by_node: dict[tuple[int, int], dict[str, list[cp_model.LinearExprT]]] = {}
    for (host, slot, name), terms in model.uses("cpu").items():
        by_node.setdefault((host, slot), {})[name] = terms
    m = model.model
    for (host, slot), uses in by_node.items():
        pairs, isolated, loose, packed = (cp_model.LinearExpr.sum(uses.get(k, [])) for k in USES)
        whole, threads = int(t.whole[host, slot]), int(t.whole_threads[host, slot])
        alone = int(t.single[host, slot])
        busy = int(t.half_busy[host, slot])
        if threads != 2 * whole:  # cores of other sizes: the counts alone
            m.add(2 * pairs + packed <= 2 * whole)
            m.add(2 * pairs + packed + 2 * isolated <= 2 * (whole + alone))
            m.add(2 * pairs + 2 * packed + isolated + loose <= threads + alone + busy)
            continue
        pairs = pairs + packed  # on SMT2 a packed pair takes a whole core too
        on_alone = m.new_int_var(0, alone, f"iso_alone[{host},{slot}]")
        shared = m.new_int_var(0, whole, f"loose_cores[{host},{slot}]")
        m.add(on_alone <= isolated)
        m.add(pairs + isolated - on_alone + shared <= whole)
        m.add(loose <= busy + alone - on_alone + 2 * shared)
