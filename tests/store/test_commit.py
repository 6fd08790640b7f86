"""A placement's commit (store/commit.py) on SQLite and PostgreSQL (one call of the server's
function there): every row written in order, a lost race stopping at its compare-and-swap, a refused
row rolling everything back, a connection lost before or during the COMMIT, round trips."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from protocol_trace import traced
from service_hosts import host
from sqlalchemy import select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.store import StaleSnapshot, Store, db
from nfvplace.store.commit import (
    PLACEMENT_COLUMNS,
    PageClaim,
    PlacedInstance,
    PlacementWrite,
    Swap,
    commit,
)
from nfvplace.store.faults import CommitOutcomeUnknownError
from nfvplace.store.records import (
    CLAIMS,
    HOSTS,
    INSTANCES,
    PAGE_CLAIMS,
    PLACEMENT_HOSTS,
    PLACEMENTS,
    POOLS,
    utc_now,
)
from nfvplace.store.resources import Held


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    for name in ("h1", "h2"):
        opened.put_host(ComputeHostDescriptor.model_validate(host(name, pages_1g=2)))
    yield opened
    opened.close()


def generations(store: Store) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {h: int(g) for h, g in conn.execute(select(HOSTS.c.id, HOSTS.c.generation))}


def write(
    store: Store,
    pid: str,
    *,
    pus: tuple[str, ...] = ("1",),
    pages: int = 1,
    name: str | None = None,
) -> PlacementWrite:
    """A placement on h1 and h2 at their current generations: `pus` of h1, `pages` 1 GiB pages
    of h2's node 0."""
    seen = generations(store)
    return PlacementWrite(
        placement={
            "id": pid,
            "idempotency_key": f"key-{pid}",
            "request_hash": "hash",
            "response": db.JsonText(json.dumps({"id": pid})),
            "configurations": db.JsonText("[]"),
            "name": name,
            "descriptor": None,
            "created_at": utc_now(),
        },
        swaps=[Swap(h, seen[h], seen[h] + 1) for h in ("h1", "h2")],
        instances=[PlacedInstance(f"{pid}/a", "h1", "a"), PlacedInstance(f"{pid}/b", "h2", "b")],
        claims=[Held("h1", "pu", pu) for pu in pus],
        pages=[PageClaim("h2", 0, 1048576, pages)] if pages else [],
    )


def rows(store: Store) -> dict[str, Any]:
    """Everything a commit writes, read back."""
    with store.engine.connect() as conn:

        def read(*columns: Any) -> list[tuple[Any, ...]]:
            return sorted(tuple(r) for r in conn.execute(select(*columns)))

        return {
            "placements": read(
                PLACEMENTS.c.id, PLACEMENTS.c.idempotency_key, PLACEMENTS.c.response
            ),
            "hosts": read(PLACEMENT_HOSTS.c.placement_id, PLACEMENT_HOSTS.c.host_id),
            "instances": read(INSTANCES.c.owner, INSTANCES.c.host_id, INSTANCES.c.vm),
            "claims": read(CLAIMS.c.placement_id, CLAIMS.c.kind, CLAIMS.c.resource),
            "pages": read(PAGE_CLAIMS.c.placement_id, PAGE_CLAIMS.c.count),
            "pools": read(POOLS.c.host_id, POOLS.c.numa_node, POOLS.c.claimed),
            "generations": generations(store),
        }


def in_autocommit(raw: object) -> bool:
    """A psycopg connection in autocommit (sqlite3's attribute says something else)."""
    return isinstance(raw, psycopg.Connection) and raw.autocommit


def test_a_commit_writes_every_row_and_moves_the_hosts_on(store: Store) -> None:
    before = generations(store)
    with db.transaction(store.engine) as conn:
        commit(conn, write(store, "p1", pus=("1", "2")))
        raw = conn.connection.driver_connection
    assert not in_autocommit(raw)  # lent back as it was
    stored = rows(store)
    assert stored["placements"] == [("p1", "key-p1", {"id": "p1"})]
    assert stored["hosts"] == [("p1", "h1"), ("p1", "h2")]
    assert stored["instances"] == [("p1/a", "h1", "a"), ("p1/b", "h2", "b")]
    assert stored["claims"] == [("p1", "pu", "1"), ("p1", "pu", "2")]
    assert stored["pages"] == [("p1", 1)]
    assert (("h2", 0, 1)) in stored["pools"]
    assert stored["generations"] == {h: g + 1 for h, g in before.items()}
    record = store.get_placement("p1")
    assert record is not None
    assert record.response == {"id": "p1"}


@pytest.mark.parametrize(
    ("spoil", "stale"),
    [
        ("h2's generation moved on", "h2"),
        ("h2's pool is full", "h2"),
    ],
)
def test_a_lost_race_is_stale_and_leaves_nothing(store: Store, spoil: str, stale: str) -> None:
    late = write(store, "p2", pus=("3",), pages=2 if "pool" in spoil else 1)
    if "generation" in spoil:
        store.put_host(ComputeHostDescriptor.model_validate(host("h2", pages_1g=2)))
    else:
        with db.transaction(store.engine) as conn:
            commit(conn, write(store, "p1", pus=("1",), pages=1))
        late = write(store, "p2", pus=("3",), pages=2)  # 1 + 2 pages > the pool's 2
    before = rows(store)
    with pytest.raises(StaleSnapshot, match=rf"^{stale}$"), db.transaction(store.engine) as conn:
        commit(conn, late)
    assert rows(store) == before


def test_a_claim_held_already_is_an_integrity_error_and_leaves_nothing(store: Store) -> None:
    with db.transaction(store.engine) as conn:
        commit(conn, write(store, "p1", pus=("5",)))
    before = rows(store)
    with pytest.raises(IntegrityError), db.transaction(store.engine) as conn:
        commit(conn, write(store, "p2", pus=("6", "5")))  # PU 5 is p1's
    assert rows(store) == before


def test_the_function_writes_every_column_of_placements() -> None:
    """A migration that adds a column to `placements` must replace the commit function too."""
    assert set(PLACEMENTS.c.keys()) - {"released_at"} == set(PLACEMENT_COLUMNS)


def test_a_lost_race_stops_before_the_rows_others_hold(postgres_url: str) -> None:
    """A compare-and-swap that lost its race must not wait on rows its winner holds (which can
    deadlock): the function stops at the first host that moved on."""
    store = Store.open(postgres_url)
    try:
        for name in ("h1", "h2"):
            store.put_host(ComputeHostDescriptor.model_validate(host(name)))
        late = write(store, "p1", pages=0)
        store.put_host(ComputeHostDescriptor.model_validate(host("h1")))  # h1 moved on
        with store.engine.connect() as holder, store.engine.connect() as conn:
            holder.execute(update(HOSTS).where(HOSTS.c.id == "h2").values(change_seq=99))
            conn.execute(text("SET lock_timeout = '2s'"))  # a wait would fail, not hang
            with pytest.raises(StaleSnapshot, match=r"^h1$"):
                commit(conn, late)
    finally:
        store.close()


# A placement named LOSE kills its own server process: when inserted (IMMEDIATE), in the round
# trip of the call, or at COMMIT (DEFERRED: a deferred constraint trigger runs there).
LOSE = "lose the connection"
KILLER = """
CREATE FUNCTION nfvplace_test_lose() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER nfvplace_test_lose AFTER INSERT ON placements
DEFERRABLE INITIALLY {when} FOR EACH ROW WHEN (NEW.name = '{name}')
EXECUTE FUNCTION nfvplace_test_lose();
"""


@pytest.mark.parametrize("when", ["DEFERRED", "IMMEDIATE"])
def test_a_connection_lost_with_the_commit_leaves_the_outcome_unknown(
    postgres_url: str, when: str
) -> None:
    """Lost in the round trip that carries the COMMIT, the server may have committed; lost
    before it (in the call's), the server rolls the transaction back."""
    store = Store.open(postgres_url)
    expected = CommitOutcomeUnknownError if when == "DEFERRED" else OperationalError
    try:
        for name in ("h1", "h2"):
            store.put_host(ComputeHostDescriptor.model_validate(host(name)))
        with store.engine.begin() as conn:
            conn.execute(text(KILLER.format(when=when, name=LOSE)))
        with pytest.raises(expected), db.transaction(store.engine) as conn:
            commit(conn, write(store, "p1", name=LOSE))
        if when == "IMMEDIATE":
            assert store.get_placement("p1") is None  # the connection broke before COMMIT
        store.ping()  # and the store serves again at once: the broken connection left the pool
    finally:
        store.close()


def test_a_commit_is_two_round_trips(postgres_url: str) -> None:
    """The call with its `BEGIN`, then the `COMMIT`: the client waits for the server twice (each
    wait ends a `Sync` the client sent; libpq's trace shows them)."""
    store = Store.open(postgres_url)
    try:
        for name in ("h1", "h2"):
            store.put_host(ComputeHostDescriptor.model_validate(host(name)))
        placed = write(store, "p1")
        with db.transaction(store.engine) as conn:
            raw: Any = conn.connection.driver_connection
            with traced(raw) as trace:
                commit(conn, placed)
        assert trace.round_trips() == 2, trace.text
        assert store.get_placement("p1") is not None
    finally:
        store.close()
