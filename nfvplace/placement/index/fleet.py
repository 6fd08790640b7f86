"""The fleet index: every host's free counts as numpy arrays (hosts x NUMA node slots), per kind.

Built once from the hosts' descriptors and kept up to date one host at a time (`update`), so that a
request is filtered over thousands of hosts with a handful of vectorised comparisons. Each resource
kind keeps its own columns (`table(kind)`) and fills them from a host's free resources; the
descriptors themselves are kept as given (never mutated), and the few candidate hosts are read in
full by the exact model (`free(i)`, the last few cached).
"""

from __future__ import annotations

import zlib
from collections.abc import Hashable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ... import errors
from ...errors import DescriptorError
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ..resources import implementing
from ..resources.base import HostFree, IntArray, Table, TableKey, Vocabulary
from ..resources.stages import Columns, ColumnsClaimed, ColumnsKept, Free, Seeds, Terms
from .columns import refill_row
from .derived import Compute, DerivedColumns
from .free import free_claimed, free_of
from .hosts import HostStore, Interner
from .pending import PENDING_VIEWS, ClaimedHosts, HostClaim, HostsView, PendingClaims, PendingViews
from .watchers import Watchers

VIEW_CACHE = 64  # hosts' free resources kept (the hosts a sequence of placements comes back to)
EVERY_VIEW = 1024
"""An index of at most this many hosts keeps every host's free resources from its build: a
scheduler's evaluation (Nova asks about 1,000 hosts at most) reads them again for every host that
passes the filter right after the build (a fifth of its time, read anew); about 5 MiB a
thousand hosts."""

_TERMS = implementing(Terms)
_SEEDS = implementing(Seeds)
_COLUMNS: tuple[Columns[Any], ...] = implementing(Columns)
_COLUMNS_BY_NAME = {kind.name: kind for kind in _COLUMNS}
_KEPT = frozenset(kind.name for kind in implementing(ColumnsKept))
_CLAIMING: tuple[ColumnsClaimed[Any], ...] = implementing(ColumnsClaimed)
_CLAIMED = {kind.name: kind for kind in _CLAIMING}
_PENDABLE = all(kind.name in _CLAIMED or isinstance(kind, Free) for kind in _COLUMNS)
"""Whether every kind's columns follow a claim kept pending (`FleetIndex.take`)."""


def _terms(host: ComputeHostDescriptor) -> Iterable[tuple[str, Hashable]]:
    for kind in _TERMS:
        yield from kind.vocabulary(host)


class FleetIndex:
    """An indexed set of hosts. `place(fleet, vm)` reads it; `update(host)` refreshes one host.

    `compact=True` keeps the descriptors compressed (see `HostStore`): about a quarter of the
    memory (40 MiB for 10,000 hosts instead of 147), for a few milliseconds to decompress a host
    that is not among the last `HOT` used. `share=False` keeps the descriptors as given, their
    equal parts not shared (`Interner`): for a caller that holds them anyway (the service's
    evaluations keep the hosts a scheduler sent), the pass costs 0.4 s a thousand hosts for no
    memory saved. `lazy=True` fills a kind's columns, and works out a host's free part of a kind,
    only when first read: an index built for one evaluation (the service's, for a scheduler's
    candidate hosts) reads the columns of the kinds the VM's filter reads, not every kind's.
    """

    def __init__(
        self,
        hosts: Iterable[ComputeHostDescriptor],
        *,
        compact: bool = False,
        share: bool = True,
        lazy: bool = False,
    ) -> None:
        self.lazy = lazy
        interner = Interner()
        given = [interner.host(h) for h in hosts] if share else list(hosts)
        self.host_ids: list[str] = [h.id for h in given]
        self.positions: dict[str, int] = {}  # host id -> its position (`i`) in the index
        for i, host in enumerate(given):
            if host.id in self.positions:
                raise DescriptorError(errors.INPUT_INVALID, f"host id {host.id!r} given twice")
            self.positions[host.id] = i
        self.store: HostStore | list[ComputeHostDescriptor] = given  # as held, claims pending aside
        self.pending: dict[int, PendingClaims] = {}  # row -> the claims kept pending on it
        self.watchers = Watchers()  # results whose rejections read rows lazily (`Watchers`)
        self.derived = DerivedColumns()  # what placements work out from the columns, kept
        self._build()
        if compact:
            self.store = HostStore(given, compact=True)

    def __len__(self) -> int:
        return len(self.store)

    @property
    def hosts(self) -> HostsView:
        """Every host's current descriptor, by row (a pending claim's host built when read)."""
        return HostsView(self)

    def host_at(self, i: int) -> ComputeHostDescriptor:
        """Row i's current descriptor: the one held, with the claims pending on it claimed."""
        pending = self.pending.get(i)
        return self.store[i] if pending is None else pending.host(self.store[i])

    def held(self, i: int) -> tuple[ComputeHostDescriptor, tuple[VmConfiguration, ...]]:
        """Row i's descriptor as held and the configurations pending on it (nothing built)."""
        pending = self.pending.get(i)
        if pending is None:
            return self.store[i], ()
        return (self.store[i], pending.configs) if pending.built is None else (pending.built, ())

    def version(self, i: int) -> ComputeHostDescriptor | PendingClaims:
        """What row i is now: the claims pending on it, or the descriptor held (by identity)."""
        return self.pending.get(i) or self.store[i]

    def _set(self, i: int, host: ComputeHostDescriptor) -> None:
        self.pending.pop(i, None)
        self.store[i] = host

    @property
    def index(self) -> dict[str, int]:
        """The old name of `positions` (kept for callers outside the placement package)."""
        return self.positions

    @property
    def ids(self) -> list[str]:
        return list(self.host_ids)

    def host(self, host_id: str) -> ComputeHostDescriptor:
        return self.host_at(self.positions[host_id])

    def table[T: Table](self, kind: TableKey[T]) -> T:
        """The columns `kind` keeps (a lazy index fills them now if it has not yet)."""
        found = self.tables.get(kind.name)
        if found is None:
            found = self._table(_COLUMNS_BY_NAME[kind.name])
        return cast(T, found)

    def _table(self, kind: Columns[Any]) -> Table:
        """A lazy index's columns of `kind`, filled from every host. Two threads reading a shared
        index may both fill them: each gets the same columns, and one is kept."""
        table = kind.new_table(len(self.store), self.max_nodes, self.vocab)
        for i in range(len(self.store)):
            # a kind with a free part reads of the host what no claim writes: the one held
            host = self.store[i] if isinstance(kind, Free) else self.host_at(i)
            kind.fill(table, i, host, self.free(i), self.vocab)
        return self.tables.setdefault(kind.name, table)

    def derived_column(
        self, name: str, sources: Sequence[npt.NDArray[Any]], compute: Compute
    ) -> npt.NDArray[Any]:
        """A column worked out by `compute` from `sources` (columns of this index), kept and worked
        out again for the rows rewritten since (`DerivedColumns`); read only."""
        return self.derived.column(name, sources, compute)

    def free(self, i: int) -> HostFree:
        """The free resources of host i, classified per kind (the last few are cached)."""
        version = self.version(i)
        cached = self._free.get(i)
        if cached is not None and cached[0] is version:
            return cached[1]
        free = self.kept.take(i, version)  # a row with claims pending: its host is not built
        if free is None:
            free = free_of(self.host_at(i), lazy=self.lazy)
        return self._remember(i, version, free)

    def _before(self, i: int) -> tuple[ComputeHostDescriptor, HostFree] | None:
        """Row i's cached free resources and the descriptor they are of (None: not cached, or
        of pending claims not built)."""
        cached = self._free.get(i)
        if cached is None:
            return None
        version, free = cached
        if isinstance(version, PendingClaims):
            return None if version.built is None else (version.built, free)
        return version, free

    def _remember(
        self, i: int, version: ComputeHostDescriptor | PendingClaims, free: HostFree
    ) -> HostFree:
        self._free.pop(i, None)
        self.kept.take(i, None)  # what it kept of the row is of an earlier version
        self._free[i] = (version, free)
        # a compact index keeps no more views than hot hosts: a view holds its host's objects
        if isinstance(self.store, HostStore):
            kept = aside = self.store.hot_size
        else:
            kept = len(self.store) if len(self.store) <= EVERY_VIEW else VIEW_CACHE
            aside = PENDING_VIEWS
        while len(self._free) > kept:
            j = next(iter(self._free))
            self.kept.keep(j, *self._free.pop(j), aside)  # a view of claims pending kept aside
        return free

    # --- building ---------------------------------------------------------------------------

    def _vocab(self) -> Vocabulary:
        terms: dict[str, set[Hashable]] = {}
        for kind in _SEEDS:
            for namespace, seeds in kind.seed_terms.items():
                terms.setdefault(namespace, set()).update(seeds)
        for host in self.store:  # no claim writes a term
            for namespace, term in _terms(host):
                terms.setdefault(namespace, set()).add(term)
        return Vocabulary(terms)

    def _build(self) -> None:
        for i, pending in list(self.pending.items()):  # every row read again: built now
            self._set(i, pending.host(self.store[i]))
        self.vocab = self._vocab()
        n = len(self.store)
        m = max((len(h.numa_nodes) for h in self.store), default=1)
        self.max_nodes = m
        self.node_id: IntArray = np.full((n, m), -1, dtype=np.int64)
        self.tiebreak: npt.NDArray[np.uint64] = np.zeros(n, dtype=np.uint64)
        self.tables: dict[str, Table] = (
            {} if self.lazy else {k.name: k.new_table(n, m, self.vocab) for k in _COLUMNS}
        )
        # row -> its version (`version`) and its free resources
        self._free: dict[int, tuple[ComputeHostDescriptor | PendingClaims, HostFree]] = {}
        self.kept = PendingViews()  # views of rows with claims pending, let go
        for i in range(n):
            self._fill(i, self.host_at(i))

    def _fits_vocab(self, host: ComputeHostDescriptor) -> bool:
        if len(host.numa_nodes) > self.max_nodes:
            return False
        return all(self.vocab.covers(namespace, term) for namespace, term in _terms(host))

    def _fill(self, i: int, host: ComputeHostDescriptor) -> None:
        # the host's previous version, if its free resources are still cached: a claimed host
        # keeps the parts of the nodes the claim did not change
        free = self._remember(i, host, free_of(host, self._before(i), lazy=self.lazy))
        self.node_id[i, :] = -1
        self.node_id[i, : len(free.node_ids)] = free.node_ids
        for kind in _COLUMNS:
            table = self.tables.get(kind.name)
            if table is not None:  # a lazy index fills a kind's columns when first read
                kind.fill(table, i, host, free, self.vocab)
        self.tiebreak[i] = np.uint64(zlib.crc32(host.id.encode()))

    def _refill(
        self, i: int, host: ComputeHostDescriptor, config: VmConfiguration | None = None
    ) -> None:
        """Host i's row after a claim or a release: the same node ids and host id, so only the
        columns of the kinds whose free part changed (a kind that keeps none reads the host, unless
        it tells that what it reads is the same: `ColumnsKept`). With `config`, the claim that
        made `host` of the version the index held, the kinds work their parts out from it."""
        cached = self._before(i)
        if cached is None or cached[1].node_ids != tuple(node.id for node in host.numa_nodes):
            self._fill(i, host)
            return
        old = cached[0]
        free = free_of(host, cached) if config is None else free_claimed(host, cached, config)
        self._remember(i, host, free)

        def stands(kind: Columns[Any], table: Table) -> bool:
            if kind.name in _KEPT and cast(ColumnsKept, kind).columns_kept(host, old):
                return True
            delta = _CLAIMED.get(kind.name)
            return bool(config and delta and delta.columns_claimed(table, i, host, old, config))

        refill_row(self.tables, i, host, free, cached[1], self.vocab, stands, lambda: host)

    # --- keeping it current -------------------------------------------------------------------

    def _changing(self, i: int) -> None:
        """Row i is about to be rewritten: what reads it lazily keeps it as it was, what is
        worked out from it is worked out again."""
        self.watchers.changing(self, i)
        self.derived.changing(i)

    def update(self, host: ComputeHostDescriptor) -> None:
        """Replace (or add) one host's descriptor, e.g. with `PlacementResult.hosts[...]`."""
        i = self.positions.get(host.id)
        if i is None:
            self.positions[host.id] = len(self.store)
            self.store.append(host)
            self.host_ids.append(host.id)
            self._build()
            return
        self._changing(i)
        self._set(i, host)
        if self._fits_vocab(host):
            self._fill(i, host)
        else:
            self._build()

    def update_many(self, hosts: Iterable[ComputeHostDescriptor]) -> None:
        for host in hosts:
            self.update(host)

    def claimed(
        self,
        hosts: Iterable[ComputeHostDescriptor],
        configurations: Iterable[VmConfiguration] = (),
    ) -> None:
        """Take the new versions of indexed hosts that a claim or a release made (`claims`): they
        keep every term of the vocabulary (processor, page sizes, port speeds, node ids), so only
        the columns a claim can change are refilled (`Columns`). `configurations`: what was
        claimed on the versions the index holds to make the ones given, nothing else: the kinds
        work the free resources out from them (`FreeClaimed`); a host with several, or none, is
        read."""
        made: dict[str, list[VmConfiguration]] = {}
        for config in configurations:
            made.setdefault(config.host, []).append(config)
        for host in hosts:
            i = self.positions[host.id]
            claimed = made.get(host.id, [])
            cached = self._before(i)
            # the delta holds only for the version the claim was made on
            known = len(claimed) == 1 and cached is not None and cached[0] is self.host_at(i)
            self._changing(i)
            self._set(i, host)
            self._refill(i, host, claimed[0] if known else None)

    def take(
        self,
        hosts: Mapping[str, ComputeHostDescriptor],
        configurations: Iterable[VmConfiguration] = (),
    ) -> None:
        """Take what a placement claimed (`PlacementResult.hosts`; `configurations` as for
        `claimed`): a claim it kept pending (`ClaimedHosts`) on the row as it still is stays
        pending here (nothing built), every other host is read and taken (`claimed`)."""
        alone = tuple(configurations)
        for host_id in hosts:
            made = hosts.claim(host_id) if isinstance(hosts, ClaimedHosts) else None
            i = self.positions[host_id]
            cached = self._free.get(i)
            if (
                made is not None
                and _PENDABLE
                and len(alone) == 1
                and alone[0] is made.config
                and cached is not None
                and cached[0] is made.on
                and made.on is self.version(i)
            ):
                self._pend(i, made, cached[1])
            else:
                self.claimed((hosts[host_id],), alone)

    def _pend(self, i: int, made: HostClaim, before: HostFree) -> None:
        """Row i once `made` is claimed on it (as it is, its free resources `before`), kept
        pending: the kinds' parts are `made.free`, the columns of a kind whose part changed
        filled again from the descriptor held (what `fill` reads no claim writes) for the nodes
        whose part changed (`ColumnsChanged`), the others' worked out from the configuration
        (`ColumnsClaimed`): `index/columns.py`."""
        self._changing(i)
        pending = self.pending.get(i)
        if pending is not None and pending.built is not None:
            self.store[i], pending = pending.built, None  # a chain again from the built host
        now = PendingClaims((*(pending.configs if pending is not None else ()), made.config))
        self.pending[i] = now
        free = self._remember(i, now, made.free)
        base = self.store[i]

        def stands(kind: Columns[Any], table: Table) -> bool:
            delta = _CLAIMED.get(kind.name)
            return delta is not None and delta.columns_claimed(table, i, None, base, made.config)

        # a kind that cannot tell from the configuration reads the host: it cannot happen, the
        # claim was kept pending because every kind could (`_PENDABLE`)
        refill_row(self.tables, i, base, free, before, self.vocab, stands, partial(self.host_at, i))

    def adopt(self, made: HostClaim, host: ComputeHostDescriptor) -> None:
        """`host`, what the claim `made` built, held for its row if the row is still that claim's
        and its view is cached (kept as the host's): the chain folded, later claims built on it."""
        i = self.positions.get(host.id, -1)
        pending, cached = self.pending.get(i), self._free.get(i)
        if pending and cached and cached[0] is pending and pending.configs[-1] is made.config:
            self._set(i, host)  # the same host: no column, view or derived value changes
            self._free[i] = (host, cached[1])

    def copy(self) -> FleetIndex:
        """An independent copy (columns copied, descriptors shared: they are immutable)."""
        clone = FleetIndex.__new__(FleetIndex)
        clone.__dict__.update(self.__dict__)
        clone.host_ids = list(self.host_ids)
        clone.positions = dict(self.positions)
        clone.store = self.store.copy()
        clone.pending = dict(self.pending)  # each immutable but for its host, built once
        clone.node_id = self.node_id.copy()
        clone.tiebreak = self.tiebreak.copy()
        clone.tables = {name: table.copy() for name, table in self.tables.items()}
        clone._free = dict(self._free)
        clone.kept = self.kept.copy()
        clone.watchers = Watchers()  # the results handed out read this index, not the copy
        clone.derived = DerivedColumns()
        return clone
