"""Fixtures of the service tests: the placer (chosen in ONE fixture), SQLite and PostgreSQL
databases, an in-process app, and real `nfvplace serve` processes on free ports."""

from __future__ import annotations

import os
import signal
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

with warnings.catch_warnings():  # starlette's note about httpx2; the client works as it is
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient
from kube_api import KubeApi
from pg_cluster import Cluster, ClusterError, throwaway, throwaway_cluster
from service_support import TOKENS, Server, auth
from sqlalchemy.engine import make_url

from nfvplace.service.app import create_app, import_placer
from nfvplace.service.placing import Placer
from nfvplace.service.settings import Settings

PG_ENV = "NFVPLACE_TEST_POSTGRES_URL"


# --- the placer: the ONE place that chooses it -------------------------------------------------


@pytest.fixture(scope="session")
def placer_path() -> str:
    """`module:function` of the placement function every service test uses (in-process and in
    `nfvplace serve` subprocesses): the real engine."""
    return "nfvplace.placement:place"


@pytest.fixture(scope="session")
def placer(placer_path: str) -> Placer:
    return import_placer(placer_path)


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


# --- in-process app -----------------------------------------------------------------------------


@pytest.fixture
def app_factory(placer: Placer) -> Callable[..., Any]:
    def make(db: str, **overrides: Any) -> Any:
        settings = Settings(db_url=db, tokens=TOKENS, **overrides)
        return create_app(settings, placer=placer)

    return make


@pytest.fixture
def client(app_factory: Callable[..., Any], db_url: str) -> Iterator[TestClient]:
    """The API over a fresh database (SQLite, then PostgreSQL), as the admin role."""
    with TestClient(app_factory(db_url), headers=auth("admin")) as c:
        yield c


@pytest.fixture
def sqlite_client(app_factory: Callable[..., Any], sqlite_url: str) -> Iterator[TestClient]:
    with TestClient(app_factory(sqlite_url), headers=auth("admin")) as c:
        yield c


# --- real servers ----------------------------------------------------------------------------


@pytest.fixture
def serve(placer_path: str, tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start `nfvplace serve` processes; all are killed at the end of the test."""
    started: list[Server] = []

    def start(db: str, workers: int = 1, port: int | None = None, **options: str | None) -> Server:
        server = Server(
            db=db, workers=workers, placer_path=placer_path, folder=tmp_path, options=options
        )
        if port is not None:
            server.port = port
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.kill(signal.SIGTERM)


@pytest.fixture
def api() -> Iterator[KubeApi]:
    """A small Kubernetes API server on 127.0.0.1 (kube_api.py) for the door's watch and bind."""
    server = KubeApi().start()
    yield server
    server.stop()
