"""Fixtures of the service tests: the placer (chosen in ONE fixture), an in-process app, and real
`nfvplace serve` processes on free ports (the databases are in tests/conftest.py)."""

from __future__ import annotations

import signal
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():  # starlette's note about httpx2; the client works as it is
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient
from kube_api import KubeApi
from service_support import TOKENS, Server, auth

from nfvplace.service.app import create_app, import_placer
from nfvplace.service.live import Placer
from nfvplace.service.settings import Settings

# --- the placer: the ONE place that chooses it -------------------------------------------------


@pytest.fixture(scope="session")
def placer_path() -> str:
    """`module:function` of the placement function every service test uses (in-process and in
    `nfvplace serve` subprocesses): the real engine."""
    return "nfvplace.placement:place"


@pytest.fixture(scope="session")
def placer(placer_path: str) -> Placer:
    return import_placer(placer_path)


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
