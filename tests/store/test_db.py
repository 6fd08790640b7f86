"""The store's engines and connections (store/db.py): PostgreSQL's document columns, idle
connections tried before use, and a read alone in one round trip."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from protocol_trace import traced
from service_hosts import host
from sqlalchemy import text

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.store import Store, db, driver
from nfvplace.store.changes import CHANGES
from nfvplace.store.records import KEY_USED


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    opened.put_host(ComputeHostDescriptor.model_validate(host("h1")))
    yield opened
    opened.close()


def test_a_read_alone_gives_the_rows_and_leaves_no_transaction(store: Store) -> None:
    with store.engine.connect() as conn:
        raw = conn.connection.driver_connection
        rows = db.read_alone(conn, CHANGES, {"b_seq": -1})
        assert [r[0] for r in rows if r[0] is not None] == ["h1"]
        assert db.read_alone(conn, KEY_USED, {"b_key": "unused"}) == []
    if isinstance(raw, psycopg.Connection):  # given back to the pool as it was lent
        assert not raw.autocommit
        assert raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_a_read_alone_is_one_round_trip_on_postgres(postgres_url: str) -> None:
    """psycopg sent `BEGIN` first, and the pool a `ROLLBACK` when the connection came back."""
    store = Store.open(postgres_url)
    try:
        with store.engine.connect() as conn:
            raw = conn.connection.driver_connection
            with traced(raw) as trace:
                db.read_alone(conn, CHANGES, {"b_seq": -1})
                conn.close()  # back to the pool
        assert trace.round_trips() == 1, trace.text
    finally:
        store.close()


def test_postgres_keeps_documents_as_json_text(postgres_url: str) -> None:
    store = Store.open(postgres_url)
    try:
        with store.engine.connect() as conn:
            types = dict(
                conn.execute(
                    text(
                        "SELECT table_name || '.' || column_name, data_type "
                        "FROM information_schema.columns WHERE data_type LIKE 'json%'"
                    )
                ).all()
            )
            lz4 = conn.execute(
                text(
                    "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
                    "AND 'lz4' = ANY(enumvals)"
                )
            ).first()
            compression = conn.execute(
                text(
                    "SELECT attcompression FROM pg_attribute "
                    "WHERE attrelid = 'hosts'::regclass AND attname = 'available'"
                )
            ).scalar_one()
    finally:
        store.close()
    assert types == {
        "hosts.chd": "json",
        "hosts.available": "json",
        "placements.response": "json",
        "placements.configurations": "json",
        "placements.descriptor": "json",
        "k8s_assumed_pods.nodes": "json",  # the Kubernetes extender's (migration 0005)
        "k8s_node_views.free": "json",
        "k8s_node_views.unmatched": "json",  # an object kept until it matches (migration 0017)
        "k8s_departed_pods.takes": "json",  # a departure kept until shown (migration 0018)
    }
    assert compression == ("l" if lz4 else "\x00")


def test_an_idle_connection_the_server_dropped_is_replaced(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(postgres_url)
    try:
        store.ping()  # one connection, now idle in the pool
        name = store.engine.url.database
        with store.engine.connect() as conn:
            own = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        url = store.engine.url.set(drivername="postgresql", database="postgres")
        with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (own,))
        monkeypatch.setattr(db, "PING_IDLE_S", 0.0)  # idle long enough to be tried first
        store.ping()  # would raise "terminating connection" without the check on checkout
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT current_database()")).scalar_one() == name
            assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() != own
    finally:
        store.close()


class _Record:
    def __init__(self, idle_for: float | None) -> None:
        self.info = {} if idle_for is None else {"idle_since": time.monotonic() - idle_for}


class _Connection:
    def __init__(self) -> None:
        self.statements: list[str] = []

    def cursor(self) -> _Connection:
        return self

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def execute(self, statement: str) -> None:
        self.statements.append(statement)

    def rollback(self) -> None:
        self.statements.append("ROLLBACK")


@pytest.mark.parametrize(
    ("idle_for", "pinged"),
    [(None, False), (0.0, False), (db.PING_IDLE_S / 2, False), (db.PING_IDLE_S + 1, True)],
)
def test_only_connections_idle_long_enough_are_pinged(idle_for: float | None, pinged: bool) -> None:
    """A busy pool's connections go straight to work: a ping is a round trip per checkout."""
    connection = _Connection()
    db._ping_if_idle(connection, _Record(idle_for), None)
    assert connection.statements == (["SELECT 1", "ROLLBACK"] if pinged else [])


def test_a_statement_run_on_sqlites_driver_is_what_sqlalchemy_would_have_run(
    tmp_path: Path,
) -> None:
    """SQLite's commit statements run on the driver's cursor: the same stored values (a datetime
    through SQLAlchemy's own bind processor), the rows changed, and SQLAlchemy's errors."""
    import datetime as dt

    from sqlalchemy import Column, DateTime, Integer, MetaData, Table, bindparam, insert, update
    from sqlalchemy.exc import IntegrityError

    table = Table("t", MetaData(), Column("id", Integer, primary_key=True), Column("at", DateTime))
    engine = db.make_engine(f"sqlite:///{tmp_path / 'd.db'}")
    when = dt.datetime(2026, 11, 28, 19, 30, 1, 123456)
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(insert(table), {"id": 1, "at": when})
        assert (
            db.run_on_driver(conn, insert(table), [{"id": 2, "at": when}, {"id": 3, "at": None}])
            == 2
        )
        stamped = update(table).where(table.c.id == bindparam("b_id")).values(at=bindparam("b_at"))
        assert db.run_on_driver(conn, stamped, [{"b_id": 3, "b_at": when}]) == 1
        assert db.run_on_driver(conn, stamped, [{"b_id": 9, "b_at": when}]) == 0
        stored = conn.execute(text("SELECT id, at FROM t ORDER BY id")).all()
        assert len({row[1] for row in stored}) == 1  # the same text SQLAlchemy wrote for row 1
        with pytest.raises(IntegrityError):
            db.run_on_driver(conn, insert(table), [{"id": 1, "at": when}])


def test_sqlite_checkpoints_its_log_when_asked_and_only_past_a_bound_by_itself(
    sqlite_url: str,
) -> None:
    """The service's workers checkpoint SQLite's write-ahead log between requests; SQLite's own
    checkpoint in a commit only bounds the log."""
    store = Store.open(sqlite_url)
    try:
        with store.engine.connect() as conn:
            raw = conn.connection.driver_connection
            pages = raw.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        assert pages == db.SQLITE_AUTOCHECKPOINT_PAGES
        store.put_host(ComputeHostDescriptor.model_validate(host("h1")))
        log, copied = store.checkpoint() or (0, -1)
        assert log > 0
        assert copied == log  # no reader held any page back
    finally:
        store.close()


def test_postgres_checkpoints_are_its_own(postgres_url: str) -> None:
    store = Store.open(postgres_url)
    try:
        assert store.checkpoint() is None
    finally:
        store.close()


def test_the_drivers_parameters_are_sqlalchemys_worked_out_once_per_statement(
    tmp_path: Path,
) -> None:
    """A statement run on SQLite's driver takes its parameters as SQLAlchemy's `construct_params`
    and bind processors make them (a row's values, the fixed values of literal binds), from a
    preparation made once per statement; a required value missing is SQLAlchemy's error."""
    import datetime as dt

    from sqlalchemy.exc import InvalidRequestError

    from nfvplace.store.changes import BUMP_COUNTER, SWAP
    from nfvplace.store.records import INSERT_PLACEMENT, RAISE_POOL

    when = dt.datetime(2026, 11, 28, 19, 30, 1, 123456)
    rows = [
        (BUMP_COUNTER, {}),
        (SWAP, {"b_id": "h", "b_seen": 1, "b_next": 2, "b_now": when}),
        (RAISE_POOL, {"b_host": "h", "b_node": 0, "b_size": 1048576, "b_count": 2}),
        (
            INSERT_PLACEMENT,
            {
                "id": "pl-1",
                "idempotency_key": None,
                "request_hash": "",
                "response": {"id": "pl-1"},
                "configurations": [],
                "name": "vm",
                "descriptor": None,
                "created_at": when,
                "released_at": None,
            },
        ),
    ]
    dialect = db.make_engine(f"sqlite:///{tmp_path / 'd.db'}").dialect  # its JSON serialiser
    for statement, row in rows:
        compiled = statement.compile(dialect=dialect)
        named = compiled.construct_params(row)
        processors = compiled._bind_processors
        expected = [
            processors[n](named[n])
            if callable(processors.get(n)) and named[n] is not None
            else named[n]
            for n in compiled.positiontup or ()
        ]
        prepared = driver.prepared_for(statement, dialect)
        assert prepared.sql == compiled.string
        assert prepared.parameters(row) == expected
        assert driver.prepared_for(statement, dialect) is prepared
    with pytest.raises(InvalidRequestError):
        driver.prepared_for(SWAP, dialect).parameters({"b_id": "h"})
    with pytest.raises(InvalidRequestError):  # read in C where all are given: the same error
        driver.prepared_for(RAISE_POOL, dialect).parameters({"b_host": "h", "b_node": 0})


def test_rows_of_plain_values_are_read_in_one_call(tmp_path: Path) -> None:
    """A statement whose values are all the row's own, as they are (no bind processor, no fixed
    value), reads them in one call (`itemgetter`), giving what the value-by-value reading gives;
    the others read value by value."""
    from nfvplace.store.changes import BUMP_COUNTER, SWAP
    from nfvplace.store.records import INSERT_CLAIM, INSERT_PLACEMENT, RAISE_POOL

    dialect = db.make_engine(f"sqlite:///{tmp_path / 'd.db'}").dialect
    claim = {"placement_id": "pl-1", "host_id": "h", "kind": "pu", "resource": "3", "x": 1}
    plain = driver.prepared_for(INSERT_CLAIM, dialect)
    assert plain.plain is not None
    assert plain.parameters(claim) == ["pl-1", "h", "pu", "3"]
    pool = {"b_host": "h", "b_node": 1, "b_size": 2048, "b_count": 5}
    assert driver.prepared_for(RAISE_POOL, dialect).parameters(pool) == [5, "h", 1, 2048, 5]
    for statement in (BUMP_COUNTER, SWAP, INSERT_PLACEMENT):  # fixed values, processors
        assert driver.prepared_for(statement, dialect).plain is None


def test_sqlite_keeps_a_write_ahead_log_synced_at_checkpoints(sqlite_url: str) -> None:
    """The durability SQLite runs with (docs/service.md, "Durability"): a write-ahead log, synced
    at each checkpoint rather than at each commit (`synchronous=NORMAL`), foreign keys on."""
    store = Store.open(sqlite_url)
    try:
        with store.engine.connect() as conn:
            raw = conn.connection.driver_connection
            assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert raw.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
            assert raw.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    finally:
        store.close()


KILLED_AFTER_COMMIT = """
import os, signal, sys
sys.path[:0] = {paths!r}
from service_hosts import host
from stored import commit, config
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.store import Store
store = Store.open({url!r})
store.put_host(ComputeHostDescriptor.model_validate(host("h1")))
commit(store, "pl-kept", [config("pl-kept/vm", [1])])
os.kill(os.getpid(), signal.SIGKILL)  # no close, no checkpoint: the commit is in the log alone
"""


def test_a_commit_survives_its_process_killed_right_after(sqlite_url: str) -> None:
    """A commit that returned is in the write-ahead log: a process killed at once (no close, no
    checkpoint) loses none of it, and the next process reads the same rows."""
    import subprocess
    import sys

    tests = str(Path(__file__).resolve().parents[1])
    code = KILLED_AFTER_COMMIT.format(paths=[tests, *sys.path], url=sqlite_url)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == -9, done.stderr[-2000:]
    store = Store.open(sqlite_url)
    try:
        placement = store.get_placement("pl-kept")
        assert placement is not None
        assert [c["instance"] for c in placement.configurations] == ["pl-kept/vm"]
        assert store.generations(["h1"]) == {"h1": 2}
    finally:
        store.close()
