"""Transient database faults, told apart from bugs: what the store raises when the database cannot
serve (unreachable, connection lost, disk full, locked past the timeout, read-only), with the stable
code and the wait a client should give it before trying again.

The drivers say what happened in their own terms (psycopg's SQLSTATE, sqlite3's error names);
`classify` maps them, however deep SQLAlchemy wrapped them, onto a few codes. Anything it does not
know (a constraint refused a row, a syntax error) is not a fault of the database but of the code,
and stays an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import exc as sa

from .. import errors

# psycopg: SQLSTATE classes and codes of a server that cannot serve now
_PG_UNAVAILABLE_CLASSES = ("08", "57", "58")  # connection, operator intervention, system error
_PG_FULL = {"53100"}  # disk_full
_PG_BUSY = {"40001", "40P01", "55P03", "57014", "53300", "53200"}
_PG_READ_ONLY = {"25006"}
# sqlite3: error names (sqlite3.Error.sqlite_errorname, Python >= 3.11)
_SQLITE_FULL = ("SQLITE_FULL",)
_SQLITE_BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED")
_SQLITE_READ_ONLY = ("SQLITE_READONLY",)
_SQLITE_UNAVAILABLE = ("SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_PROTOCOL", "SQLITE_NOMEM")
LOW_DISK_BYTES = 1024 * 1024  # an I/O error with less free than this is a full disk


@dataclass(frozen=True)
class StoreFault:
    """A database fault a client can wait out: its code, a one-line reason and the wait."""

    code: str
    reason: str
    retry_after_s: int

    @property
    def detail(self) -> str:
        return {
            errors.STORE_UNAVAILABLE: "the database is unavailable",
            errors.STORE_BUSY: "the database is busy",
            errors.STORE_FULL: "the database's disk is full",
            errors.STORE_READ_ONLY: "the database accepts no writes",
            errors.STORE_OUTCOME_UNKNOWN: "the database connection was lost while committing",
        }[self.code] + f" ({self.reason})"


class StoreFaultError(Exception):
    """A fault the store found itself (e.g. too little disk left to accept writes)."""

    def __init__(self, fault: StoreFault) -> None:
        super().__init__(fault.detail)
        self.fault = fault


class CommitOutcomeUnknownError(Exception):
    """The connection broke while COMMIT was under way: the transaction may or may not have been
    stored. The caller must read before it assumes either (an Idempotency-Key replay does)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"commit outcome unknown: {_one_line(cause)}")
        self.cause = cause
        self.extra: dict[str, str] = {}  # what the caller adds to the answer (the placement id)


def _one_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _driver_error(exc: BaseException) -> BaseException:
    """The driver's own exception under SQLAlchemy's wrapper (or the chain of causes)."""
    seen: BaseException | None = exc
    while seen is not None:
        orig = getattr(seen, "orig", None)
        if isinstance(orig, BaseException):
            return orig
        if type(seen).__module__.startswith(("psycopg", "sqlite3")):
            return seen
        seen = seen.__cause__
    return exc


def classify(
    exc: BaseException, free_bytes: Callable[[], int | None] | None = None
) -> StoreFault | None:
    """The transient fault `exc` is, or None when it is not one (a bug, or not the database's).

    `free_bytes` tells the free space of an SQLite file's disk: an I/O error with almost none left
    is a full disk."""
    if isinstance(exc, StoreFaultError):
        return exc.fault
    if isinstance(exc, CommitOutcomeUnknownError):
        return StoreFault(errors.STORE_OUTCOME_UNKNOWN, _one_line(exc.cause), 1)
    if isinstance(exc, sa.TimeoutError):  # no pooled connection came free in time
        return StoreFault(errors.STORE_BUSY, "every database connection is in use", 1)
    if isinstance(exc, sa.IntegrityError | sa.ProgrammingError | sa.DataError):
        return None
    driver = _driver_error(exc)
    sqlstate = getattr(driver, "sqlstate", None)
    reason = _one_line(driver)
    if type(driver).__module__.startswith("psycopg"):
        return _postgres(driver, sqlstate, reason)
    name = getattr(driver, "sqlite_errorname", None)
    if isinstance(name, str):
        return _sqlite(name, reason, free_bytes)
    if isinstance(exc, sa.DisconnectionError | sa.InterfaceError | sa.OperationalError):
        return StoreFault(errors.STORE_UNAVAILABLE, reason, 1)
    return None


def _postgres(driver: BaseException, sqlstate: str | None, reason: str) -> StoreFault | None:
    import psycopg

    if sqlstate in _PG_FULL:
        return StoreFault(errors.STORE_FULL, reason, 10)
    if sqlstate in _PG_READ_ONLY:
        return StoreFault(errors.STORE_READ_ONLY, reason, 10)
    if sqlstate in _PG_BUSY:
        return StoreFault(errors.STORE_BUSY, reason, 1)
    if sqlstate is not None and sqlstate[:2] in _PG_UNAVAILABLE_CLASSES:
        return StoreFault(errors.STORE_UNAVAILABLE, reason, 1)
    if sqlstate is None and isinstance(driver, psycopg.OperationalError | psycopg.InterfaceError):
        return StoreFault(errors.STORE_UNAVAILABLE, reason, 1)  # no answer: connection refused/lost
    return None


def _sqlite(
    name: str, reason: str, free_bytes: Callable[[], int | None] | None
) -> StoreFault | None:
    if name.startswith(_SQLITE_FULL):
        return StoreFault(errors.STORE_FULL, reason, 10)
    if name.startswith(_SQLITE_BUSY):
        return StoreFault(errors.STORE_BUSY, reason, 1)
    if name.startswith(_SQLITE_READ_ONLY):
        return StoreFault(errors.STORE_READ_ONLY, reason, 10)
    if name.startswith(_SQLITE_UNAVAILABLE):
        free = free_bytes() if free_bytes is not None else None
        if free is not None and free < LOW_DISK_BYTES:
            return StoreFault(errors.STORE_FULL, f"{reason}; {free} bytes free", 10)
        return StoreFault(errors.STORE_UNAVAILABLE, reason, 1)
    return None


def is_disconnect(exc: BaseException) -> bool:
    """The error means the connection itself is gone (not only this statement failed)."""
    fault = classify(exc)
    if fault is None or fault.code != errors.STORE_UNAVAILABLE:
        return False
    driver = _driver_error(exc)
    sqlstate = getattr(driver, "sqlstate", None)
    return type(driver).__module__.startswith("psycopg") and (
        sqlstate is None or sqlstate[:2] in ("08", "57")
    )
