"""The worker's fleet index: kept between requests, refreshed only for the hosts that changed.

Each worker holds one `FleetIndex` (the engine's index) of every host's availability, the generation
each host has in the database, and the watermark of the store's change feed it read last. A
placement goes through it in three calls, in this order: `decide` refreshes the index from the feed
(one small query), runs the engine on it and holds what it chose in the index at once, so the next
request of this worker decides around it; the caller then commits the `Decision` (compare-and-swap
on the generations it names, once the earlier commits on its hosts have landed:
`Decision.wait_for_earlier`); `finish` says how the commit ended. A commit that loses the race
marks its hosts to be read again, and the caller decides once more.

Each host the index holds is in one `HostState` (`LiveIndex.state`; a host absent there is
fresh), changed only by the transitions of `host_states.HostStates`:

- fresh: the index has what the database has (or will have, once this worker's commits land);
- stale: another worker, a replica or an agent changed it, noticed in the change feed. A host that
  came or went is read at once; a stale one is read lazily: a single VM is first placed on the
  other hosts, and only if none fits are the stale hosts read and the decision made again on the
  whole fleet. A stale host is read at the latest `STALE_S` after it changed. Under load every
  worker packs onto a host of its own (its lane) instead of reading, after every placement, the
  host another worker is filling, and racing it there;
- pending: a commit of this worker on it is in flight. A single VM goes first to another host:
  commits on one host land one at a time (each is a compare-and-swap on the generation the one
  before made), so a placement decided there would wait for the commit before it, where on
  another host it commits alongside;
- lost: this worker's commit on it lost its race (or a read of it failed): read before the next
  decision, then
- avoided: single VMs go elsewhere first until `AVOID_S` after the race was lost.

Dry runs, VNFs and batches read the stale hosts first: they decide on the whole, current fleet.
What this worker committed and has not yet written back (`write_back`) is kept apart from the
state: a host may be owed to the store and stale or pending again at once.

The lock below is held only while the index is read or changed (a refresh, one decision of about a
millisecond); commits run outside it, concurrently. A decision made with `reads=False` (on the
event loop, see `Placements.place_inline`) reads no host and waits for that lock at most
`LOCK_WAIT_S`: else it raises `WouldBlockError`, and the caller decides on its placing thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from ..claims import claim_all
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.loading import gc_paused
from ..models.vmd import VmDescriptor
from ..models.vnf import VnfTemplate
from ..placement import BatchItem, FleetIndex
from ..placement.index import claimed_alone
from ..placement.index.pending import ClaimedHosts
from ..placement.result import Diagnosis, PlacementResult
from ..store import Snapshot, StaleSnapshot, Store
from .host_states import HostState, HostStates, Pending
from .metrics import PhaseClock
from .refusals import KeptRefusals, RowVersions

COMPACT_FROM = 2000  # hosts: from here on the index keeps descriptors compressed
WAIT_S = 60.0
STALE_S = 1.0  # a host another worker changed is read again at the latest this long after
LOCK_WAIT_S = 0.002  # the longest a decision without reads waits for the index (a write-back's)
# the longest a placement on the event loop waits for SQLite's write lock (a commit or a
# write-back of another thread or process holds it for about a millisecond); its change feed is
# read on the store's lane for it too (`store/lane.py`)
INLINE_LOCK_WAIT_S = 0.01

Placer = Callable[..., PlacementResult]  # `nfvplace.placement.place`, or a stand-in for tests


class WouldBlockError(Exception):
    """Deciding now would read hosts from the database or wait for another thread's decision."""


@dataclass(frozen=True)
class Decision:
    """A placement decided on the index: what to commit, at which generations, after what."""

    result: PlacementResult
    base: Snapshot  # generations the commit expects (hosts: empty, the index claimed already)
    after: tuple[Pending, ...] = ()  # earlier commits of this worker on the same hosts
    mine: Mapping[str, Pending] = field(default_factory=dict)
    versions: RowVersions | None = None  # a refusal: the index's rows as it was made

    def wait_for_earlier(self) -> None:
        """Wait until the earlier commits this one builds on have landed; StaleSnapshot if one of
        them did not."""
        for pending in self.after:
            if not pending.done.wait(WAIT_S) or not pending.ok:
                raise StaleSnapshot("an earlier placement on the same host did not commit")


Target = VmDescriptor | VnfTemplate | tuple[BatchItem, ...]


@dataclass(frozen=True)
class Ask:
    """What the engine is asked: `target` with the engine's options (policy, seed, explain,
    instance)."""

    target: Target
    options: Mapping[str, Any]


def target_name(target: Target) -> str:
    if isinstance(target, tuple):
        return "batch of " + ", ".join(item.vm.name for item in target)
    return target.name


def empty_fleet(target: Target) -> PlacementResult:
    summary = (
        f"0/0 hosts fit {target_name(target)}: the inventory has no hosts "
        "(host agents register them with PUT /v1/hosts/{id})"
    )
    return PlacementResult(diagnosis=Diagnosis(0, 0, (), summary))


class LiveIndex:
    def __init__(
        self,
        store: Store,
        placer: Placer,
        clock: PhaseClock | None = None,
        on_read: Callable[[], object] | None = None,
        on_built: Callable[[], object] | None = None,
    ) -> None:
        self.store = store
        self.placer = placer  # the engine's door
        self.clock = clock or PhaseClock()
        self.on_read = on_read  # called for each host read from the database (a metric)
        self.on_built = on_built  # called when a new index was built (see `serve`'s workers)
        self._lock = threading.Lock()
        self._index: FleetIndex | None = None
        self._generation: dict[str, int] = {}  # what the database has (or will, once pending land)
        self._marks = HostStates()  # every host that is not fresh
        self._seq = -1
        # host -> (generation, the hosts of the result) its latest commit by this worker made,
        # not yet written back (`write_back`, which reads them: a claim kept pending is built
        # once, for the latest of a host's placements)
        self._owed: dict[str, tuple[int, Mapping[str, ComputeHostDescriptor]]] = {}
        self.refusals = KeptRefusals()  # the rejections of this index's refusals, kept
        self.hosts_read = 0  # hosts (re)read from the database, for metrics and benchmarks

    def __len__(self) -> int:
        with self._lock:
            return 0 if self._index is None else len(self._index)

    def state(self, host_id: str) -> HostState:
        """What this worker's index knows of `host_id` against the database."""
        return self._marks.of(host_id)

    def refresh(self) -> None:
        with self._lock:
            self._read(*self._feed())

    def _feed(self, reads: bool = True) -> tuple[set[str], int]:
        """Apply the change feed: the hosts to read now, and the watermark to keep once they are
        read. Without `reads`, WouldBlockError (and nothing changed) where a host is to be read."""
        changes = self.store.changes_since(self._seq, None if reads else INLINE_LOCK_WAIT_S)
        now = time.monotonic()
        known = {} if self._index is None else self._index.index
        marks = self._marks
        read = marks.to_read(now - STALE_S)
        stale: list[str] = []
        for host_id, generation in changes.hosts.items():
            state = marks.of(host_id)
            if state is HostState.PENDING or self._generation.get(host_id) == generation:
                continue  # read again only if this worker's commit in flight fails
            if generation is None or host_id not in known:
                read.add(host_id)  # a host came or went: the index changes shape now
            elif state in (HostState.FRESH, HostState.AVOIDED):
                stale.append(host_id)
        if STALE_S <= 0:  # nothing may stay stale: read at once
            read.update(stale)
        if not reads and (read or self._index is None):
            raise WouldBlockError(f"{len(read)} host(s) to read")
        for host_id in stale:
            marks.changed_elsewhere(host_id, now)
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
        self._read_again(self._fleet(), self._marks.stale())

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
        a generation and lost: the index may hold some of them as read and others as they were,
        and none is trusted until read again."""
        if not ids:
            return
        held = {
            h: self._generation[h]
            for h in ids
            if self._marks.of(h) is HostState.STALE and h in self._generation and h in index.index
        }
        for host_id in ids:
            self._generation.pop(host_id, None)  # noted again by `_stream` unless gone
        try:
            rest = ids - self._claim_since(index, held)
            if rest:
                self._replace(index, rest)
        except BaseException:
            for host_id in ids:
                self._generation.pop(host_id, None)
                self._marks.unreadable(host_id)
            raise
        now = time.monotonic()
        for host_id in ids:
            self._marks.read(host_id, now)

    def _claim_since(self, index: FleetIndex, held: dict[str, int]) -> set[str]:
        """The stale hosts of `held` (host -> the generation the index holds it at, exactly) that
        only commits moved on since, brought up to date in the index by claiming what those
        commits claimed (`Store.committed_since`); the hosts done. Another worker's placements on
        a host cost its reader their claims, not the host's document parsed and every commit since
        that document replayed (on the mix with two workers, most of a host's read)."""
        if not held:
            return set()
        moved = self.store.committed_since(held)
        claimed = []
        for host_id, (generation, configs) in moved.items():
            if configs:
                claimed.append(claim_all(index.host(host_id), configs)[0])
            self._generation[host_id] = generation
            self.hosts_read += 1
            if self.on_read is not None:
                self.on_read()
        index.claimed(claimed)  # versions a claim made: only what a claim changes is refilled
        return set(moved)

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

    def _run(self, ask: Ask, exclude: frozenset[str]) -> PlacementResult:
        """The engine on the index, the hosts of `exclude` left out."""
        fleet = self._fleet()
        if len(fleet) == 0:
            return empty_fleet(ask.target)
        options = {**ask.options, "exclude": exclude} if exclude else ask.options
        return self.placer(fleet, ask.target, **options)

    def decide(
        self, ask: Ask, *, claim: bool = True, narrow: bool = False, reads: bool = True
    ) -> Decision:
        """Refresh, run the engine on the index and (with `claim`) hold its hosts in the index.
        With `narrow` (a single VM to claim), the hosts that are not fresh are left out first.
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
            skip = self._marks.elsewhere_first(time.monotonic()) if narrow else frozenset()
            result = self._run(ask, skip) if skip else None
            if result is None or not result.ok:
                if not reads and self._marks.stale():
                    raise WouldBlockError("the stale hosts are to be read")
                clock.spent("engine")
                self._read_stale()
                clock.spent("read")
                result = self._run(ask, frozenset())
            clock.spent("engine")
            if not result.ok:
                versions = self.refusals.versions(self._fleet())
                return Decision(result, Snapshot({}, {}), versions=versions)
            if not claim:
                return Decision(result, Snapshot({}, {}))
            if not reads and any(self.state(h) is HostState.PENDING for h in result.hosts):
                raise WouldBlockError("an earlier commit on the host is in flight")
            return self._claimed(
                result, claimed_alone(ask.target, ask.options, result.configurations)
            )
        finally:
            self._lock.release()
            clock.charge_spent()

    def _claimed(
        self, result: PlacementResult, configurations: Sequence[VmConfiguration]
    ) -> Decision:
        """Hold the hosts of `result` in the index (the lock held): what to commit, after what.
        `configurations`: what `FleetIndex.take` may work the hosts' free resources out from
        (`claimed_alone`)."""
        expected: dict[str, int] = {}
        after: list[Pending] = []
        mine: dict[str, Pending] = {}
        unread = [h for h in result.hosts if h not in self._generation]
        if unread:  # cannot happen (unread hosts are read before deciding): never trust one
            for host_id in unread:
                self._marks.unreadable(host_id)
            raise StaleSnapshot(f"host {unread[0]} was not read since a failed read")
        for host_id in result.hosts:
            expected[host_id] = self._generation[host_id]
            mine[host_id] = Pending()
            earlier = self._marks.held(host_id, mine[host_id])
            if earlier is not None:
                after.append(earlier)
            self._generation[host_id] += 1
        # a claim kept pending stays so (nothing built), or only what a claim changes is refilled
        self._fleet().take(result.hosts, configurations)
        self.clock.spent("index")
        return Decision(result, Snapshot({}, expected), tuple(after), mine)

    def finish(self, decision: Decision, ok: bool) -> None:
        """`decision`'s commit ended (`ok`: it landed): its hosts are fresh and owed to the
        store's documents, or lost; the commits waiting for it go on."""
        now = time.monotonic()
        with self._lock:
            for host_id, pending in decision.mine.items():
                if ok:
                    made = decision.base.generations[host_id] + 1
                    if self._owed.get(host_id, (0, None))[0] < made:
                        self._owed[host_id] = (made, decision.result.hosts)
                pending.ok = ok
                pending.done.set()
                self._marks.finished(host_id, pending, ok, now)

    def write_back(self) -> int:
        """Store the availability of the hosts this worker committed on, each as exact at the
        generation its latest commit here made (commits write only claim rows); how many were
        written. That document is the host at that generation whatever happened since: the commit
        was a compare-and-swap on the generation this worker's index had. The store writes it only
        where the host's document is older. Each document built from claims kept pending is
        then what the index holds for its host (`FleetIndex.adopt`): the host's next claims are
        built from it, not from every claim since the host was read. The built hosts live on in
        the index: built with the collector paused, they join the objects a worker keeps out of
        its collections (`gc_paused(lasting=True)`) instead of being walked again by it."""
        with self._lock:
            owed, self._owed = self._owed, {}
        with gc_paused(lasting=True):
            documents = [(h, g, hosts[h]) for h, (g, hosts) in sorted(owed.items())]
            with self._lock:
                for h, (_, hosts) in owed.items():
                    made = hosts.claim(h) if isinstance(hosts, ClaimedHosts) else None
                    if made is not None and self._index is not None:
                        self._index.adopt(made, hosts[h])
        return self.store.write_back(documents)
