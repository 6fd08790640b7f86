"""The store itself, on SQLite and PostgreSQL: migrations, unique claims, compare-and-swap."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from alembic import command
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from service_hosts import host
from sqlalchemy import insert, inspect, select
from sqlalchemy.exc import IntegrityError
from stored import commit, config

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.store import StaleSnapshot, Store
from nfvplace.store.assumed import ASSUMED, AssumedPod, AssumedPods
from nfvplace.store.db import alembic_config, migrate
from nfvplace.store.records import CLAIMS, utc_now


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    yield opened
    opened.close()


def test_migrations_reach_head_and_are_idempotent(store: Store) -> None:
    migrate(store.engine)  # a second run changes nothing
    head = ScriptDirectory.from_config(alembic_config(str(store.engine.url))).get_current_head()
    with store.engine.connect() as conn:
        assert MigrationContext.configure(conn).get_current_revision() == head
        tables = set(inspect(conn).get_table_names())
    assert {"hosts", "placements", "claims", "hugepage_pools", "hugepage_claims"} <= tables


def test_database_refuses_a_double_claim(store: Store) -> None:
    store.put_host(ComputeHostDescriptor.model_validate(host("h1")))
    commit(store, "p1", [config("p1/vm", [1, 2])])
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        conn.execute(
            insert(CLAIMS).values(placement_id="p1", host_id="h1", kind="pu", resource="1")
        )


def cached_host() -> ComputeHostDescriptor:
    """`host("h1")` with an L3 cache of 11 ways per NUMA node (Intel RDT CAT)."""
    data = host("h1")
    data["cache_allocation"] = {
        "classes": 4,
        "domains": [{"id": k, "numa_nodes": [k], "ways": 11, "way_kib": 2560} for k in (0, 1)],
    }
    return ComputeHostDescriptor.model_validate(data)


def test_database_refuses_a_cache_way_held_twice(store: Store) -> None:
    store.put_host(cached_host())
    commit(store, "p1", [config("p1/vm", [1, 2], ways=2)])
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        conn.execute(
            insert(CLAIMS).values(placement_id="p1", host_id="h1", kind="cache_way", resource="0/1")
        )
    assert store.audit() == []


def test_migration_0008_gives_live_placements_their_cache_way_rows(store: Store) -> None:
    store.put_host(cached_host())
    commit(store, "p1", [config("p1/vm", [1, 2], ways=3)])
    settings = alembic_config(store.engine.url.render_as_string(hide_password=False))
    with store.engine.begin() as conn:
        settings.attributes["connection"] = conn
        command.downgrade(settings, "0007")
        assert _cache_way_rows(conn) == []
    migrate(store.engine)
    with store.engine.connect() as conn:
        assert _cache_way_rows(conn) == [("p1", "0/0"), ("p1", "0/1"), ("p1", "0/2")]
    assert store.audit() == []


def _cache_way_rows(conn: Any) -> list[tuple[str, str]]:
    rows = conn.execute(
        select(CLAIMS.c.placement_id, CLAIMS.c.resource).where(CLAIMS.c.kind == "cache_way")
    )
    return sorted((str(p), str(r)) for p, r in rows)


def test_stale_snapshot_cannot_commit(store: Store) -> None:
    store.put_host(ComputeHostDescriptor.model_validate(host("h1")))
    old = store.snapshot()
    commit(store, "p1", [config("p1/vm", [1, 2])], old)
    with pytest.raises(StaleSnapshot):  # same PUs, computed on the old snapshot
        commit(store, "p2", [config("p2/vm", [1, 2])], old)
    with pytest.raises(StaleSnapshot):  # other PUs, but the host changed since the snapshot
        commit(store, "p3", [config("p3/vm", [3, 4])], old)
    commit(store, "p3", [config("p3/vm", [3, 4])])  # recomputed on a fresh snapshot
    assert store.get_placement("p2") is None
    assert store.audit() == []


def test_hugepage_counter_guards_capacity(store: Store) -> None:
    store.put_host(ComputeHostDescriptor.model_validate(host("h1", pages_1g=2)))
    commit(store, "p1", [config("p1/vm", [1], pages=2)])
    from nfvplace.claims import ClaimConflictError

    with pytest.raises(ClaimConflictError):
        commit(store, "p2", [config("p2/vm", [2], pages=1)])
    # a snapshot that lies (shows the pages free at the current generation): the database's
    # conditional counter UPDATE still refuses to go over capacity
    from nfvplace.store import Snapshot

    current = store.snapshot()
    lying = Snapshot(
        hosts={"h1": ComputeHostDescriptor.model_validate(host("h1", pages_1g=2))},
        generations=current.generations,
    )
    with pytest.raises(StaleSnapshot):
        commit(store, "p2", [config("p2/vm", [2], pages=1)], lying)
    assert store.release_placement("p1")
    commit(store, "p2", [config("p2/vm", [2], pages=2)])
    assert store.audit() == []


def test_release_is_idempotent_and_frees(store: Store) -> None:
    store.put_host(ComputeHostDescriptor.model_validate(host("h1")))
    reported = store.get_host("h1")
    assert reported is not None
    commit(store, "p1", [config("p1/vm", [1, 2], vf="0000:18:02.0")])
    assert store.release_placement("p1") is True
    assert store.release_placement("p1") is False
    assert store.release_placement("never") is False
    after = store.get_host("h1")
    assert after is not None
    assert after.availability == reported.availability
    assert after.generation == reported.generation + 2
    assert store.audit() == []


def test_put_host_reapplies_claims(store: Store) -> None:
    store.put_host(ComputeHostDescriptor.model_validate(host("h1")))
    commit(store, "p1", [config("p1/vm", [1, 2], vf="0000:18:02.1")])
    put = store.put_host(ComputeHostDescriptor.model_validate(host("h1", vfs=1)))
    assert [c["placement"] for c in put.conflicts] == ["p1"]
    assert "0000:18:02.1" in put.conflicts[0]["message"]
    assert put.generation == 3
    assert store.audit() == []


@pytest.mark.parametrize(
    ("same_keeps", "vfs", "generation", "changed"),
    [
        pytest.param(True, 2, 2, False, id="the same report kept: nothing written"),
        pytest.param(True, 1, 3, True, id="a changed report kept: written"),
        pytest.param(False, 2, 3, True, id="the same report not kept: written"),
    ],
)
def test_the_same_report_keeps_its_generation_when_asked(
    store: Store, same_keeps: bool, vfs: int, generation: int, changed: bool
) -> None:
    store.put_host(ComputeHostDescriptor.model_validate(host("h1", vfs=2)))
    commit(store, "p1", [config("p1/vm", [1, 2], vf="0000:18:02.1")])
    seen = store.changes_since(-1)
    put = store.put_host(
        ComputeHostDescriptor.model_validate(host("h1", vfs=vfs)), same_keeps=same_keeps
    )
    assert put.generation == generation
    assert not put.created
    assert ("h1" in store.changes_since(seen.seq).hosts) == changed
    assert [c["placement"] for c in put.conflicts] == (["p1"] if vfs == 1 else [])
    assert store.get_host("h1").generation == generation  # type: ignore[union-attr]
    assert store.audit() == []


def test_a_host_created_again_goes_on_from_its_last_generation(store: Store) -> None:
    """Readers keep hosts by (id, generation) (`store/parsed.py`, the Kubernetes door): a host
    deleted and created again with other counts must not come back at a generation it had."""
    from nfvplace.store.parsed import ParsedHosts

    hosts = ParsedHosts(store)
    assert store.put_host(ComputeHostDescriptor.model_validate(host("h1"))).generation == 1
    assert hosts.read(["h1"])["h1"][0] == 1
    assert store.delete_host("h1")
    again = store.put_host(ComputeHostDescriptor.model_validate(host("h1", vfs=1)))
    assert again.generation == 3  # deleted at 2
    generation, chd = hosts.read(["h1"])["h1"]
    assert generation == 3
    assert chd == ComputeHostDescriptor.model_validate(again.availability)
    assert store.put_host(ComputeHostDescriptor.model_validate(host("h2"))).generation == 1


def test_migrations_match_the_models(store: Store) -> None:
    from alembic.autogenerate import compare_metadata

    from nfvplace.store.tables import Base

    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_availability_streams_one_host_at_a_time(store: Store) -> None:
    for k in range(3):
        store.put_host(ComputeHostDescriptor.model_validate(host(f"h{k}")))
    stream = store.iter_availability(["h2", "h0", "h1", "gone"])
    first = next(stream)  # a generator: the other hosts are not parsed yet
    assert first[0] == "h0"
    rest = list(stream)
    assert [h for h, _g, _c in [first, *rest]] == ["h0", "h1", "h2"]
    whole = store.availability(["h0", "h1", "h2", "gone"])
    assert {h: (g, c) for h, g, c in [first, *rest]} == whole


def test_sqlite_hands_out_the_connection_given_back_last(tmp_path: object) -> None:
    """An SQLite connection keeps its page cache only while no other connection wrote: a thread
    that takes the pool's connections in turn reads its pages from the file again each time (about
    100 reads, 440 KiB, per placement of a worker). The pool is last in, first out."""
    opened = Store.open(f"sqlite:///{tmp_path}/lifo.db")
    try:
        with opened.engine.connect() as first, opened.engine.connect() as second:
            ids = [id(c.connection.driver_connection) for c in (first, second)]
        # `second` went back first, then `first`: first out is the one given back last
        with opened.engine.connect() as again:
            assert id(again.connection.driver_connection) == ids[0]
    finally:
        opened.close()


def test_migrations_0009_and_0010_keep_what_was_stored_and_commit_through_the_function(
    store: Store,
) -> None:
    """An existing database (at 0008, or at 0009's function of arrays) upgrades with nothing lost,
    and commits through the function from there on (on SQLite the migrations change nothing)."""
    store.put_host(ComputeHostDescriptor.model_validate(host("h1")))
    commit(store, "p1", [config("p1/vm", [1, 2], pages=1)])
    settings = alembic_config(store.engine.url.render_as_string(hide_password=False))
    postgres = store.engine.dialect.name == "postgresql"
    with store.engine.begin() as conn:
        settings.attributes["connection"] = conn
        command.downgrade(settings, "0009")
        assert _commit_function(conn) == ("bigint[]" if postgres else None)  # 0009: arrays
        command.downgrade(settings, "0008")
        assert _commit_function(conn) is None
    migrate(store.engine)
    with store.engine.connect() as conn:
        assert _commit_function(conn) == ("jsonb" if postgres else None)
    first = store.get_placement("p1")
    assert first is not None
    assert first.response == {"id": "p1"}
    commit(store, "p2", [config("p2/vm", [3, 4], pages=1)])
    with pytest.raises(StaleSnapshot):  # PU 2 is p1's: the guard holds across the upgrade
        commit(store, "p3", [config("p3/vm", [2], pages=1)], _lying(store))
    assert store.audit() == []


def _commit_function(conn: Any) -> str | None:
    """The type of the commit function's last argument (None: no such function)."""
    if conn.dialect.name != "postgresql":
        return None
    found = conn.exec_driver_sql(
        "SELECT pg_get_function_identity_arguments(oid) FROM pg_proc "
        "WHERE proname = 'nfvplace_commit_placement'"
    ).scalar_one_or_none()
    return None if found is None else str(found).rsplit(" ", 1)[-1]


def _lying(store: Store) -> Any:
    """A snapshot that shows h1 as reported, with nothing claimed, at its current generation."""
    from nfvplace.store import Snapshot

    return Snapshot(
        hosts={"h1": ComputeHostDescriptor.model_validate(host("h1"))},
        generations=store.snapshot().generations,
    )


def test_migration_0014_gives_assumed_pods_their_node(store: Store) -> None:
    """Pods assumed before 0014 get the node their document names, and are read by node."""
    now = utc_now()
    pods = AssumedPods(store.engine)
    for uid, node in (("u1", "worker-a"), ("u2", "worker-b")):
        pod = AssumedPod(uid, f"ns/{uid}", node, {"cpu": {0: 2}}, now, now + timedelta(hours=1), 1)
        pods.assume(node, now, lambda known, through, pod=pod: (None, pod, (1, {"cpu": 8})))
    settings = alembic_config(store.engine.url.render_as_string(hide_password=False))
    with store.engine.begin() as conn:
        settings.attributes["connection"] = conn
        command.downgrade(settings, "0013")
        assert "node" not in {c["name"] for c in inspect(conn).get_columns("k8s_assumed_pods")}
    migrate(store.engine)
    with store.engine.connect() as conn:
        rows = conn.execute(select(ASSUMED.c.uid, ASSUMED.c.node).order_by(ASSUMED.c.uid))
        assert [tuple(r) for r in rows] == [("u1", "worker-a"), ("u2", "worker-b")]
    assert [p.uid for p in pods.live(utc_now(), ["worker-b"])] == ["u2"]
    assert [p.uid for p in pods.live(utc_now(), uid="u1")] == ["u1"]
