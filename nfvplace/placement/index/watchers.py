"""Who still reads an index's rows lazily: the rejections of results handed out, told before a row
changes so that they keep the host as it was when the result was made.

A refused placement's rejections are built only when read (`engine.rejections.RejectionList`),
from the index's columns and descriptors. A caller that keeps a result and places or releases on
the same index before reading it would otherwise read the hosts as they are then. The index holds
its readers weakly: a result nobody keeps is gone before the next write (CPython frees it when its
last reference goes), so a write with no kept result costs one length check.
"""

from __future__ import annotations

import weakref
from typing import Protocol

PRUNE_FROM = 64
"""Readers held before the dead ones are dropped on a registration (a door that evaluates many
times between two writes, reading each diagnosis at once, leaves dead references behind)."""


class RowReader(Protocol):
    def pin(self, index: object, row: int) -> bool:
        """Build now what reads row `row` of `index`, which is about to change; False: nothing
        of this reader reads the index any more (forget it)."""
        ...


class Watchers:
    """The readers of one index (weakly held), told before each row the index rewrites."""

    __slots__ = ("_limit", "_refs")

    def __init__(self) -> None:
        self._refs: list[weakref.ref[RowReader]] = []
        self._limit = PRUNE_FROM

    def __len__(self) -> int:
        return len(self._refs)

    def __reduce__(self) -> tuple[type[Watchers], tuple[()]]:
        # a pickled or deep-copied index is another index: the results read the one they came from
        return Watchers, ()

    def add(self, reader: RowReader) -> None:
        self._refs.append(weakref.ref(reader))
        if len(self._refs) >= self._limit:
            self._refs = [ref for ref in self._refs if ref() is not None]
            self._limit = max(PRUNE_FROM, 2 * len(self._refs))

    def changing(self, index: object, row: int) -> None:
        """Row `row` of `index` is about to be rewritten: every live reader builds what it reads
        of it now (the index calls this before it writes)."""
        if not self._refs:
            return
        kept: list[weakref.ref[RowReader]] = []
        for ref in self._refs:
            reader = ref()
            if reader is not None and reader.pin(index, row):
                kept.append(ref)
        self._refs = kept
