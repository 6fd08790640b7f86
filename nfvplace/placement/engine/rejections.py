"""A refused placement's rejections: built when first read, as the hosts were when it was refused.

Building a rejection per host costs more than the placement (a refusal over 10,000 hosts), so the
engine keeps groups of hosts and how to word them, and builds the rows when someone reads them.
Some groups word a host from what the index holds of it (its columns, its descriptor: a
`LiveGroup`); the index rewrites those rows when a later placement claims on it or a release gives
back. So a `RejectionList` that still has such groups watches their index (weakly: `Watchers`), and
before the index rewrites a row, the groups that hold that host build its rejection then (pin it).
The others are built when read, as before: a result read at once, or dropped, pins nothing; a kept
one pins only the hosts rewritten while it is kept, once each.

A reader that refuses the same request again and again (the service's 409 over the whole fleet)
may take the groups instead (`RejectionList.hand`), and build only the rows it did not keep.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, overload

import numpy as np
import numpy.typing as npt

from ..index import FleetIndex
from ..resources.base import IntArray
from ..result import Rejection, RejectionRow, rejection_row

Row = Rejection | RejectionRow
Builder = Callable[[], Sequence[Row]]
"""A group's rejections, from what was known when it was refused (nothing the index rewrites)."""
RowsOf = Callable[[IntArray], Sequence[Row]]
"""The rejections of the hosts at these positions of the index, one each, in their order."""


class Keeper(Protocol):
    """Takes a refusal's groups in place of its rows (the service's 409 keeps the rows of earlier
    refusals of the same request: `service.refusals`). Called under the list's lock: no row a
    live group reads is rewritten meanwhile, and a rewritten one is in its `pinned` already."""

    def live(self, group: LiveGroup) -> None:
        """A live group: its hosts' rows are `pinned`'s, or what `rows_of` builds now."""
        ...

    def built(self, rows: Sequence[Row]) -> None:
        """The rows of a group that reads nothing the index rewrites."""
        ...

    def handed(self) -> None:
        """Every group was handed over (still under the list's lock)."""
        ...


class LiveGroup:
    """The rejections of `hosts` (positions in `index`, ascending, each once), worded by `rows_of`
    from what the index holds of them: a host's row is built when the index is about to rewrite
    it (`pin`), or, if it never is, when the group is read."""

    __slots__ = ("hosts", "index", "key", "pinned", "rows_of")

    def __init__(
        self,
        index: FleetIndex,
        hosts: IntArray,
        rows_of: RowsOf,
        key: tuple[str, str] | None = None,
    ) -> None:
        self.index = index
        self.hosts = hosts
        self.rows_of = rows_of
        # what words the rows besides the host and the request: the group's phrase and reason
        # code (None: its rows are never kept across refusals, `Keeper`)
        self.key = key
        self.pinned: dict[int, Row] = {}  # host position -> its rejection, built before a rewrite

    def pin(self, position: int) -> None:
        """Build the rejection of the host at `position` now, if it is one of the group's."""
        hosts = self.hosts
        k = int(np.searchsorted(hosts, position))
        if k < len(hosts) and hosts[k] == position:
            self.keep(position)

    def keep(self, position: int) -> None:
        """Build the rejection of the host at `position`, one of the group's, unless it is built."""
        if position not in self.pinned:
            (self.pinned[position],) = self.rows_of(np.array((position,), dtype=np.int64))

    def rows(self) -> Sequence[Row]:
        pinned = dict(self.pinned)
        if not pinned:
            return self.rows_of(self.hosts)
        order = self.hosts.tolist()
        rest = iter(self.rows_of(np.array([i for i in order if i not in pinned], np.int64)))
        return [pinned[i] if i in pinned else next(rest) for i in order]


Group = Builder | LiveGroup
NO_GROUP, SEVERAL = -1, -2  # `_owner_of`: a host in no live group, in more than one


def _owner_of(live: list[LiveGroup]) -> npt.NDArray[np.int16]:
    """Per host position, the live group it is in (as a list's first pin finds it: a lookup is a
    tenth of a binary search per group; two bytes a host of the index while the result is kept)."""
    size = max((int(g.hosts[-1]) + 1 for g in live if len(g.hosts)), default=0)
    owner = np.full(size, NO_GROUP, dtype=np.int16)
    for k, group in enumerate(live):
        taken = owner[group.hosts] != NO_GROUP
        owner[group.hosts] = k if k < 2**15 else SEVERAL
        owner[group.hosts[taken]] = SEVERAL
    return owner


class RejectionList(Sequence[Rejection]):
    """A sequence of rejections materialised on first access. Groups give `Rejection`s, or
    `RejectionRow`s (a rejection's fields, in order: a tuple costs about a tenth of a frozen
    dataclass's `__init__`), which become `Rejection`s only when the sequence is read, not when
    `rows` is (what `Diagnosis.to_dict` reads: the service's 409 over 1,000 hosts).

    Made with its groups, it watches the indexes its live groups read until it is built: what it
    gives is what they said when it was made, whenever it is read. A thread that reads it while
    another writes the index (the service words its 409 outside the index's lock) reads it whole
    before the write goes on, or after the rows the write changes are pinned (`_lock`)."""

    def __init__(self, groups: list[Group]) -> None:
        self._groups = groups
        self._lock = threading.Lock()
        self._built: list[Row] | None = None
        self._items: tuple[Rejection, ...] | None = None
        # id of an index -> its live groups, and which of them each host position is in
        self._owners: dict[int, tuple[list[LiveGroup], npt.NDArray[np.int16]]] = {}
        indexes = {id(g.index): g.index for g in groups if isinstance(g, LiveGroup)}
        for index in indexes.values():
            index.watchers.add(self)

    def pin(self, index: object, row: int) -> bool:
        """`index` is about to rewrite `row`: build the rejections of that host now (`Watchers`)."""
        with self._lock:
            if self._built is not None:
                return False
            known = self._owners.get(id(index))
            if known is None:
                live = [g for g in self._groups if isinstance(g, LiveGroup) and g.index is index]
                known = self._owners[id(index)] = (live, _owner_of(live))
            live, owner = known
            k = int(owner[row]) if row < len(owner) else NO_GROUP
            if k >= 0:
                live[k].keep(row)
            elif k == SEVERAL:
                for group in live:
                    group.pin(row)
            return True

    def _sorted(self) -> list[Row]:
        """What the groups gave, by host."""
        if self._built is not None:
            return self._built
        with self._lock:
            if self._built is None:
                built: list[Row] = []
                for group in self._groups:
                    built.extend(group.rows() if isinstance(group, LiveGroup) else group())
                built.sort(key=_host_of)
                self._built = built
                self._groups, self._owners = [], {}  # what they read is no longer needed
            return self._built

    def rows(self) -> tuple[RejectionRow, ...]:
        """Every rejection's fields, by host, without making a `Rejection` of each."""
        return tuple(rejection_row(r) if isinstance(r, Rejection) else r for r in self._sorted())

    def hand(self, keeper: Keeper) -> bool:
        """Hand every group to `keeper`, in order, instead of building the rows (False, and
        nothing handed: the list was read already). The list goes on giving its rows as of when
        it was made, if read after."""
        with self._lock:
            if self._built is not None:
                return False
            for group in self._groups:
                if isinstance(group, LiveGroup):
                    keeper.live(group)
                else:
                    keeper.built(group())
            keeper.handed()
            return True

    def _all(self) -> tuple[Rejection, ...]:
        if self._items is None:
            self._items = tuple(
                r if isinstance(r, Rejection) else Rejection(*r) for r in self._sorted()
            )
        return self._items

    @overload
    def __getitem__(self, index: int) -> Rejection: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Rejection]: ...
    def __getitem__(self, index: int | slice) -> Rejection | Sequence[Rejection]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._sorted())

    def __iter__(self) -> Iterator[Rejection]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RejectionList({list(self._all())!r})"


def _host_of(rejection: Row) -> str:
    return rejection.host if isinstance(rejection, Rejection) else rejection[0]
