"""Database engines and migrations: SQLite by default, PostgreSQL (psycopg 3) for shared use."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import platformdirs
from alembic import command
from alembic.config import Config
from psycopg.pq import TransactionStatus
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, DisconnectionError
from sqlalchemy.sql import Executable

from .. import errors
from ..errors import NfvplaceError
from .driver import compiled_for, on_raw
from .faults import CommitOutcomeUnknownError, is_disconnect

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000
# SQLite checkpoints its write-ahead log in the commit that takes it past this many pages; the
# service's workers checkpoint it themselves between requests (`checkpoint`), so this only bounds
# the log (about 40 MiB) if they do not
SQLITE_AUTOCHECKPOINT_PAGES = 10_000
_IDLE = TransactionStatus.IDLE
PING_IDLE_S = 1.0


def default_url() -> str:
    """`sqlite:///<user data dir>/nfvplace/nfvplace.db` (the folder is created)."""
    folder = Path(platformdirs.user_data_dir("nfvplace", appauthor=False))
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'nfvplace.db'}"


def normalise_url(url: str) -> str:
    """Accept `postgresql://` and `postgres://` as PostgreSQL through psycopg 3."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def check_url(url: str) -> str:
    """`url` normalised (`normalise_url`) if nfvplace runs on it: SQLite or PostgreSQL through
    psycopg 3; else NfvplaceError `nfvplace.store.unsupported` naming what it does run on."""
    normal = normalise_url(url)
    hint = "use sqlite:///path/to/nfvplace.db or postgresql://user@host/dbname"
    try:
        parsed = make_url(normal)
    except (ArgumentError, ValueError):
        raise NfvplaceError(
            errors.STORE_UNSUPPORTED,
            # not echoed: what cannot be parsed cannot have its password hidden
            f"--db is not a database URL (scheme://user@host:port/dbname); {hint}",
        ) from None
    if parsed.drivername not in ("sqlite", "sqlite+pysqlite", "postgresql+psycopg"):
        raise NfvplaceError(
            errors.STORE_UNSUPPORTED,
            f"--db {parsed.render_as_string(hide_password=True)!r}: nfvplace does not run on "
            f"{parsed.drivername}; {hint} (PostgreSQL through psycopg 3)",
        )
    return normal


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA wal_autocheckpoint={SQLITE_AUTOCHECKPOINT_PAGES}")
    cursor.close()


class JsonText(str):
    """A JSON document already serialised (pydantic's `model_dump_json`, in Rust, is several times
    quicker than `json.dumps` of a `model_dump`): the JSON columns store it as it is."""

    __slots__ = ()


def serialise_json(value: Any) -> str:
    """The engines' JSON serialiser: `JsonText` as it is, anything else with `json.dumps`."""
    return value if isinstance(value, JsonText) else json.dumps(value)


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite files get WAL, a busy timeout and foreign keys."""
    url = check_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = sqlite_path(parsed.database)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
            json_serializer=serialise_json,
            # the connection given back last is taken first: an SQLite connection keeps its page
            # cache only while no other connection wrote, so a worker's placing thread, taking
            # the pool's connections in turn, re-read about 100 pages (440 KiB) per placement
            pool_use_lifo=True,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_engine(
        url,
        pool_size=8,
        max_overflow=8,
        json_serializer=serialise_json,
        # no automatic preparation: psycopg prepares a statement after 5 runs and sends
        # `DEALLOCATE ALL` at each rollback (the pool's, of every read in a transaction), so in
        # steady state it rarely has one prepared; the commit's statements keep their plans in
        # the server's function
        connect_args={"prepare_threshold": None},
        # the connection given back last is taken first, so a worker's placing thread keeps
        # talking to the same backend, its caches warm (docs/benchmarks.md, "Settings")
        pool_use_lifo=True,
    )
    event.listen(engine, "checkin", _checked_in)
    event.listen(engine, "checkout", _ping_if_idle)
    return engine


def _checked_in(_dbapi_connection: Any, record: Any) -> None:
    record.info["idle_since"] = time.monotonic()


def _ping_if_idle(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
    """A connection idle for more than `PING_IDLE_S` is tried before use; a dead one (the server
    restarted, a firewall dropped it) is replaced. Under load connections are never idle that
    long, so requests do not pay a round trip for the ping (SQLAlchemy's `pool_pre_ping` pings on
    every checkout: two extra round trips per placement)."""
    since = record.info.get("idle_since")
    if since is None or time.monotonic() - since < PING_IDLE_S:
        return
    try:
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        dbapi_connection.rollback()
    except Exception as exc:  # any failure: the pool opens a new connection instead
        raise DisconnectionError(str(exc)) from exc


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", normalise_url(url).replace("%", "%%"))
    return config


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision (idempotent)."""
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":  # replicas starting together take turns
            connection.execute(text("SELECT pg_advisory_xact_lock(7081146273)"))
        config = alembic_config(engine.url.render_as_string(hide_password=False))
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def checkpoint(engine: Engine) -> tuple[int, int] | None:
    """SQLite: copy the write-ahead log's pages into the database file as far as no reader needs
    them, without waiting for anyone (`PASSIVE`); the log's pages and those copied. A page written
    by many commits since the last checkpoint is copied once: with SQLite's own checkpoint every
    1,000 pages, a commit paid for one every forty or so placements on the mix (0.1-0.15 ms a
    placement, docs/benchmarks.md). PostgreSQL (None): its own business."""
    if engine.dialect.name != "sqlite":
        return None
    with engine.connect() as conn:
        raw: Any = conn.connection.driver_connection
        _busy, pages, copied = raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(pages), int(copied)


def ping(engine: Engine) -> None:
    """Raises if the database cannot be reached."""
    with engine.connect() as connection:
        connection.execute(text("SELECT 1"))


@contextlib.contextmanager
def transaction(engine: Engine) -> Iterator[Connection]:
    """`engine.begin()`, except that a PostgreSQL connection lost during `COMMIT` raises
    `CommitOutcomeUnknownError`: the server may have stored the transaction before the connection
    broke, so the caller must not report it as not done. (A connection lost before `COMMIT` rolls
    the transaction back on the server; SQLite commits in process, so its outcome is known.)"""
    with engine.connect() as conn:
        conn.begin()
        try:
            yield conn
        except BaseException as exc:
            if is_disconnect(exc):  # not given back to the pool to be reset (and fail again)
                forget_connections(conn, exc)
            with contextlib.suppress(DBAPIError):  # the connection may be the thing that broke
                conn.rollback()
            raise
        try:
            conn.commit()
        except DBAPIError as exc:
            if conn.dialect.name == "postgresql" and is_disconnect(exc):
                raise CommitOutcomeUnknownError(exc) from exc
            raise


def read_alone(conn: Connection, statement: Executable, row: Mapping[str, Any]) -> list[Any]:
    """The rows of one query that needs no transaction (a read every request makes, such as the
    change feed). On PostgreSQL, on a connection that has not begun a transaction, it runs in
    autocommit: one round trip, where psycopg sent `BEGIN` first and the pool a `ROLLBACK` when
    the connection came back; and on the driver's cursor, whose cost is the query's (SQLAlchemy's
    execution and result machinery cost the workers 0.4-0.7 ms per placement for the change feed).
    A single statement reads one snapshot anyway."""
    raw: Any = conn.connection.driver_connection
    if conn.dialect.name == "sqlite":
        return cast(list[Any], _on_driver(conn, statement, [row], read=True))
    if raw.info.transaction_status != _IDLE:
        return list(conn.execute(statement, row).all())
    compiled = compiled_for(statement, conn.dialect)
    raw.autocommit = True
    try:
        return list(raw.execute(compiled.string, compiled.construct_params(row)))
    except conn.dialect.loaded_dbapi.Error as exc:
        if raw.broken or raw.closed:
            forget_connections(conn, exc)
        raise DBAPIError.instance(None, None, exc, conn.dialect.loaded_dbapi.Error) from exc
    finally:
        if not (raw.broken or raw.closed):
            raw.autocommit = False


def run_on_driver(conn: Connection, statement: Executable, rows: list[Mapping[str, Any]]) -> int:
    """SQLite: `statement` (a module constant) run once per row on the driver's own cursor; the
    rows it changed. Through `Connection.execute` SQLAlchemy's execution machinery cost a commit's
    statements about 0.3 ms together and the feed's read 0.1 ms, some 7 % of a placement's server
    CPU (docs/benchmarks.md)."""
    return cast(int, _on_driver(conn, statement, rows, read=False))


def _on_driver(
    conn: Connection, statement: Executable, rows: list[Mapping[str, Any]], *, read: bool
) -> Any:
    """`statement` compiled once, its parameters made by SQLAlchemy's bind processors, run on the
    driver's cursor: the rows read (the driver's tuples) or changed. Errors are SQLAlchemy's."""
    return on_raw(conn.connection.driver_connection, conn.dialect, statement, rows, read=read)


@contextlib.contextmanager
def lent(engine: Engine, through: Connection | None) -> Iterator[Connection]:
    """`through` as it is (the caller's, in whatever transaction it has), else a connection of
    the pool for the body."""
    if through is not None:
        yield through
        return
    with engine.connect() as conn:
        yield conn


@contextlib.contextmanager
def lock_wait(conn: Connection, timeout_s: float | None) -> Iterator[None]:
    """SQLite, with `timeout_s`: a write lock another connection holds fails the statement that
    needs it (SQLITE_BUSY) after at most `timeout_s`, not after the busy timeout. PostgreSQL (or
    None): as it is."""
    if timeout_s is None or conn.dialect.name != "sqlite":
        yield
        return
    raw: Any = conn.connection.driver_connection
    raw.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
    try:
        yield
    finally:
        try:
            raw.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        except Exception:  # never give the pool a connection that would not wait
            conn.invalidate()


def forget_connections(conn: Connection, exc: BaseException) -> None:
    """After an error that means the server went away: drop this connection, and have the pool
    replace every connection opened before now at its next checkout (as SQLAlchemy does for the
    errors it sees itself), so that requests after the database's return do not each find one
    more dead connection."""
    if conn.invalidated:
        return
    wrapper = conn.connection
    conn.invalidate(exc)
    conn.engine.pool._invalidate(wrapper, exc)  # SQLAlchemy's own step for a disconnect


def sqlite_path(database: str | None) -> Path | None:
    """The file of an SQLite URL's database (also given as a `file:` URI), None in memory."""
    if not database or database == ":memory:":
        return None
    return Path(database.removeprefix("file:").partition("?")[0])


def free_bytes(engine: Engine) -> int | None:
    """Free space on the disk of an SQLite file (None: not a file, or PostgreSQL)."""
    path = sqlite_path(engine.url.database) if engine.dialect.name == "sqlite" else None
    if path is None:
        return None
    try:
        stat = os.statvfs(path.parent)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize
