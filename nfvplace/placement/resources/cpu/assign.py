"""Exact PU ids after the solve: every vCPU, the reserved siblings, the emulator PU.

Cores of one class on one node are interchangeable for the model, so the ids are taken in ascending
order (lowest core first), pairs on the two threads of one core, an isolated vCPU's sibling listed in
`reserved_siblings`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ...request import CpuSetDemand, Request
from ..draft import AssignmentError, ConfigurationDraft
from .model import CpuCountKey
from .pools import CpuFree, CpuNode


@dataclass
class _Pools:
    """A node's free PUs by class, taken lowest id first; `left` collects the threads that `prefer`
    vCPUs leave free on their cores (for the emulator PU or another `prefer` cpu-set)."""

    whole: dict[int, list[tuple[int, ...]]]  # core size -> cores
    single: list[int]
    half_busy: list[int]
    left: list[int]

    @classmethod
    def of(cls, node: CpuNode) -> _Pools:
        whole: dict[int, list[tuple[int, ...]]] = {}
        for core in sorted(node.whole_cores):
            whole.setdefault(len(core), []).append(core)
        return cls(
            whole,
            sorted(node.single_cores),
            sorted(node.half_busy),
            [],
        )

    def core(self, size: int) -> tuple[int, ...]:
        cores = self.whole.get(size)
        if not cores:
            raise AssignmentError(f"no whole core of {size} threads left")  # the model prevents it
        return cores.pop(0)

    def thread(self, pool: str) -> int:
        if pool.startswith("whole"):
            return self.core(int(pool[5:]))[0]  # its other threads stay free
        items: list[int] = getattr(self, pool)
        if not items:
            raise AssignmentError(f"pool {pool} exhausted")  # the model prevents this
        return items.pop(0)


Pinned = tuple[dict[int, int], list[int], list[int]]
"""(pins, reserved siblings, vCPUs left to pin from the threads other cpu-sets leave free)."""


def _pin_pairs(
    cs: CpuSetDemand, pool: _Pools, count: Callable[[str], int], pins: dict[int, int]
) -> list[int]:
    """The pairs (and a `require` cpu-set's odd vCPU), core by core; the idle threads."""
    reserved: list[int] = []
    pairs = list(cs.pairs)
    odd = list(cs.singles) if cs.packed else []
    for t in sorted(pool.whole):
        # name -> (pairs on the core, odd vCPUs after them)
        for name, held, alone in (
            ("pair_w", 1, 0),
            ("pair2_w", 2, 0),
            ("po_w", 1, 1),
            ("odd_w", 0, 1),
        ):
            for _ in range(count(f"{name}{t}")):
                core = pool.core(t)
                for k in range(held):
                    a, b = pairs.pop(0)
                    pins[a], pins[b] = core[2 * k], core[2 * k + 1]
                for k in range(alone):
                    pins[odd.pop(0)] = core[2 * held + k]
                rest = core[2 * held + alone :]
                # an odd vCPU leaves its core's other threads free, pairs alone keep them idle
                (pool.left if alone else reserved).extend(rest)
    if pairs or odd:
        raise AssignmentError(f"cpu-set {cs.id}: pairs {pairs} {odd} left without a core")
    return reserved


def _pin_cores(cs: CpuSetDemand, pool: _Pools, count: Callable[[str], int]) -> Pinned:
    """Pins from whole cores and the per-thread pools."""
    sizes = sorted(pool.whole)
    pins: dict[int, int] = {}
    reserved = _pin_pairs(cs, pool, count, pins)
    singles = [] if cs.packed else list(cs.singles)
    for t in sizes:
        for _ in range(count(f"iso_w{t}")):
            core = pool.core(t)
            pins[singles.pop(0)] = core[0]
            reserved.extend(core[1:])
        for k in range(t, 0, -1):
            for _ in range(count(f"pre_w{t}x{k}")):
                core = pool.core(t)
                for thread in core[:k]:
                    pins[singles.pop(0)] = thread
                pool.left.extend(core[k:])  # free for the VM's emulator or others
    for name, source in (
        ("iso_single", "single"),
        ("pre_half_busy", "half_busy"),
        ("pre_single", "single"),
    ):
        for _ in range(count(name)):
            pins[singles.pop(0)] = pool.thread(source)
    later = singles[: count("pre_left")]
    if len(later) != len(singles):
        raise AssignmentError(f"cpu-set {cs.id}: vCPUs {singles} left without a PU")
    return pins, reserved, later


def assign_cpus(
    draft: ConfigurationDraft,
    cpu: CpuFree,
    node_ids: tuple[int, ...],
    request: Request,
    nodes: Mapping[int, int],
    counts: Mapping[CpuCountKey, int],
) -> None:
    """Pins, reserved siblings and the emulator PU of every cpu-set, into `draft`."""
    used = set(nodes.values())  # the nodes the layout puts cpu-sets on: the others are not read
    pools = {node: _Pools.of(cpu.nodes[slot]) for slot, node in enumerate(node_ids) if node in used}
    pinned: dict[int, Pinned] = {}
    for cs in request.cpu_sets:
        if cs.floating:
            continue  # the shared kind's
        node_id = nodes[cs.id]

        def count(name: str, cs_id: int = cs.id, node_id: int = node_id) -> int:
            return counts.get((name, cs_id, node_id), 0)

        pinned[cs.id] = _pin_cores(cs, pools[node_id], count)
    emulator_pins: list[int] = []
    if request.emulator and request.cpu_sets:
        first = request.cpu_sets[0].id
        pool = pools[nodes[first]]
        for name in ["left", "half_busy", "single"] + [f"whole{t}" for t in sorted(pool.whole)]:
            if counts.get((f"emu_{name}", first, nodes[first]), 0):
                emulator_pins.append(pool.thread(name))
    for cs in request.cpu_sets:
        if cs.floating:
            continue
        pins, reserved, later = pinned[cs.id]
        for vcpu in later:
            pins[vcpu] = pools[nodes[cs.id]].thread("left")
        draft.cpu_sets[cs.id].update(
            vcpu_pins={v: pins[v] for v in cs.vcpus},
            reserved_siblings=tuple(sorted(reserved)),
            howtogroup=cs.pairs,  # on sibling threads: renderers give the guest threads=2
        )
    draft.fields["emulator_pins"] = tuple(emulator_pins)
