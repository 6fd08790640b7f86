"""Database engines and migrations: SQLite by default, PostgreSQL (psycopg 3) for shared use."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import platformdirs
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000
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


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
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
    url = normalise_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
            json_serializer=serialise_json,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_engine(url, pool_size=8, max_overflow=8, json_serializer=serialise_json)
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


def ping(engine: Engine) -> None:
    """Raises if the database cannot be reached."""
    with engine.connect() as connection:
        connection.execute(text("SELECT 1"))
