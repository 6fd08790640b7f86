"""The worker's fleet index: kept between requests, refreshed only for the hosts that changed.

Each worker holds one `FleetIndex` (the engine's index) of every host's availability, the generation
each host has in the database, and the watermark of the store's change feed it read last. A
placement refreshes the index from the feed (one small query), decides on it, and claims in the index
at once what it chose, so the next request of this worker decides around it; the store then commits
it with compare-and-swap on the generations. Requests of one worker that chose the same host commit
in the order they decided (the later one waits for the earlier one's outcome); a commit that loses
the race marks its hosts to be read again, and the caller decides once more.

Hosts that another worker or replica changed are *stale* here until they are read again. A host that
came or went is read at once. A host whose availability changed is read lazily: a single VM is first
placed on the other hosts (with the stale ones and the ones this worker just lost races on,
`AVOID_S`, excluded), and only if none fits are the stale hosts read and the decision made again on
the whole fleet. A stale host is read at the latest `STALE_S` after it changed. Under load every
worker packs onto a host of its own (its lane) instead of reading, after every placement, the host
another worker is filling, and racing it there. Likewise a single VM goes first to a host with no
commit of this worker in flight: commits on one host land one at a time (each is a compare-and-swap
on the generation the one before made), so a placement decided on that host would wait for the
commit before it, where on another host it commits alongside. Dry runs, VNFs and batches read the
stale hosts first: they decide on the whole, current fleet.

The lock below is held only while the index is read or changed (a refresh, one decision of about a
millisecond); commits run outside it, concurrently. A decision made with `reads=False` (on the
event loop, see `Placements.place_inline`) reads no host and waits for that lock at most
`LOCK_WAIT_S`: else it raises `WouldBlockError`, and the caller decides on its placing thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import TypeVar

from ..models.chd import ComputeHostDescriptor
from ..placement import FleetIndex
from ..placement.result import PlacementResult
from ..store import Snapshot, StaleSnapshot, Store

T = TypeVar("T")
COMPACT_FROM = 2000  # hosts: from here on the index keeps descriptors compressed
WAIT_S = 60.0
AVOID_S = 0.5  # a worker that lost a race on a host places elsewhere first for this long
STALE_S = 1.0  # a host another worker changed is read again at the latest this long after
LOCK_WAIT_S = 0.002  # the longest a decision without reads waits for the index (a write-back's)


class WouldBlockError(Exception):
    """Deciding now would read hosts from the database or wait for another thread's decision."""


@dataclass(eq=False)
class _Pending:
    """A commit this worker decided and has not finished yet."""

    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False


class PhaseClock:
    """CPU time of this thread spent in each phase of a placement (`spent(phase)` charges the
    time since the last mark to `phase`), handed to `charge` (the service's metrics)."""

    def __init__(self, charge: Callable[[str, float], None] | None = None) -> None:
        self.charge = charge
        self._marks = threading.local()

    def start(self) -> None:
        self._marks.at = time.thread_time()

    def spent(self, phase: str) -> None:
        now = time.thread_time()
        if self.charge is not None:
            self.charge(phase, now - self._marks.at)
        self._marks.at = now


@dataclass(frozen=True)
class Decision:
    """A placement decided on the index: what to commit, at which generations, after what."""

    result: PlacementResult
    base: Snapshot  # generations the commit expects (hosts: empty, the index claimed already)
    after: tuple[_Pending, ...] = ()
    mine: Mapping[str, _Pending] = field(default_factory=dict)


class LiveIndex:
    def __init__(
        self,
        store: Store,
        clock: PhaseClock | None = None,
        on_read: Callable[[], object] | None = None,
        on_built: Callable[[], object] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock or PhaseClock()
        self.on_read = on_read  # called for each host read from the database (a metric)
        self.on_built = on_built  # called when a new index was built (see `serve`'s workers)
        self._lock = threading.Lock()
        self._index: FleetIndex | None = None
        self._generation: dict[str, int] = {}  # what the database has (or will, once pending land)
        self._pending: dict[str, _Pending] = {}
        self._dirty: set[str] = set()  # hosts of this worker's failed commits: read at once
        self._stale: dict[str, float] = {}  # host -> since when (monotonic) another changed it
        self._seq = -1
        self._avoid: dict[str, float] = {}  # host -> until when (monotonic) this worker avoids it
        # host -> (generation, availability) its latest commit by this worker made, not yet
        # written back (see `write_back`)
        self._landed: dict[str, tuple[int, ComputeHostDescriptor]] = {}
        self.hosts_read = 0  # hosts (re)read from the database, for metrics and benchmarks

    def __len__(self) -> int:
        with self._lock:
            return 0 if self._index is None else len(self._index)

    def refresh(self) -> None:
        with self._lock:
            self._read(*self._feed())

    def _feed(self, reads: bool = True) -> tuple[set[str], int]:
        """Apply the change feed: the hosts to read now, and the watermark to keep once they are
        read. Without `reads`, WouldBlockError (and nothing changed) where a host is to be read."""
        changes = self.store.changes_since(self._seq)
        now = time.monotonic()
        # hosts with commits of this worker in flight are read again only if one of those fails
        read = {h for h in self._dirty if h not in self._pending}
        known = {} if self._index is None else self._index.index
        stale = dict(self._stale)
        for host_id, generation in changes.hosts.items():
            if host_id in self._pending or self._generation.get(host_id) == generation:
                continue
            if generation is None or host_id not in known:
                read.add(host_id)  # a host came or went: the index changes shape now
            else:
                stale.setdefault(host_id, now)
        read.update(h for h, since in stale.items() if now - since >= STALE_S)
        if not reads and (read or self._index is None):
            raise WouldBlockError(f"{len(read)} host(s) to read")
        self._dirty -= read
        self._stale = stale
        return read, changes.seq

    def _read(self, ids: set[str], seq: int) -> None:
        """Read `ids` (all of them into a new index, the first time), then keep the watermark
        `seq`: a first read that failed starts again from the beginning."""
        if self._index is None:
            self._first_read(ids)
        else:
            self._read_again(self._index, ids)
        self._seq = seq

    def _fleet(self) -> FleetIndex:
        assert self._index is not None, "refreshed first"
        return self._index

    def _read_stale(self) -> None:
        if self._stale:
            self._read_again(self._fleet(), set(self._stale))

    def _first_read(self, ids: set[str]) -> None:
        """Every host, streamed from the store into a new index: each descriptor is interned by
        the index as it arrives, so the worker never holds every parsed host at once (10,000 hosts
        parsed together take about a gibibyte, which the allocator then keeps). If the read
        fails, there is still no index: the next request starts again."""
        try:
            self._index = FleetIndex(self._stream(ids), compact=len(ids) >= COMPACT_FROM)
        except BaseException:
            self._generation.clear()
            raise
        self._built()

    def _stream(self, ids: set[str]) -> Iterator[ComputeHostDescriptor]:
        """The hosts of `ids` that still exist, read one at a time (their generations noted)."""
        for host_id, generation, chd in self.store.iter_availability(ids):
            self._generation[host_id] = generation
            self.hosts_read += 1
            if self.on_read is not None:
                self.on_read()
            yield chd

    def _read_again(self, index: FleetIndex, ids: set[str]) -> None:
        """Read `ids` into the index one host at a time, as the first read does: they may be
        every host that agents just registered, never to be parsed all at once.

        If the read fails part way (the database went away), every host of `ids` is left without
        a generation and marked to be read in full before the next decision: the index may hold
        some of them as read and others as they were, and none is trusted until read again."""
        if not ids:
            return
        for host_id in ids:
            self._stale.pop(host_id, None)
            self._generation.pop(host_id, None)  # noted again by `_stream` unless gone
        try:
            self._replace(index, ids)
        except BaseException:
            for host_id in ids:
                self._generation.pop(host_id, None)
            self._dirty |= ids
            raise

    def _replace(self, index: FleetIndex, ids: set[str]) -> None:
        size = len(index.index.keys() | ids)
        if ids <= index.index.keys():
            index.update_many(self._stream(ids))
            gone = {h for h in ids if h not in self._generation}
            if not gone:
                return
            hosts: Iterator[ComputeHostDescriptor] = (
                index.host(h) for h in index.ids if h not in gone
            )
        else:  # hosts came (and maybe went): a new index
            kept = (index.host(h) for h in index.ids if h not in ids)
            hosts = chain(kept, self._stream(ids))
        self._index = FleetIndex(hosts, compact=size >= COMPACT_FROM)
        self._built()

    def _built(self) -> None:
        if self.on_built is not None:
            self.on_built()

    def _elsewhere_first(self) -> frozenset[str]:
        """The hosts a single VM goes to only if no other fits: the stale ones, the ones this
        worker lost a race on within the last `AVOID_S`, and the ones a commit of this worker is
        in flight on (see the module's docstring)."""
        now = time.monotonic()
        self._avoid = {h: t for h, t in self._avoid.items() if t > now}
        return frozenset(chain(self._stale, self._avoid, self._pending))

    def decide(
        self,
        place: Callable[[FleetIndex, frozenset[str]], PlacementResult],
        *,
        claim: bool = True,
        narrow: bool = False,
        reads: bool = True,
    ) -> Decision:
        """Refresh, run `place(index, excluded hosts)` and (with `claim`) hold its hosts in the
        index. With `narrow` (a single VM to claim), stale and avoided hosts and the hosts of
        commits in flight are excluded first.
        Without `reads`, WouldBlockError where the lock is held or a host would be read."""
        clock = self.clock
        if not self._lock.acquire(timeout=-1 if reads else LOCK_WAIT_S):
            raise WouldBlockError("another thread is deciding")
        try:
            clock.start()
            ids, seq = self._feed(reads)
            clock.spent("refresh")
            self._read(ids, seq)
            clock.spent("read" if ids else "refresh")
            skip = self._elsewhere_first() if narrow else frozenset()
            result = place(self._fleet(), skip) if skip else None
            if result is None or not result.ok:
                if self._stale and not reads:
                    raise WouldBlockError("the stale hosts are to be read")
                clock.spent("engine")
                self._read_stale()
                clock.spent("read")
                result = place(self._fleet(), frozenset())
            clock.spent("engine")
            if not claim or not result.ok:
                return Decision(result, Snapshot({}, {}))
            if not reads and not self._pending.keys().isdisjoint(result.hosts):
                raise WouldBlockError("an earlier commit on the host is in flight")
            return self._claimed(result)
        finally:
            self._lock.release()

    def _claimed(self, result: PlacementResult) -> Decision:
        """Hold the hosts of `result` in the index (the lock held): what to commit, after what."""
        expected: dict[str, int] = {}
        after: list[_Pending] = []
        mine: dict[str, _Pending] = {}
        unread = [h for h in result.hosts if h not in self._generation]
        if unread:  # cannot happen (unread hosts are read before deciding): never trust one
            self._dirty.update(unread)
            raise StaleSnapshot(f"host {unread[0]} was not read since a failed read")
        for host_id, chd in result.hosts.items():
            expected[host_id] = self._generation[host_id]
            if host_id in self._pending:
                after.append(self._pending[host_id])
            mine[host_id] = self._pending[host_id] = _Pending()
            self._generation[host_id] += 1
            self._fleet().update(chd)
        self.clock.spent("index")
        return Decision(result, Snapshot({}, expected), tuple(after), mine)

    def settle(self, decision: Decision, commit: Callable[[], T]) -> T:
        """Commit `decision` once the earlier commits it builds on have landed; StaleSnapshot if
        one of them did not (or the commit itself loses the race)."""
        ok = False
        try:
            for pending in decision.after:
                if not pending.done.wait(WAIT_S) or not pending.ok:
                    raise StaleSnapshot("an earlier placement on the same host did not commit")
            value = commit()
            ok = True
            return value
        finally:
            self._finish(decision, ok)

    def write_back(self) -> int:
        """Store the availability of the hosts this worker committed on, each as exact at the
        generation its latest commit here made (commits write only claim rows); how many were
        written. That document is the host at that generation whatever happened since: the commit
        was a compare-and-swap on the generation this worker's index had. The store writes it only
        where the host's document is older."""
        with self._lock:
            landed, self._landed = self._landed, {}
        return self.store.write_back((h, g, chd) for h, (g, chd) in sorted(landed.items()))

    def _finish(self, decision: Decision, ok: bool) -> None:
        with self._lock:
            for host_id in decision.mine if ok else ():
                made = decision.base.generations[host_id] + 1
                if self._landed.get(host_id, (0, None))[0] < made:
                    self._landed[host_id] = (made, decision.result.hosts[host_id])
            for host_id, pending in decision.mine.items():
                pending.ok = ok
                pending.done.set()
                if self._pending.get(host_id) is pending:
                    del self._pending[host_id]
                if not ok:
                    self._dirty.add(host_id)
                    self._avoid[host_id] = time.monotonic() + AVOID_S
