"""A row's columns after a claim, kind by kind: what `FleetIndex` writes when a host's free
resources change from a view it holds (`before`) to a new one, without reading every node again.

A kind with a free part whose part changed refills its row from it (`Columns.fill`), or, if it
tells what changed (`ColumnsChanged`), works only the nodes whose part is not the same object: a
claim changes the parts of the nodes it takes from, the kinds keep the others' objects. A kind
with no free part reads the host, unless the index can tell its row stands (`ColumnsKept`, or
worked out from the configuration: `ColumnsClaimed`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...models.chd import ComputeHostDescriptor
from ..resources import implementing
from ..resources.base import HostFree, Table, Vocabulary
from ..resources.stages import Columns, ColumnsChanged

_COLUMNS: tuple[Columns[Any], ...] = implementing(Columns)
_CHANGING: tuple[ColumnsChanged[Any], ...] = implementing(ColumnsChanged)
_CHANGED = {kind.name: kind for kind in _CHANGING}


def fill_changed(
    kind: Columns[Any],
    table: Table,
    i: int,
    host: ComputeHostDescriptor,
    free: HostFree,
    before: HostFree,
    vocab: Vocabulary,
) -> None:
    """Row i of `kind`'s columns, filled from `before` (the same node ids), once its free part is
    `free`'s (`host`: the descriptor `fill` reads what no claim writes of)."""
    changed = _CHANGED.get(kind.name)
    if changed is None:
        kind.fill(table, i, host, free, vocab)
    else:
        changed.fill_changed(table, i, free, before, vocab)


def refill_row(
    tables: Mapping[str, Table],
    i: int,
    host: ComputeHostDescriptor,
    free: HostFree,
    before: HostFree,
    vocab: Vocabulary,
    stands: Callable[[Columns[Any], Table], bool],
    read: Callable[[], ComputeHostDescriptor],
) -> None:
    """Row i once its free resources went from `before` (the same node ids) to `free`: `host` is
    the descriptor held (what `fill` reads no claim writes); a kind with no free part keeps its
    row where `stands` says so (it may write the row itself), else fills it from `read()`."""
    for kind in _COLUMNS:
        table = tables.get(kind.name)
        if table is None:  # a lazy index's columns not filled yet
            continue
        part = free.parts.get(kind.name)
        if part is None:
            if not stands(kind, table):
                kind.fill(table, i, read(), free, vocab)
        elif part is not before.parts[kind.name]:
            fill_changed(kind, table, i, host, free, before, vocab)
