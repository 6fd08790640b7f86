"""A host's PU layout (per NUMA cell: its PUs in order, each one's core and siblings), kept per
topology. Standard library only.

A fleet's hosts are of a few hardware kinds: a thousand hosts have a few distinct topologies (the
cells' `cpuset`, `pcpuset` and `siblings`), while their pinned CPUs and usage differ from host to
host. The layout, the part of a CHD's PUs that depends on the topology alone, is worked out once
per topology (`layout_of`), with its columns' JSON (`canonical.remember`); `hosts._node` adds
each PU's state.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from .canonical import remember

KEPT_LAYOUTS = 256  # distinct host topologies kept (a fleet has a few)


@dataclass(frozen=True, slots=True)
class CellLayout:
    """A cell's PUs: `shared` (`cpuset`), `dedicated` (`pcpuset`), every PU of the cell (`pus`,
    also those in neither set), and the columns of its PUs in order (ids, cores, siblings)."""

    shared: frozenset[int]
    dedicated: frozenset[int]
    pus: frozenset[int]
    order: tuple[int, ...]
    cores: tuple[int, ...]
    siblings: tuple[tuple[int, ...], ...]


_kept: dict[tuple[Any, ...], tuple[CellLayout, ...]] = {}
_lock = threading.Lock()


def layout_of(cells: Sequence[Mapping[str, Any]]) -> tuple[CellLayout, ...]:
    """Each cell's layout, worked out once per topology."""
    key = tuple(
        (tuple(c["cpuset"]), tuple(c["pcpuset"]), tuple(map(tuple, c.get("siblings") or ())))
        for c in cells
    )
    found = _kept.get(key)
    if found is None:
        core_of = _core_ids(cells)
        found = tuple(_cell_layout(cell, core_of) for cell in cells)
        with _lock:
            if len(_kept) >= KEPT_LAYOUTS:
                _kept.clear()
            _kept[key] = found
    return found


def _cell_layout(
    cell: Mapping[str, Any], core_of: Mapping[int, tuple[int, tuple[int, ...]]]
) -> CellLayout:
    shared, dedicated = frozenset(cell["cpuset"]), frozenset(cell["pcpuset"])
    pus = shared | dedicated | {pu for s in cell.get("siblings") or () for pu in s}
    order = tuple(sorted(pus))
    cores = [core_of.get(pu) or (pu, (pu,)) for pu in order]
    layout = CellLayout(
        shared,
        dedicated,
        pus,
        order,
        tuple(core for core, _ in cores),
        tuple(siblings for _, siblings in cores),
    )
    for column in (layout.order, layout.cores, layout.siblings):
        remember(column)  # their JSON, written once (`canonical`)
    return layout


def _core_ids(cells: Iterable[Mapping[str, Any]]) -> dict[int, tuple[int, tuple[int, ...]]]:
    """PU -> (core id, its siblings); a core is named by its lowest PU (unique on the host).
    A cell in which no core has two threads in `cpuset` or `pcpuset` is a cell without SMT to
    nova-compute (its threads_per_core is 1: the operator left each dedicated core's siblings to
    the host, Nova's way to emulate a host without SMT), and each of its threads is a core of its
    own here too; elsewhere a core with a host-reserved thread keeps it as a sibling."""
    out: dict[int, tuple[int, tuple[int, ...]]] = {}
    for cell in cells:
        flat = threads_per_core(cell) == 1
        for siblings in cell.get("siblings") or ():
            group = tuple(sorted(map(int, siblings)))
            if flat:
                out.update((pu, (pu, (pu,))) for pu in group)
            else:
                out.update(dict.fromkeys(group, (group[0], group)))
    return out


def threads_per_core(cell: Mapping[str, Any]) -> int:
    """Nova's `threads_per_core` of a host cell: its largest sibling set within `cpuset` and
    `pcpuset` (what the libvirt driver reports), 1 without siblings."""
    usable = set(cell.get("cpuset") or ()) | set(cell.get("pcpuset") or ())
    siblings = cell.get("siblings") or ()
    if usable.issuperset(chain.from_iterable(siblings)):  # no thread kept for the host
        return max(map(len, map(set, siblings)), default=1) or 1
    return max((len(usable.intersection(s)) for s in siblings), default=1) or 1
