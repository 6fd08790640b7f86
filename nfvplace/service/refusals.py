"""A worker's 409 no_fit, its rejections kept across refusals of the same request.

Once the fleet is full, most refusals are of a request refused before: the same VM (its name
aside) over the same 1,000 hosts, of which a few changed since. Its problem document carries every
host's rejection (the REST contract), and building those rows and rendering them cost more than
the engine's refusal itself. A host's row depends only on the request and on that host's row of
the index, so `KeptRefusals` keeps, per request shape and rejection group, each host's row as JSON
with the version of the host's row it was built from, and a refusal builds only the rows of the
hosts that changed since; the document is joined from the kept JSON, byte for byte what
`Diagnosis.to_dict` then `to_json` give.

Versions: the memo watches the worker's index (`FleetIndex.watchers`), which tells it before it
rewrites a row; each rewrite gives the row a new version. The versions a refusal's rows are keyed
by are taken under the worker's lock right after the engine refused (`versions`), when no write is
under way, and its rows are as of that moment whenever they are read (`RejectionList`): a row kept
under a version is the host as it was at that version. A new index (hosts came or went, or the
index rebuilt its columns) gives every row a version never used before.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic_core import to_json

from ..models.vmd import VmDescriptor
from ..placement import FleetIndex
from ..placement.engine.rejections import LiveGroup, RejectionList, Row
from ..placement.resources.base import IntArray
from ..placement.result import (
    Diagnosis,
    Rejection,
    RejectionRow,
    rejection_dict,
    rejection_row,
)

SHAPES = 32  # request shapes kept, the least recently refused dropped first
ROWS = 100_000  # rows kept over every shape: about 37 MiB (a row, its JSON and slot: 370 bytes)


@dataclass(frozen=True)
class RowVersions:
    """The version of each row of one index when a refusal was made, and each row's place in
    the order of the hosts' ids (the index held while the refusal is worded: the worker may have
    built another meanwhile)."""

    index: FleetIndex
    epoch: int  # the memo's, when taken: rows of another epoch are never kept
    at: IntArray
    rank: IntArray


class _Group:
    """One rejection group's rows of one shape: per host position, its JSON and the version of
    the host's row it was built from (-1: none)."""

    __slots__ = ("json", "version")

    def __init__(self, size: int) -> None:
        self.version: IntArray = np.full(size, -1, dtype=np.int64)
        self.json: list[bytes] = [b""] * size


class _Body:
    """One shape's last list of rejections: per host position the group (an id of the shape's
    `keys`; -1: no row) and the version its row was built at, per place in the order of the ids
    that row's JSON, and the list joined. A refusal whose hosts are in the same groups at the same
    versions answers with it as it is; one where a few changed splices only theirs."""

    __slots__ = ("key", "missing", "parts", "text", "version")

    def __init__(self, size: int) -> None:
        self.key: npt.NDArray[np.int32] = np.full(size, -1, dtype=np.int32)
        self.version: IntArray = np.full(size, -1, dtype=np.int64)
        self.parts: list[bytes | None] = [None] * size
        self.missing = size  # parts without a row
        self.text = b""  # the rows' JSON, comma separated


class _Shape:
    __slots__ = ("body", "groups", "keys", "lock", "size")

    def __init__(self) -> None:
        self.groups: dict[Hashable, _Group] = {}
        self.keys: dict[Hashable, int] = {}  # a group's key -> its id in `body`
        self.body: _Body | None = None
        self.size = 0  # rows kept
        self.lock = threading.Lock()  # one refusal of the shape at a time writes its rows

    def kept(self, key: Hashable, size: int) -> _Group:
        kept = self.groups.get(key)
        if kept is None:
            kept = self.groups[key] = _Group(size)
        return kept

    def body_of(self, size: int) -> _Body:
        if self.body is None or len(self.body.key) != size:
            self.body = _Body(size)
            self.size += size  # its joined text: about a row's JSON per host
        return self.body


class KeptRefusals:
    """The rejection rows of one worker's refusals, per request shape (see the module). `pin`
    and `versions` are called with the worker's index lock held."""

    def __init__(self, shapes: int = SHAPES, rows: int = ROWS) -> None:
        self._max_shapes, self._max_rows = shapes, rows
        self._lock = threading.Lock()
        self._shapes: OrderedDict[Hashable, _Shape] = OrderedDict()
        self._index: weakref.ref[FleetIndex] | None = None
        self._node_id: object = None  # the index's array: an index that rebuilt has a new one
        self._tick = 0
        self._epoch = 0
        self._at: IntArray = np.zeros(0, dtype=np.int64)
        self._rank: IntArray = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self._shapes)

    def pin(self, index: object, row: int) -> bool:
        """`index` is about to rewrite `row` (`Watchers`): a new version (False: not ours now)."""
        if self._index is None or index is not self._index() or row >= len(self._at):
            return False
        self._tick += 1
        self._at[row] = self._tick
        return True

    def versions(self, index: FleetIndex) -> RowVersions:
        """The rows' versions now, right after a refusal."""
        if self._index is None or self._index() is not index or self._node_id is not index.node_id:
            self._take(index)
        return RowVersions(index, self._epoch, self._at.copy(), self._rank)

    def _take(self, index: FleetIndex) -> None:
        """Watch `index` from now on, every row at a version never used before."""
        with self._lock:
            self._shapes.clear()
        self._index, self._node_id = weakref.ref(index), index.node_id
        self._tick += 1
        self._epoch = self._tick
        self._at = np.full(len(index), self._tick, dtype=np.int64)
        ids = index.host_ids
        self._rank = np.empty(len(ids), dtype=np.int64)
        self._rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
        index.watchers.add(self)

    def view(self, shape: Hashable, versions: RowVersions) -> KeptView:
        """What one refusal of `shape` keeps and takes (nothing if the index changed since)."""
        with self._lock:
            if versions.epoch != self._epoch:
                return KeptView(self, _Shape(), versions)
            kept = self._shapes.get(shape)
            if kept is None:
                kept = self._shapes[shape] = _Shape()
            self._shapes.move_to_end(shape)
            return KeptView(self, kept, versions)

    def grew(self) -> None:
        """Drop the least recently refused shapes beyond the bounds (the last one is kept)."""
        with self._lock:
            total = sum(s.size for s in self._shapes.values())
            while len(self._shapes) > 1 and (
                len(self._shapes) > self._max_shapes or total > self._max_rows
            ):
                _, dropped = self._shapes.popitem(last=False)
                total -= dropped.size


class KeptView:
    """One refusal's rows, taken from its shape's or built (`engine.rejections.Keeper`)."""

    def __init__(self, memo: KeptRefusals, shape: _Shape, versions: RowVersions) -> None:
        self._memo, self._shape, self._versions = memo, shape, versions
        self._handed: list[LiveGroup | Sequence[Row]] = []
        self._text: bytes | None = None  # the rows, when the shape's last list was spliced
        self._json: list[bytes] = []  # else every row's JSON, group after group
        self._ranks: list[IntArray] = []  # their hosts' places in the order of the ids
        self.reasons: set[str] = set()

    def live(self, group: LiveGroup) -> None:
        self._handed.append(group)

    def built(self, rows: Sequence[Row]) -> None:
        self._handed.append(rows)

    def handed(self) -> None:
        """The rows, from the shape's last list where each host is in one keyed group of this
        index, else group by group."""
        index = self._versions.index
        groups = [g for g in self._handed if isinstance(g, LiveGroup)]
        keyed = len(groups) == len(self._handed) and all(
            g.key is not None and g.index is index for g in groups
        )
        if keyed and self._splice(groups):
            return
        for item in self._handed:
            if isinstance(item, LiveGroup):
                self._group(item)
            else:
                self._built(item)

    def _splice(self, groups: list[LiveGroup]) -> bool:
        """The shape's last list with the rows of the hosts whose group or version moved (False:
        a host is in more than one group, nothing done)."""
        versions, shape = self._versions, self._shape
        size = len(versions.at)
        key = np.full(size, -1, dtype=np.int32)
        for group in groups:
            key[group.hosts] = shape.keys.setdefault(group.key, len(shape.keys))
        if sum(len(g.hosts) for g in groups) != np.count_nonzero(key >= 0):
            return False
        body = shape.body_of(size)
        at = versions.at
        stale = np.flatnonzero((key != body.key) | ((at != body.version) & (key >= 0)))
        if len(stale):
            self._respell(groups, body, key, stale)
        self.reasons.update(str(g.key[1]) for g in groups if g.key is not None)
        self._text = body.text
        return True

    def _respell(
        self, groups: list[LiveGroup], body: _Body, key: npt.NDArray[np.int32], stale: IntArray
    ) -> None:
        """The rows of `stale` in `body` (kept in their group's rows, or built), joined again."""
        at, rank, parts = self._versions.at, self._versions.rank, body.parts
        ids = key[stale]
        by_id = {self._shape.keys[g.key]: g for g in groups}
        for k in np.unique(ids[ids >= 0]).tolist():
            group, mine = by_id[k], stale[ids == k]
            kept = self._shape.kept(group.key, len(at))
            todo = mine[kept.version[mine] != at[mine]]
            if len(todo):
                self._build(group, kept, todo)
            texts = kept.json
            for p, r in zip(mine.tolist(), rank[mine].tolist(), strict=True):
                body.missing -= parts[r] is None
                parts[r] = texts[p]
        for r in rank[stale[ids < 0]].tolist():
            body.missing += parts[r] is not None
            parts[r] = None
        body.key[stale], body.version[stale] = ids, at[stale]
        joined = parts if not body.missing else [t for t in parts if t is not None]
        body.text = b",".join(joined)  # type: ignore[arg-type]

    def _group(self, group: LiveGroup) -> None:
        versions, hosts = self._versions, group.hosts
        if group.key is None or group.index is not versions.index:
            self._built(group.rows())
            return
        kept = self._shape.kept(group.key, len(versions.at))
        at = versions.at[hosts]
        stale = hosts[kept.version[hosts] != at]
        if len(stale):
            self._build(group, kept, stale)
        self.reasons.add(group.key[1])
        self._json.extend(map(kept.json.__getitem__, hosts.tolist()))
        self._ranks.append(versions.rank[hosts])

    def _build(self, group: LiveGroup, kept: _Group, stale: IntArray) -> None:
        """The rows of `stale` (as pinned, or built now), kept at their versions."""
        pinned = group.pinned
        todo = [i for i in stale.tolist() if i not in pinned]
        made = dict(zip(todo, group.rows_of(np.array(todo, np.int64)), strict=True))
        made.update((i, pinned[i]) for i in stale.tolist() if i in pinned)
        for i, row in made.items():
            kept.json[i] = rejection_json(row)
        self._shape.size += int(np.count_nonzero(kept.version[stale] < 0))
        kept.version[stale] = self._versions.at[stale]

    def _built(self, rows: Sequence[Row]) -> None:
        where = self._versions.index.positions
        self.reasons.update(str(r.reason if isinstance(r, Rejection) else r[1]) for r in rows)
        self._json.extend(rejection_json(r) for r in rows)
        self._ranks.append(np.array([self._rank_of(where, r) for r in rows], dtype=np.int64))

    def _rank_of(self, where: dict[str, int], row: Row) -> int:
        host = row.host if isinstance(row, Rejection) else row[0]
        return int(self._versions.rank[where[host]])

    def take(self, rejections: RejectionList) -> bytes | None:
        """The JSON of the rejections, by host, comma separated (None: read already, build
        them instead)."""
        with self._shape.lock:
            if not rejections.hand(self):
                return None
        self._memo.grew()
        if self._text is not None:
            return self._text
        if not self._ranks:
            return b""
        order = np.argsort(np.concatenate(self._ranks), kind="stable").tolist()
        texts = self._json
        return b",".join([texts[k] for k in order])


def rejection_json(row: Row) -> bytes:
    """One rejection as `Diagnosis.to_dict` words it, as JSON (`problems.ProblemResponse`)."""
    fields: RejectionRow = rejection_row(row) if isinstance(row, Rejection) else row
    return to_json(rejection_dict(fields), inf_nan_mode="null")


def shape_of(descriptor: object, options: dict[str, Any]) -> Hashable | None:
    """What a single VM's rejections read of its request: the descriptor but its name (each
    instance has its own), unless a per-host limit of its instances counts them by name; the
    policy and `explain`. None: not a single VM (its rejections are not kept)."""
    if not isinstance(descriptor, VmDescriptor):
        return None
    impact = descriptor.impact
    by_name = impact is not None and impact.max_instances_per_host is not None
    named = descriptor if by_name else descriptor.model_copy(update={"name": ""})
    body = named.model_dump_json(by_alias=True, exclude_none=True)
    return (body, options.get("policy"), bool(options.get("explain")))


@dataclass(frozen=True)
class NoFitDocument:
    """A 409 no_fit's diagnosis: the document without its rejections, and them as JSON."""

    document: dict[str, object]  # `Diagnosis.to_dict`, its "rejections" an empty list
    rejections: bytes  # the JSON of the items that fill the empty list, comma separated
    reasons: frozenset[str]


def refusal(diagnosis: Diagnosis, view: KeptView) -> NoFitDocument | None:
    """The diagnosis with the rows `view` kept; None where it cannot be (its rejections are not
    the engine's lazy ones, or were read already): the caller then takes `Diagnosis.to_dict`."""
    rejections = diagnosis.rejections
    if not isinstance(rejections, RejectionList):
        return None
    text = view.take(rejections)
    if text is None:
        return None
    head = Diagnosis(
        diagnosis.hosts_considered,
        diagnosis.hosts_fitting,
        (),
        diagnosis.summary,
        diagnosis.closest,
    )
    return NoFitDocument(head.to_dict(), text, frozenset(view.reasons))
