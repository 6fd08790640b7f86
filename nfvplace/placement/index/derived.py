"""Columns worked out from an index's columns, kept between placements: each read works out again
only the rows the index rewrote since (`DerivedColumns`).

A placement over 10,000 hosts reads columns that no request changes but every claim changes in one
row: `pack`'s score (the shares of free threads and memory, two integer divisions over every host,
and the points of what a host keeps), about 55 µs worked out afresh, 7 µs kept and 13 µs with the
row the last claim rewrote worked out again. (A column read by one comparison, such as which node
slots hold a node, gains nothing: working one row out again costs about what the comparison
does.) The index tells its `DerivedColumns` of every row before it rewrites it
(`FleetIndex._changing`); a column also keeps the arrays it was worked out from, and is worked out
whole again when the index holds others (a rebuild, a lazy index's columns filled, a copy).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]
Rows = npt.NDArray[np.intp] | slice
Compute = Callable[[Rows], Array]
"""The column's values for the rows given (`slice(None)`: every row), as a new array."""


@dataclass
class _Derived:
    sources: tuple[Array, ...]
    value: Array
    dirty: set[int] = field(default_factory=set)


class DerivedColumns:
    """The derived columns of one index, by name. Never copied with the index: a copy, or an
    index read back from a pickle, starts with none."""

    def __init__(self) -> None:
        self._kept: dict[str, _Derived] = {}
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[DerivedColumns], tuple[()]]:
        return DerivedColumns, ()

    def changing(self, row: int) -> None:
        """Row `row` is about to be rewritten: each column works it out again when next read."""
        if not self._kept:
            return
        with self._lock:
            for kept in self._kept.values():
                kept.dirty.add(row)

    def column(self, name: str, sources: Sequence[Array], compute: Compute) -> Array:
        """The column `name`, worked out by `compute` from `sources` (the index's arrays it reads,
        as the index holds them now). Read only: the array is kept for the next reads."""
        with self._lock:
            kept = self._kept.get(name)
            if kept is None or not _same(kept.sources, sources):
                kept = self._kept[name] = _Derived(tuple(sources), compute(slice(None)))
            elif kept.dirty:
                rows = np.fromiter(kept.dirty, dtype=np.intp, count=len(kept.dirty))
                kept.dirty.clear()
                kept.value[rows] = compute(rows)
            return kept.value


def _same(kept: tuple[Array, ...], now: Sequence[Array]) -> bool:
    return len(kept) == len(now) and all(a is b for a, b in zip(kept, now, strict=True))
