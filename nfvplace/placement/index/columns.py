"""A row's columns after a claim, kind by kind: what `FleetIndex` writes when a host's free
resources change from a view it holds (`before`) to a new one, without reading every node again.

A kind with a free part whose part changed refills its row from it (`Columns.fill`), or, if it
tells what changed (`ColumnsChanged`), works only the nodes whose part is not the same object: a
claim changes the parts of the nodes it takes from, the kinds keep the others' objects. A kind
with no free part works its row out from the configuration (`ColumnsClaimed`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ..resources import implementing
from ..resources.base import HostFree, Table, Vocabulary
from ..resources.stages import Columns, ColumnsChanged, ColumnsClaimed

_COLUMNS: tuple[Columns[Any], ...] = implementing(Columns)
_CHANGING: tuple[ColumnsChanged[Any], ...] = implementing(ColumnsChanged)
_CHANGED = {kind.name: kind for kind in _CHANGING}
_CLAIMING: tuple[ColumnsClaimed[Any], ...] = implementing(ColumnsClaimed)
_CLAIMED = {kind.name: kind for kind in _CLAIMING}


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


def pending_columns(
    tables: Mapping[str, Table],
    i: int,
    base: ComputeHostDescriptor,
    free: HostFree,
    before: HostFree,
    config: VmConfiguration,
    vocab: Vocabulary,
    read: Callable[[], ComputeHostDescriptor],
) -> None:
    """Row i once `config`, kept pending, is claimed on the row as it was (`before`), its free
    resources now `free`: `base` is the descriptor held (what `fill` reads no claim writes); a
    kind with no free part that cannot tell from the configuration reads the host (`read`: it
    cannot happen, the claim was kept pending because every kind could)."""
    for kind in _COLUMNS:
        table = tables.get(kind.name)
        if table is None:  # a lazy index's columns not filled yet
            continue
        part = free.parts.get(kind.name)
        if part is None:
            delta = _CLAIMED.get(kind.name)
            if delta is None or not delta.columns_claimed(table, i, None, base, config):
                kind.fill(table, i, read(), free, vocab)
        elif part is not before.parts[kind.name]:
            fill_changed(kind, table, i, base, free, before, vocab)
