"""Fixtures every test folder may use: the repository's root, and the databases (SQLite, and
PostgreSQL: $NFVPLACE_TEST_POSTGRES_URL or a throwaway cluster) of the store and service tests."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pg_cluster import Cluster, ClusterError, throwaway, throwaway_cluster
from sqlalchemy.engine import make_url

PG_ENV = "NFVPLACE_TEST_POSTGRES_URL"

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture
def root() -> Path:
    return ROOT


# --- databases -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """URL of a PostgreSQL server we may create databases on: $NFVPLACE_TEST_POSTGRES_URL, else a
    throwaway cluster started here (initdb + pg_ctl, unix socket in a temporary folder)."""
    given = os.environ.get(PG_ENV)
    if given:
        yield given
        return
    try:
        with throwaway_cluster() as url:
            yield url
    except ClusterError as exc:
        pytest.fail(
            f"cannot start a PostgreSQL cluster ({exc}); install Debian's postgresql or set "
            f"{PG_ENV}=postgresql://user@host:port/db (a user that may CREATE DATABASE)"
        )


@pytest.fixture
def durable_postgres() -> Iterator[Cluster]:
    """A cluster of this test's own, with PostgreSQL's durable defaults (fsync and synchronous
    commit on), that the test may stop and restart: the fault tests run on it."""
    try:
        with throwaway(durable=True) as cluster:
            yield cluster
    except ClusterError as exc:
        pytest.fail(f"cannot start a PostgreSQL cluster ({exc}); install Debian's postgresql")


@pytest.fixture
def durable_db(durable_postgres: Cluster) -> str:
    """A database on `durable_postgres` (which the test may stop and restart)."""
    return fresh_database(durable_postgres.url)


def fresh_database(server: str) -> str:
    """A new, empty database on the server at `server` (its URL)."""
    name = f"nfvplace_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(**_admin_conninfo(server)) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(server).set(database=name, drivername="postgresql+psycopg")
    return url.render_as_string(hide_password=False)


def _admin_conninfo(url: str) -> dict[str, Any]:
    parsed = make_url(url)
    info: dict[str, Any] = {"dbname": parsed.database or "postgres", "autocommit": True}
    for key in ("host", "port", "username", "password"):
        value = getattr(parsed, key)
        if value:
            info["user" if key == "username" else key] = value
    for key, value in parsed.query.items():
        info[key] = value
    return info


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A fresh, empty database on the PostgreSQL server (dropped afterwards)."""
    url = fresh_database(postgres_server)
    yield url
    with psycopg.connect(**_admin_conninfo(postgres_server)) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)')


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'nfvplace.db'}"


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest) -> str:
    """Each test using this runs against SQLite and against PostgreSQL."""
    return str(request.getfixturevalue(f"{request.param}_url"))
