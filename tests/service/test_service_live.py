"""The worker's index (service/live.py): hosts another worker changed are stale until read, read
lazily for single VMs and at once for dry runs; the decision never rests on a stale host."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

import numpy as np
import pytest
from service_hosts import host, vm
from stored import generations

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.service import live
from nfvplace.service.answers import configurations_json
from nfvplace.service.live import Decision, Placer
from nfvplace.service.metrics import Metrics
from nfvplace.service.placing import PlacementRequest, Placements, new_placement_id
from nfvplace.service.problems import ProblemError
from nfvplace.store import Store

VM = vm(vcpus=2, pages=1, sriov=1)


def request(dry_run: bool = False) -> PlacementRequest:
    body = {"vm": VM, "dry_run": dry_run}
    return PlacementRequest(VmDescriptor.model_validate(VM), body, dry_run=dry_run)


def two_workers(db_url: str, placer: Placer, hosts: list[str], **room: int) -> list[Placements]:
    stores = [Store.open(db_url), Store.open(db_url, migrate=False)]
    for name in hosts:
        stores[0].put_host(ComputeHostDescriptor.model_validate(host(name, **room)))
    workers = [Placements(s, placer, Metrics(), max_attempts=8) for s in stores]
    for worker in workers:
        worker.live.refresh()  # both indexes built before either places
    return workers


@pytest.fixture
def roomy(db_url: str, placer: Placer) -> Iterator[list[Placements]]:
    workers = two_workers(db_url, placer, ["h0", "h1", "h2"], cores=4, pages_1g=4, vfs=4)
    yield workers
    for w in workers:
        w.store.close()


@pytest.fixture
def single(db_url: str, placer: Placer) -> Iterator[list[Placements]]:
    """One host with room for two such VMs (one node: four free cores, PU 0 reserved; two pages)."""
    workers = two_workers(db_url, placer, ["h0"], nodes=1, cores=5, pages_1g=2, vfs=2)
    yield workers
    for w in workers:
        w.store.close()


def placed_on(worker: Placements, dry_run: bool = False) -> str:
    answer = worker.place(request(dry_run), None)
    assert answer.status == (200 if dry_run else 201), answer.body
    return str(answer.document()["configurations"][0]["host"])


def conflicts(worker: Placements) -> float:
    return worker.metrics.conflicts._value.get()  # type: ignore[attr-defined,no-any-return]


def test_a_single_vm_goes_to_a_fresh_host_without_reading_the_stale_one(
    roomy: list[Placements],
) -> None:
    a, b = roomy
    first = placed_on(a)
    read = b.live.hosts_read
    second = placed_on(b)
    assert second != first  # a's host is stale for b: excluded while others fit
    assert b.live.hosts_read == read  # and not read at all
    assert placed_on(b) == second  # b keeps packing onto its own host (its lane)
    assert conflicts(a) == conflicts(b) == 0
    assert a.store.audit() == []


def phase_cpu(worker: Placements, phase: str) -> float:
    value = worker.metrics.registry.get_sample_value(
        "nfvplace_placement_cpu_seconds_total", {"phase": phase}
    )
    return float(value or 0.0)


def test_reading_hosts_again_is_its_own_phase_of_placing(roomy: list[Placements]) -> None:
    a, b = roomy
    placed_on(a)
    placed_on(b)  # the change feed, nothing read: a's host is stale for b
    assert phase_cpu(b, "refresh") > 0
    assert phase_cpu(b, "read") == 0
    placed_on(b, dry_run=True)  # a dry run reads the stale host first
    assert b.live.hosts_read == 4  # three at the start, a's host once more
    assert phase_cpu(b, "read") > 0


def decided(worker: Placements) -> Decision:
    """A single VM decided and claimed in `worker`'s index, its commit not sent yet."""
    ask = worker._ask(request(), new_placement_id(), attempt=0)
    return worker.live.decide(ask, narrow=True)


def commit(worker: Placements, decision: Decision) -> None:
    """The decision's commit, then the index told it landed (`Placements.place`'s order)."""
    placement_id = decision.result.configurations[0].owner.split("/")[0]
    stored = (b"{}", configurations_json(decision.result.configurations))
    try:
        worker._commit(request(), None, placement_id, stored, decision, False)
    except BaseException:
        worker.live.finish(decision, False)
        raise
    worker.live.finish(decision, True)


def test_a_single_vm_goes_first_to_a_host_with_no_commit_in_flight(
    roomy: list[Placements],
) -> None:
    """Commits on one host land one at a time: a second placement decided while the first one's
    commit is in flight goes to another host and commits alongside, waiting for nothing."""
    a, _ = roomy
    first, second = decided(a), decided(a)
    assert first.result.hosts.keys().isdisjoint(second.result.hosts)
    assert (first.after, second.after) == ((), ())
    commit(a, second)
    commit(a, first)
    assert decided(a).result.hosts.keys() == first.result.hosts.keys()  # packed on again
    assert placements(a.store) == 2
    assert a.store.audit() == []


def test_a_single_vm_waits_for_the_commit_in_flight_where_no_other_host_fits(
    single: list[Placements],
) -> None:
    a, _ = single
    first, second = decided(a), decided(a)
    assert first.result.hosts.keys() == second.result.hosts.keys() == {"h0"}
    assert second.after == (first.mine["h0"],)  # committed after the first one
    commit(a, first)
    commit(a, second)
    assert placements(a.store) == 2
    assert conflicts(a) == 0
    assert a.store.audit() == []


def test_a_stale_host_is_read_within_stale_s(
    roomy: list[Placements], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = roomy
    placed_on(a)
    read = b.live.hosts_read
    monkeypatch.setattr(live, "STALE_S", 0.0)
    placed_on(b)
    assert b.live.hosts_read == read + 1  # a's host, read on b's next request


def whole_reads(worker: Placements, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The hosts `worker` reads whole from now on (its document parsed, commits replayed)."""
    read: list[str] = []
    streamed = worker.store.iter_availability

    def spied(ids: Iterable[str]) -> Iterator[tuple[str, int, ComputeHostDescriptor]]:
        ids = list(ids)
        read.extend(ids)
        return streamed(ids)

    monkeypatch.setattr(worker.store, "iter_availability", spied)
    return read


def test_a_host_only_commits_moved_on_is_read_by_claiming_them(
    roomy: list[Placements], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stale host another worker only placed on since is brought up to date by claiming its
    placements on the index's copy: the same host as a whole read gives, its document unparsed.
    After a release (a generation no commit made) it is read whole."""
    a, b = roomy
    first = placed_on(a)
    assert placed_on(a) == first  # two commits on it since b read it
    whole = whole_reads(b, monkeypatch)
    read = b.live.hosts_read
    assert placed_on(b, dry_run=True) == first  # the stale host read first
    assert (whole, b.live.hosts_read) == ([], read + 1)
    assert b.live._fleet().host(first) == a.store.availability([first])[first][1]
    assert placed_on(b) == first  # packed there, no race lost: b's copy is the store's host
    assert (whole, conflicts(b)) == ([], 0)
    assert b.store.release_placement(b.store.list_placements(host=first).placements[0].id)
    assert b.live._generation[first] < generations(b.store, first)[0]
    placed_on(b, dry_run=True)
    assert whole == [first]
    assert b.live._fleet().host(first) == a.store.availability([first])[first][1]
    assert a.store.audit() == []


def columns(index: FleetIndex) -> dict[str, dict[str, object]]:
    """Every kind's columns as plain values (a per-host mapping without its emptied entries)."""
    out: dict[str, dict[str, object]] = {}
    for name, table in index.tables.items():
        out[name] = {}
        for column in dataclasses.fields(table):  # type: ignore[arg-type]
            value = getattr(table, column.name)
            if isinstance(value, np.ndarray):
                out[name][column.name] = value.tolist()
            else:
                out[name][column.name] = {
                    k: v for k, v in value.items() if v or not isinstance(v, dict | set)
                }
    return out


def test_the_index_after_placing_has_the_columns_of_one_read_from_the_store(
    roomy: list[Placements],
) -> None:
    """A worker's own placements refill only what a claim changes in its index (`claimed`), and
    its index is then the one a worker reading the store now would build."""
    a, _ = roomy
    for _k in range(4):
        placed_on(a)
    read = a.store.availability(a.live._fleet().ids)
    fresh = FleetIndex([read[h][1] for h in a.live._fleet().ids])
    assert columns(a.live._fleet()) == columns(fresh)


def test_a_dry_run_decides_on_the_current_fleet(roomy: list[Placements]) -> None:
    a, b = roomy
    first = placed_on(a)
    assert placed_on(b, dry_run=True) == first  # pack: the fullest host, as it is now
    assert placed_on(b) == first  # read for the dry run: no longer stale, so b packs there too
    assert conflicts(b) == 0


def test_a_stale_host_is_read_when_nothing_else_fits(single: list[Placements]) -> None:
    a, b = single
    assert placed_on(a) == "h0"
    assert placed_on(b) == "h0"  # nothing else fits: read, decided again, no race lost
    assert conflicts(b) == 0
    with pytest.raises(ProblemError) as refused:  # full now, as both workers see it
        a.place(request(), None)
    assert refused.value.code == "nfvplace.placement.no_fit"
    assert a.store.audit() == []


def test_hosts_that_come_and_go_are_streamed_into_the_index(
    db_url: str, placer: Placer, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(db_url)
    try:
        worker = Placements(store, placer, Metrics(), max_attempts=8)
        worker.live.refresh()  # an empty index, as a server started before its hosts came

        def every_host_at_once(*_args: object) -> None:
            raise AssertionError("10,000 hosts parsed together take gibibytes: stream them")

        monkeypatch.setattr(store, "availability", every_host_at_once)
        for k in range(5):
            store.put_host(ComputeHostDescriptor.model_validate(host(f"h{k}")))
        worker.live.refresh()
        assert len(worker.live) == 5
        assert worker.live.hosts_read == 5
        assert store.delete_host("h3")
        worker.live.refresh()  # a host went: a new index without it
        assert len(worker.live) == 4
        store.put_host(ComputeHostDescriptor.model_validate(host("h5")))
        assert store.delete_host("h4")
        worker.live.refresh()  # one came, one went
        assert len(worker.live) == 4
        assert placed_on(worker, dry_run=True) in {"h0", "h1", "h2", "h5"}
    finally:
        store.close()


def behind(store: Store, host_id: str) -> bool:
    generation, written = generations(store, host_id)
    return written < generation


def test_a_worker_writes_back_what_it_committed_from_its_index(roomy: list[Placements]) -> None:
    a, b = roomy
    first = placed_on(a)
    assert placed_on(a) == first  # a packs its lane
    assert behind(a.store, first)  # commits wrote claim rows only
    fleet = a.live._fleet()
    row = fleet.positions[first]
    assert len(fleet.pending[row].configs) == 2  # both claims pending on the index's row
    assert a.live.write_back() == 1
    assert not behind(a.store, first)
    assert a.live.write_back() == 0  # nothing committed since
    stored = a.store.availability([first])[first][1]
    assert stored == a.live._fleet().host(first)  # the document is the index's
    assert row not in fleet.pending  # ... which holds it: the next claim is built from it
    assert a.store.audit() == []
    b.live.refresh()
    b.live._read_stale()
    assert b.live._fleet().host(first) == stored


def test_write_backs_of_two_workers_on_one_host_keep_the_newest_document(
    single: list[Placements],
) -> None:
    """a commits on the host, then b: a's document (exact at the generation a's commit made) is
    still a document of the host, older than b's; whichever writes back first, the newer stays."""
    a, b = single
    host_id = placed_on(a)  # generation 2 (the report made 1)
    b.live.refresh()
    b.live._read_stale()
    assert placed_on(b) == host_id  # generation 3
    assert b.live.write_back() == 1
    assert generations(a.store, host_id)[1] == 3
    assert a.live.write_back() == 0  # a's document (generation 2) is older: not written
    assert generations(a.store, host_id)[1] == 3
    assert not behind(a.store, host_id)
    assert a.store.audit() == []


def test_a_worker_writes_back_its_document_though_another_committed_since(
    single: list[Placements],
) -> None:
    a, b = single
    host_id = placed_on(a)  # generation 2
    b.live.refresh()
    b.live._read_stale()
    assert placed_on(b) == host_id  # generation 3
    assert a.live.write_back() == 1  # exact at 2; b's placement is claimed on it when read
    assert generations(a.store, host_id)[1] == 2
    assert behind(a.store, host_id)
    b_view = b.live._fleet().host(host_id)
    assert a.store.availability([host_id])[host_id] == (3, b_view)
    assert a.store.audit() == []


# --- placing on the event loop (`Placements.place_inline`) ---------------------------------------


def inline(worker: Placements) -> str | None:
    """The host `place_inline` placed the VM on; None where it handed the request over."""
    answer = worker.place_inline(request(), None)
    if answer is None:
        return None
    assert answer.status == 201, answer.body
    return str(answer.document()["configurations"][0]["host"])


def placements(store: Store) -> int:
    return len(store.list_placements(limit=500).placements)


def test_a_placement_on_the_event_loop_reads_no_host_and_waits_for_no_thread(
    db_url: str, placer: Placer
) -> None:
    """It hands over (None, nothing claimed) where it would read hosts (the index not built, a
    host that came) or wait for the index's lock; it places where nothing is to be read."""
    store = Store.open(db_url)
    try:
        for name in ("h0", "h1"):
            store.put_host(ComputeHostDescriptor.model_validate(host(name, cores=4, vfs=4)))
        worker = Placements(store, placer, Metrics(), max_attempts=8)
        assert inline(worker) is None  # no index yet: building it reads every host
        assert (worker.live.hosts_read, placements(store)) == (0, 0)
        first = placed_on(worker)  # the index is built here
        assert inline(worker) == first  # packed on, nothing read
        assert worker.live.hosts_read == 2
        store.put_host(ComputeHostDescriptor.model_validate(host("h2", cores=4, vfs=4)))
        assert inline(worker) is None  # a host came: it is to be read
        assert (worker.live.hosts_read, placements(store)) == (2, 2)
        assert placed_on(worker) == first
        assert worker.live.hosts_read == 3
        with worker.live._lock:  # another thread is deciding
            assert inline(worker) is None
        assert inline(worker) is not None
        assert placements(store) == 4
        assert conflicts(worker) == 0
        assert store.audit() == []
    finally:
        store.close()


def test_a_stale_host_is_left_to_the_placing_thread(single: list[Placements]) -> None:
    a, b = single
    assert inline(a) == "h0"
    read = b.live.hosts_read
    assert inline(b) is None  # only the stale h0 fits: reading it is the placing thread's
    assert b.live.hosts_read == read
    assert placed_on(b) == "h0"
    assert conflicts(b) == 0
    assert b.store.audit() == []


def test_a_race_lost_on_the_event_loop_is_placed_again_on_the_placing_thread(
    db_url: str, placer: Placer
) -> None:
    """The other worker commits on the host while this one decides: this one's commit loses its
    compare-and-swap, `place_inline` hands over, and the placing thread reads the host and places."""
    race: list[Placements] = []

    def racing(*args: object, **options: object) -> object:
        result = placer(*args, **options)
        if race:
            placed_on(race.pop())  # the other worker places first, on the only host
        return result

    a, b = two_workers(db_url, racing, ["h0"], nodes=1, cores=5, pages_1g=2, vfs=2)  # type: ignore[arg-type]
    try:
        race.append(b)
        assert inline(a) is None
        assert conflicts(a) == 1
        assert placements(a.store) == 1  # b's
        assert placed_on(a) == "h0"
        assert placements(a.store) == 2
        assert a.store.audit() == []
    finally:
        for worker in (a, b):
            worker.store.close()


def test_on_index_built_is_called_for_each_index_built(db_url: str, placer: Placer) -> None:
    """`nfvplace serve`'s workers freeze what is alive there (`workers.keep_out_of_collections`)."""
    built: list[int] = []
    store = Store.open(db_url)
    try:
        store.put_host(ComputeHostDescriptor.model_validate(host("h0", cores=4, vfs=4)))
        worker = Placements(store, placer, Metrics(), 8, on_index_built=lambda: built.append(1))
        worker.live.refresh()
        assert built == [1]  # the first index
        placed_on(worker)
        worker.live.refresh()
        assert built == [1]  # a host's claim updates the index: no new one
        store.put_host(ComputeHostDescriptor.model_validate(host("h1", cores=4, vfs=4)))
        worker.live.refresh()
        assert built == [1, 1]  # a host came: a new index
    finally:
        store.close()


def test_a_placement_on_the_event_loop_does_not_wait_for_sqlites_write_lock(
    sqlite_url: str, placer: Placer
) -> None:
    """Another connection holds the write lock (a replica's long transaction): `place_inline`
    hands over at once, nothing written; the placing thread waits for the lock as before."""
    import sqlite3
    import threading
    import time

    from sqlalchemy.engine import make_url

    store = Store.open(sqlite_url)
    try:
        store.put_host(ComputeHostDescriptor.model_validate(host("h0", cores=4, vfs=4)))
        worker = Placements(store, placer, Metrics(), max_attempts=8)
        first = placed_on(worker)  # the index is built
        database = str(make_url(sqlite_url).database)
        other = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")  # the write lock, held
        started = time.monotonic()
        assert inline(worker) is None
        assert time.monotonic() - started < 1.0  # INLINE_LOCK_WAIT_S, not the 30 s busy timeout
        release = threading.Timer(0.3, lambda: other.execute("ROLLBACK"))
        release.start()
        assert placed_on(worker) == first  # waits for the lock, then commits
        release.join()
        assert inline(worker) == first  # the connection waits no less than before for others
        assert placements(store) == 3
        assert store.audit() == []
        other.close()
    finally:
        store.close()


def test_placing_and_dropping_an_index_leave_no_garbage_in_cycles(
    db_url: str, placer: Placer
) -> None:
    """What `nfvplace serve`'s workers freeze (`workers.keep_out_of_collections`) must be freed
    by reference counts alone: the index, and what placing on it leaves behind."""
    import gc

    store = Store.open(db_url)
    try:
        for name in ("h0", "h1", "h2"):
            store.put_host(ComputeHostDescriptor.model_validate(host(name, cores=8, vfs=8)))
        worker = Placements(store, placer, Metrics(), max_attempts=8)
        placed_on(worker)  # the index is built, every statement prepared
        gc.collect()
        gc.disable()
        try:
            for _ in range(6):
                placed_on(worker)
            assert gc.collect() == 0
            worker.live._index = None  # as a new index replaces it
            assert gc.collect() == 0
        finally:
            gc.enable()
    finally:
        store.close()
