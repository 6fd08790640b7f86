"""SQLite's lane (store/lane.py): the connection kept for the event loop's commits and change feed
reads stores what the pool's connections store, byte for byte, refuses what they refuse, waits for
the write lock no longer than it is told, and leaves the pool's connections as they were."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import stored
from service_hosts import host
from sqlalchemy import select
from sqlalchemy.engine import make_url

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.store import (
    IdempotentReplayError,
    Snapshot,
    StaleSnapshot,
    Store,
    WriteLockBusyError,
    db,
)
from nfvplace.store import placements as placements_module
from nfvplace.store.records import HOSTS, Changes

NOW = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
WAIT_S = 0.01


@pytest.fixture
def stores(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Store, Store]]:
    """Two stores of the same hosts: the first commits on its lane, the second on the pool."""
    monkeypatch.setattr(placements_module, "utc_now", lambda: NOW)
    opened = []
    for name in ("lane", "pool"):
        store = Store.open(f"sqlite:///{tmp_path / name}.db")
        for h in ("h1", "h2"):
            store.put_host(ComputeHostDescriptor.model_validate(host(h, cores=4, pages_1g=2)))
        opened.append(store)
    with db.transaction(opened[1].engine) as conn:  # the same stamps in both files
        conn.execute(HOSTS.update().values(created_at=NOW, updated_at=NOW))
    with db.transaction(opened[0].engine) as conn:
        conn.execute(HOSTS.update().values(created_at=NOW, updated_at=NOW))
    yield opened[0], opened[1]
    for store in opened:
        store.close()


def config(owner: str, host_id: str, pus: list[int], pages: int = 0) -> VmConfiguration:
    """`owner` on `pus` of `host_id`'s node 0, with `pages` 1 GiB pages (none: 1 GiB of memory)."""
    made = stored.config(owner, pus, pages=pages).model_dump()
    made["host"] = host_id
    if not pages:
        made["cpu_sets"][0]["hugepages"] = None
    return VmConfiguration.model_validate(made)


def generations(store: Store) -> dict[str, int]:
    with store.engine.connect() as conn:
        return {h: int(g) for h, g in conn.execute(select(HOSTS.c.id, HOSTS.c.generation))}


def commit(
    store: Store,
    pid: str,
    key: str | None,
    configs: list[VmConfiguration],
    lane: bool,
    seen: dict[str, int] | None = None,
) -> str:
    """The placement committed (on the lane or the pool): what happened, as a word."""
    base = generations(store) if seen is None else seen
    touched = {c.host for c in configs}
    try:
        store.commit_placement(
            placement_id=pid,
            idempotency_key=key,
            request_hash="hash",
            response=db.JsonText(json.dumps({"id": pid})),
            configurations=configs,
            snapshot=Snapshot({}, {h: base[h] for h in touched}),
            name=pid,
            descriptor=None,
            lock_timeout_s=WAIT_S if lane else None,
        )
    except StaleSnapshot as exc:
        return f"stale {exc}"
    except IdempotentReplayError as exc:
        return f"replay of {exc.placement.id}"
    return "stored"


def dump(store: Store) -> list[str]:
    database = str(make_url(str(store.engine.url)).database)
    with sqlite3.connect(database) as conn:
        return list(conn.iterdump())


# each step: a placement id, its key, its configurations and whether it is decided on generations
# that moved on (a race lost): applied in turn to both stores
STEPS: list[tuple[str, str | None, list[tuple[str, list[int], int]], bool]] = [
    ("p1", "k1", [("h1", [0, 1], 0)], False),
    ("p2", None, [("h2", [2], 1)], False),
    ("p3", "k3", [("h1", [2], 0), ("h2", [3], 1)], False),
    ("p4", "k1", [("h2", [0], 0)], False),  # a key used before
    ("p5", "k5", [("h1", [1], 0)], False),  # PU 1 of h1 is p1's
    ("p6", "k6", [("h2", [1], 0)], True),  # decided on h2 as it was
    ("p7", "k7", [("h2", [1], 2)], False),  # h2's node 0 has two 1 GiB pages, p2 took one
    ("p8", "k8", [("h1", [3], 0)], False),
]
CONCURRENT = "stale a resource was claimed concurrently"
OUTCOMES = ["stored", "stored", "stored", "replay of p1", CONCURRENT, "stale h2", "stale h2"]
OUTCOMES += ["stored"]


def test_the_lane_stores_and_refuses_what_the_pool_does(stores: tuple[Store, Store]) -> None:
    on_lane, on_pool = stores
    start = generations(on_lane)
    for (pid, key, parts, stale), expected in zip(STEPS, OUTCOMES, strict=True):
        configs = [config(f"{pid}/vm{k}", *part) for k, part in enumerate(parts)]
        seen = start if stale else None
        outcomes = [commit(s, pid, key, configs, lane, seen) for s, lane in stores_lanes(stores)]
        assert outcomes == [expected, expected], pid
    assert on_lane.lane(WAIT_S) is not None
    assert dump(on_lane) == dump(on_pool)
    assert on_lane.audit() == []


def stores_lanes(stores: tuple[Store, Store]) -> list[tuple[Store, bool]]:
    return [(stores[0], True), (stores[1], False)]


def test_the_changes_read_on_the_lane_are_the_pools(stores: tuple[Store, Store]) -> None:
    store = stores[0]
    commit(store, "p1", "k1", [config("p1/vm", "h1", [0])], lane=True)
    for seq in (-1, 0, 1, 2, 10):
        assert store.changes_since(seq, WAIT_S) == store.changes_since(seq), seq


def test_a_busy_write_lock_fails_the_lanes_commit_soon_and_keeps_nothing(
    stores: tuple[Store, Store],
) -> None:
    store = stores[0]
    commit(store, "p1", "k1", [config("p1/vm", "h1", [0])], lane=True)  # the lane opened
    other = sqlite3.connect(str(make_url(str(store.engine.url)).database), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the write lock, held
    before = generations(store)
    started = time.monotonic()
    with pytest.raises(WriteLockBusyError):
        commit(store, "p2", "k2", [config("p2/vm", "h1", [1])], lane=True)
    assert time.monotonic() - started < 1.0  # WAIT_S, not the 30 s busy timeout
    changes = store.changes_since(-1, WAIT_S)  # a reader is not kept out by a writer
    assert changes.hosts == before
    other.execute("ROLLBACK")
    other.close()
    assert commit(store, "p2", "k2", [config("p2/vm", "h1", [1])], lane=True) == "stored"
    assert store.audit() == []


def test_a_lane_in_use_sends_the_other_thread_through_the_pool(
    stores: tuple[Store, Store],
) -> None:
    store = stores[0]
    lane = store.lane(WAIT_S)
    assert lane is not None
    with lane.taken() as raw:
        assert raw is not None
        done: list[str] = []
        other = threading.Thread(
            target=lambda: done.append(
                commit(store, "p1", "k1", [config("p1/vm", "h1", [0])], True)
            )
        )
        other.start()
        other.join()
        assert done == ["stored"]
        assert store.changes_since(-1, WAIT_S) == store.changes_since(-1)


def test_the_pools_connections_keep_their_busy_timeout(stores: tuple[Store, Store]) -> None:
    store = stores[0]
    commit(store, "p1", "k1", [config("p1/vm", "h1", [0])], lane=True)
    with store.engine.connect() as conn:
        raw: Any = conn.connection.driver_connection
        assert raw.execute("PRAGMA busy_timeout").fetchone()[0] == db.SQLITE_BUSY_TIMEOUT_MS
    lane = store.lane(WAIT_S)
    assert lane is not None
    with lane.taken() as held:
        assert held.execute("PRAGMA busy_timeout").fetchone()[0] == int(WAIT_S * 1000)
        assert held.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert held.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL: as durable
        assert held.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close_lanes()
    with lane.taken() as reopened:  # opened again on next use
        assert reopened is not held
        assert reopened.execute("PRAGMA busy_timeout").fetchone()[0] == int(WAIT_S * 1000)


def test_postgresql_has_no_lane(postgres_url: str) -> None:
    store = Store.open(postgres_url)
    try:
        assert store.lane(WAIT_S) is None
    finally:
        store.close()


def test_the_feed_on_the_lane_leaves_out_only_its_own_commits(
    stores: tuple[Store, Store],
) -> None:
    """Read on the lane, the change feed is the pool's, but for the lane's own commits since it
    read (their caller knows them): nothing read then, the watermark as it was."""
    store = stores[0]
    full = store.changes_since(-1, WAIT_S)
    assert full == store.changes_since(-1)
    again = store.changes_since(full.seq, WAIT_S)
    assert again == store.changes_since(full.seq) == Changes(full.seq, {})
    commit(store, "p1", "k1", [config("p1/vm", "h1", [0])], lane=True)
    assert store.changes_since(full.seq, WAIT_S) == Changes(full.seq, {})
    assert store.changes_since(full.seq).hosts == {"h1": full.hosts["h1"] + 1}
    commit(store, "p2", "k2", [config("p2/vm", "h2", [0])], lane=False)  # another connection
    seen = store.changes_since(full.seq, WAIT_S)
    assert seen == store.changes_since(full.seq)
    assert set(seen.hosts) == {"h1", "h2"}
    assert store.changes_since(full.seq, WAIT_S) == seen  # asked again from before: read again
    assert store.changes_since(seen.seq, WAIT_S) == Changes(seen.seq, {})
    store.put_host(ComputeHostDescriptor.model_validate(host("h3", cores=4, pages_1g=2)))
    added = store.changes_since(seen.seq, WAIT_S)
    assert added == store.changes_since(seen.seq)
    assert set(added.hosts) == {"h3"}
    store.delete_host("h3")
    assert store.changes_since(added.seq, WAIT_S) == store.changes_since(added.seq)
    assert store.changes_since(added.seq, WAIT_S).hosts == {"h3": None}
