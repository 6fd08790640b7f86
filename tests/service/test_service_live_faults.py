"""A worker's index after a database failure at each step of a placement (the change feed, a host
read again, the commit, a commit whose outcome is unknown) and of its upkeep (the write-back): the
failed step raises, and the next placements are exactly what a worker that never failed would make,
on an index equal to a fresh build."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import psycopg
import pytest
from service_hosts import host, vm
from service_support import sequential_count
from sqlalchemy.exc import OperationalError

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.service import live
from nfvplace.service.host_states import HostState
from nfvplace.service.live import Placer
from nfvplace.service.metrics import Metrics
from nfvplace.service.placing import PlacementRequest, Placements
from nfvplace.service.problems import ProblemError
from nfvplace.store import Store
from nfvplace.store.faults import CommitOutcomeUnknownError

VM = vm(vcpus=2, pages=1, sriov=1)
# three hosts with room for two such VMs each (one node: four free cores, PU 0 reserved; two pages)
HOSTS = [host(f"h{k}", nodes=1, cores=5, pages_1g=2, vfs=2) for k in range(3)]


def lost(store: Store) -> OperationalError:
    """What SQLAlchemy raises when the server went away, with the driver's own error inside."""
    if store.engine.dialect.name == "postgresql":
        cause: Exception = psycopg.OperationalError("server closed the connection unexpectedly")
    else:
        cause = sqlite3.OperationalError("disk I/O error")
    return OperationalError("SELECT ...", {}, cause)


Wrapper = Callable[[Callable[..., Any], Callable[[], Exception]], Callable[..., Any]]


def fail_before(real: Callable[..., Any], error: Callable[[], Exception]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        raise error()

    return call


def fail_after_hosts(count: int) -> Wrapper:
    """`iter_availability` that yields `count` hosts and then loses the connection."""

    def wrap(real: Callable[..., Any], error: Callable[[], Exception]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Iterator[Any]:
            for k, item in enumerate(real(*args, **kwargs)):
                if k == count:
                    raise error()
                yield item
            if count == 0:
                raise error()

        return call

    return wrap


def outcome_unknown(stored: bool) -> Wrapper:
    """`commit_placement` whose connection breaks during COMMIT (the commit landed or not)."""

    def wrap(real: Callable[..., Any], error: Callable[[], Exception]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if stored:
                real(*args, **kwargs)
            raise CommitOutcomeUnknownError(error())

        return call

    return wrap


FEED = ("changes_since", fail_before)
CLAIMS = ("committed_since", fail_before)
READ_NONE = ("iter_availability", fail_after_hosts(0))
READ_ONE = ("iter_availability", fail_after_hosts(1))
COMMIT = ("commit_placement", fail_before)
UNKNOWN_STORED = ("commit_placement", outcome_unknown(stored=True))
UNKNOWN_LOST = ("commit_placement", outcome_unknown(stored=False))
LAZY, EAGER = 3600.0, 0.0  # STALE_S: hosts another worker changed read when needed, or at once

# name: (STALE_S, [(the store method that fails and how, the request that meets it), ...]): each
# request of the list fails on its fault; then the database is back
SCENARIOS: dict[str, tuple[float, list[tuple[tuple[str, Wrapper], str]]]] = {
    "change feed": (LAZY, [(FEED, "place")]),
    "refresh reads changed hosts, fails before the first": (EAGER, [(READ_NONE, "place")]),
    "refresh reads changed hosts, fails after the first": (EAGER, [(READ_ONE, "place")]),
    "dry run reads stale hosts, fails before the first": (LAZY, [(READ_NONE, "dry run")]),
    "dry run reads stale hosts, fails after the first": (LAZY, [(READ_ONE, "dry run")]),
    "refresh reads the commits on changed hosts, fails": (EAGER, [(CLAIMS, "place")]),
    "dry run reads the commits on stale hosts, fails": (LAZY, [(CLAIMS, "dry run")]),
    "commit refused": (LAZY, [(COMMIT, "place")]),
    "commit refused, then its host's read": (LAZY, [(COMMIT, "place"), (READ_NONE, "place")]),
    "commit outcome unknown, stored": (LAZY, [(UNKNOWN_STORED, "place")]),
    "commit outcome unknown, stored, then its host's read": (
        LAZY,
        [(UNKNOWN_STORED, "place"), (READ_NONE, "dry run")],
    ),
    "commit outcome unknown, not stored, then its host's read": (
        LAZY,
        [(UNKNOWN_LOST, "place"), (READ_NONE, "place")],
    ),
}


def request(dry_run: bool = False) -> PlacementRequest:
    body = {"vm": VM, "dry_run": dry_run}
    return PlacementRequest(VmDescriptor.model_validate(VM), body, dry_run=dry_run)


def place(worker: Placements) -> bool:
    """Place VM once: True if placed, False when nothing fits any more."""
    try:
        answer = worker.place(request(), None)
    except ProblemError as refused:
        if refused.code != "nfvplace.placement.no_fit":
            raise
        return False
    assert answer.status == 201, answer.body
    return True


def assert_index_is_fresh(worker: Placements) -> None:
    """Once the worker has read the change feed, every host it does not know to be stale is as
    the store has it, at its generation (a fresh worker's index: the same hosts, descriptors and
    generations)."""
    worker.live.refresh()
    index = worker.live._fleet()
    fresh = Placements(worker.store, worker.placer, Metrics(), 1).live
    fresh.refresh()
    assert sorted(index.ids) == sorted(fresh._fleet().ids)
    unread = (HostState.STALE, HostState.LOST)
    known_stale = {h for h in index.ids if worker.live.state(h) in unread}
    for host_id in index.ids:
        if host_id in known_stale:
            continue
        assert worker.live._generation[host_id] == fresh._generation[host_id], host_id
        assert index.host(host_id) == fresh._fleet().host(host_id), host_id


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_failed_step_leaves_the_index_whole(
    scenario: str, db_url: str, placer: Placer, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale_s, faults = SCENARIOS[scenario]
    stores = [Store.open(db_url), Store.open(db_url, migrate=False)]
    try:
        for chd in HOSTS:
            stores[0].put_host(ComputeHostDescriptor.model_validate(chd))
        other, worker = (Placements(s, placer, Metrics(), max_attempts=8) for s in stores)
        assert place(worker)  # the worker's index is built and holds one placement
        assert place(other)  # hosts changed under the worker
        assert place(other)
        for (method, wrapper), kind in faults:
            with monkeypatch.context() as broken:
                broken.setattr(live, "STALE_S", stale_s)
                real = getattr(worker.store, method)
                broken.setattr(worker.store, method, wrapper(real, partial(lost, worker.store)))
                if method == "iter_availability":  # every host read whole, as after a release
                    broken.setattr(worker.store, "committed_since", lambda _known: {})
                with pytest.raises((OperationalError, CommitOutcomeUnknownError)):
                    worker.place(request(dry_run=kind == "dry run"), None)
        assert_index_is_fresh(worker)  # the database is back
        placed = 0
        while place(worker):
            placed += 1
            assert_index_is_fresh(worker)
        assert not place(other)
        assert worker.store.audit() == []
        live_count = len(worker.store.list_placements(limit=1000).placements)
        assert live_count == sequential_count(placer, HOSTS, VM)  # no phantom use, none lost
        stored = sum(fault == UNKNOWN_STORED for fault, _kind in faults)
        assert placed == live_count - 3 - stored
    finally:
        for store in stores:
            store.close()


def test_a_failed_first_read_leaves_no_index(
    db_url: str, placer: Placer, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(db_url)
    try:
        for chd in HOSTS:
            store.put_host(ComputeHostDescriptor.model_validate(chd))
        worker = Placements(store, placer, Metrics(), max_attempts=8)
        with monkeypatch.context() as broken:
            wrapped = fail_after_hosts(1)(store.iter_availability, partial(lost, store))
            broken.setattr(store, "iter_availability", wrapped)
            with pytest.raises(OperationalError):
                worker.live.refresh()
        assert worker.live._index is None
        assert worker.live._generation == {}
        assert place(worker)
        assert_index_is_fresh(worker)
    finally:
        store.close()


def test_a_failed_write_back_loses_nothing(
    db_url: str, placer: Placer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write-back of a worker's committed hosts fails (the database went away): those hosts'
    documents stay behind their generations, which readers replay, and the next write-backs,
    placements and reads are what they would have been."""
    stores = [Store.open(db_url), Store.open(db_url, migrate=False)]
    try:
        for chd in HOSTS:
            stores[0].put_host(ComputeHostDescriptor.model_validate(chd))
        other, worker = (Placements(s, placer, Metrics(), max_attempts=8) for s in stores)
        assert place(worker)
        assert place(other)
        with monkeypatch.context() as broken:
            failing = fail_before(worker.store.write_back, partial(lost, worker.store))
            broken.setattr(worker.store, "write_back", failing)
            with pytest.raises(OperationalError):
                worker.live.write_back()
        assert other.live.write_back() == 1
        assert worker.live.write_back() == 0  # what failed is not written later: it is replayed
        assert_index_is_fresh(worker)
        assert_index_is_fresh(other)
        while place(worker) | place(other):
            worker.live.write_back()
            assert_index_is_fresh(worker)
        assert worker.store.audit() == []
        live_count = len(worker.store.list_placements(limit=1000).placements)
        assert live_count == sequential_count(placer, HOSTS, VM)
    finally:
        for store in stores:
            store.close()
