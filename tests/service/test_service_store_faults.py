"""Database faults as the API answers them: 503 with Retry-After and a stable code, one log line per
episode, /readyz probing a write; and the mapping of the drivers' errors onto those codes."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from service_hosts import host, vm
from service_support import auth
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from nfvplace import errors
from nfvplace.service import faults as service_faults
from nfvplace.store import db
from nfvplace.store.faults import CommitOutcomeUnknownError, classify

VM = vm(vcpus=2, pages=1, sriov=1)


def sqlite_error(name: str, message: str) -> sqlite3.Error:
    """An error as sqlite3 raises it, with the SQLite error name it carries."""
    error = sqlite3.OperationalError(message)
    error.sqlite_errorname = name
    return error


def pg_error(sqlstate: str | None, message: str) -> psycopg.Error:
    """An error as psycopg raises it for this SQLSTATE (None: the connection itself failed)."""
    cls = psycopg.OperationalError if sqlstate is None else psycopg.errors.lookup(sqlstate)
    return cls(message)


@pytest.mark.parametrize(
    ("driver_error", "code"),
    [
        (sqlite_error("SQLITE_FULL", "database or disk is full"), errors.STORE_FULL),
        (sqlite_error("SQLITE_BUSY", "database is locked"), errors.STORE_BUSY),
        (sqlite_error("SQLITE_READONLY", "attempt to write a readonly db"), errors.STORE_READ_ONLY),
        (sqlite_error("SQLITE_IOERR_WRITE", "disk I/O error"), errors.STORE_UNAVAILABLE),
        (sqlite_error("SQLITE_CANTOPEN", "unable to open database file"), errors.STORE_UNAVAILABLE),
        (pg_error(None, "connection refused"), errors.STORE_UNAVAILABLE),
        (pg_error("57P01", "terminating connection (admin)"), errors.STORE_UNAVAILABLE),
        (pg_error("57P03", "the database system is starting up"), errors.STORE_UNAVAILABLE),
        (pg_error("08006", "connection failure"), errors.STORE_UNAVAILABLE),
        (pg_error("53100", "could not extend file: No space left"), errors.STORE_FULL),
        (pg_error("25006", "cannot execute UPDATE in a read-only txn"), errors.STORE_READ_ONLY),
        (pg_error("40P01", "deadlock detected"), errors.STORE_BUSY),
        (pg_error("53300", "too many connections"), errors.STORE_BUSY),
        (pg_error("42P01", "relation does not exist"), None),  # a bug, not a fault
    ],
    ids=lambda v: getattr(v, "sqlstate", None) or getattr(v, "sqlite_errorname", v),
)
def test_driver_errors_map_to_stable_codes(driver_error: Exception, code: str | None) -> None:
    wrapped = OperationalError("UPDATE hosts ...", {}, driver_error)
    fault = classify(wrapped)
    assert (fault.code if fault else None) == code
    assert classify(driver_error) == fault  # raw, as the pipelined steps meet it
    if fault is not None:
        assert errors.http_status(fault.code) == 503
        assert fault.retry_after_s >= 1
        assert str(driver_error).split()[0] in fault.detail


def test_what_is_not_a_fault_stays_a_bug() -> None:
    refused = IntegrityError("INSERT ...", {}, sqlite3.IntegrityError("UNIQUE failed"))
    assert classify(refused) is None
    assert classify(KeyError("h1")) is None
    assert classify(PoolTimeout("QueuePool limit reached")).code == errors.STORE_BUSY  # type: ignore[union-attr]
    unknown = CommitOutcomeUnknownError(OperationalError("COMMIT", {}, pg_error(None, "lost")))
    assert classify(unknown).code == errors.STORE_OUTCOME_UNKNOWN  # type: ignore[union-attr]


def test_a_database_locked_past_the_timeout_is_503_busy(
    app_factory: Callable[..., Any],
    sqlite_url: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(db, "SQLITE_BUSY_TIMEOUT_MS", 200)
    path = sqlite_url.removeprefix("sqlite:///")
    with TestClient(app_factory(sqlite_url), headers=auth("admin")) as client:
        assert client.put("/v1/hosts/h1", json=host("h1")).status_code == 201
        assert client.get("/readyz").status_code == 200
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        monkeypatch.setattr(service_faults, "PROBE_EVERY_S", 0.0)
        monkeypatch.setattr(service_faults, "QUIET_S", 0.0)
        with caplog.at_level(logging.WARNING, logger="nfvplace.service"):
            answers = [client.post("/v1/placements", json={"vm": VM}) for _ in range(3)]
            # a changed report: an unchanged one writes nothing (docs/service.md, Host updates)
            answers.append(client.put("/v1/hosts/h1", json=host("h1", pages_1g=8)))
            ready = client.get("/readyz")
            holder.rollback()
            placed = client.post("/v1/placements", json={"vm": VM})
    for answer in [*answers, ready]:
        assert answer.status_code == 503, answer.text
        assert answer.json()["code"] == errors.STORE_BUSY
        assert answer.headers["retry-after"] == "1"
        assert answer.headers["content-type"] == "application/problem+json"
    assert placed.status_code == 201, placed.text
    lines = [r.getMessage() for r in caplog.records if r.name == "nfvplace.service"]
    assert lines == ["database fault", "database serves again"]  # one episode, two lines
    assert not any(r.exc_info for r in caplog.records)  # no traceback per request
    served = caplog.records[-1]
    assert served.answered_503 == 5  # type: ignore[attr-defined]


def test_a_read_only_database_is_503_read_only_and_not_ready(
    app_factory: Callable[..., Any], sqlite_url: str, tmp_path: Path
) -> None:
    with TestClient(app_factory(sqlite_url), headers=auth("admin")) as client:
        assert client.put("/v1/hosts/h1", json=host("h1")).status_code == 201
    path = tmp_path / "nfvplace.db"
    read_only = f"sqlite:///file:{path}?mode=ro&uri=true"
    with TestClient(app_factory(read_only, migrate=False), headers=auth("admin")) as client:
        assert client.get("/v1/hosts/h1").status_code == 200  # reads still work
        for answer in (
            client.get("/readyz"),
            client.post("/v1/placements", json={"vm": VM}),
            client.put("/v1/hosts/h1", json=host("h1", pages_1g=8)),  # a changed report
        ):
            assert answer.status_code == 503, answer.text
            assert answer.json()["code"] == errors.STORE_READ_ONLY
            assert answer.headers["retry-after"] == "10"


def test_a_bug_is_500_with_its_traceback_once(
    sqlite_client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = sqlite_client.app.state.store  # type: ignore[attr-defined]

    def broken(*_args: object, **_kwargs: object) -> None:
        raise KeyError("host-00520")

    monkeypatch.setattr(store, "list_hosts", broken)
    with caplog.at_level(logging.ERROR, logger="nfvplace.service"):
        answer = sqlite_client.get("/v1/hosts")
        again = sqlite_client.get("/healthz")
    assert answer.status_code == 500
    assert answer.json()["code"] == errors.SERVICE_INTERNAL
    assert again.status_code == 200
    [record] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert record.exc_info is not None
