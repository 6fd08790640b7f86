"""A transaction's writes as a list of steps: run one after another on SQLite, and pipelined on
PostgreSQL (libpq's pipeline mode, in one write: see `wire`): a commit in two round trips, `BEGIN`
with the steps, then the `COMMIT`.

A placement's commit is about ten statements. On PostgreSQL each was a round trip to the server
(about 0.3 ms each on a loaded machine, more than the engine's decision), and the commits of one
worker on its hot host wait for each other, so the round trips capped a worker's placements per
second. Pipelined, the statements travel together and the server answers them together.

A guarded step (`stale`: each of its rows must change exactly one row, the compare-and-swap of a
commit) is checked by the server on PostgreSQL: the statement is wrapped so that a row count other
than one raises `GUARD_SQLSTATE` there (the function of migration 0007), the transaction is aborted
and PostgreSQL skips the rest of the pipeline. So a commit that lost its race stops at its
compare-and-swap, holding nothing, instead of waiting on rows the winner holds (which can
deadlock), without a round trip to check it first. SQLite checks the row counts as the steps run.

The `COMMIT` goes in a round trip of its own: a connection lost during it leaves the commit's
outcome unknown (`CommitOutcomeUnknownError`); lost before it, the transaction is rolled back by
the server. (Sent with the steps, a connection lost anywhere in the commit would leave it unknown.)

Statements are module-level constants with bind parameters only, so SQLAlchemy compiles each once
per dialect. JSON values are given already serialised (`db.JsonText`): SQLAlchemy's JSON type
passes them on as they are, and PostgreSQL takes the text as `json`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from psycopg.pq import TransactionStatus
from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Executable
from sqlalchemy.sql.compiler import SQLCompiler

from . import wire
from .db import forget_connections
from .faults import CommitOutcomeUnknownError
from .records import StaleSnapshot

# PostgreSQL: the function that raises where a guarded step changed no row or several (migration
# 0007), its SQLSTATE, and the bind that names what went stale
GUARD_FUNCTION = "nfvplace_one_row"
GUARD_SQLSTATE = "NV001"
STALE_BIND = "nfvplace_stale"
IDLE = TransactionStatus.IDLE
BEGIN = wire.statement("BEGIN")


@dataclass(frozen=True, slots=True)
class Step:
    statement: Executable  # a module-level constant: compiled once per dialect
    rows: Sequence[Mapping[str, Any]]  # one execution per row
    stale: str | None = None  # each row must change exactly one row, else StaleSnapshot(stale)


@dataclass(frozen=True, slots=True)
class _Bound:
    """A statement compiled for one dialect, and how a row becomes the driver's parameters: for
    each bind in the driver's order, its key in the row, its default and SQLAlchemy's bind
    processor (SQLite's datetimes). Worked out once per statement: SQLAlchemy's
    `construct_params` took 2.6 us per row (the plan 1.5), a tenth of a placement's commit."""

    statement: Executable
    string: str
    binds: tuple[tuple[str, str, Any, Any], ...]  # (name, key, default, processor or None)
    named: bool  # the driver takes a dict (PostgreSQL), else a list in order (SQLite)
    # PostgreSQL: the statement as `wire` sends it, plain and guarded
    pg: wire.Statement | None = None
    pg_guarded: wire.Statement | None = None

    def parameters(self, row: Mapping[str, Any]) -> Any:
        """`row` as the driver takes it (a bind missing from `row` takes its default)."""
        values = []
        for _name, key, default, process in self.binds:
            value = row[key] if default is _MISSING or key in row else default
            values.append(value if process is None or value is None else process(value))
        if self.named:
            return {bind[0]: value for bind, value in zip(self.binds, values, strict=True)}
        return values


_MISSING = object()
_BOUND: dict[tuple[int, str], _Bound] = {}


def _bound(statement: Executable, dialect: Dialect) -> _Bound:
    key = (id(statement), dialect.name)
    found = _BOUND.get(key)
    if found is None or found.statement is not statement:
        found = _BOUND[key] = _bind(statement, dialect)
    return found


def _bind(statement: Executable, dialect: Dialect) -> _Bound:
    compiled = cast(SQLCompiler, statement.compile(dialect=dialect))  # type: ignore[attr-defined]
    by_name = {name: bind for bind, name in compiled.bind_names.items()}
    order = compiled.positiontup
    processors = compiled._bind_processors  # SQLAlchemy's own, as it runs them
    binds = []
    for name in by_name if order is None else order:
        bind = by_name[name]
        if bind.expanding or bind.callable is not None or compiled.escaped_bind_names:
            raise ValueError(f"bind {name!r} of a step must be a plain, named value")
        process = processors.get(name)
        default = _MISSING if bind.required else bind.value
        binds.append((name, bind.key, default, process if callable(process) else None))
    if dialect.name != "postgresql":
        return _Bound(statement, compiled.string, tuple(binds), order is None)
    # the guarded form raises GUARD_SQLSTATE in the server unless the statement (an UPDATE or
    # DELETE) changed exactly one row; the bind STALE_BIND is the error's message
    guarded = (
        f"WITH matched AS ({compiled.string} RETURNING 1) SELECT "
        f"{GUARD_FUNCTION}((SELECT count(*) FROM matched), %({STALE_BIND})s)"
    )
    return _Bound(
        statement,
        compiled.string,
        tuple(binds),
        order is None,
        wire.statement(compiled.string),
        wire.statement(guarded),
    )


def commit(conn: Connection, steps: Sequence[Step]) -> None:
    """Execute `steps` in `conn`'s transaction and commit it: StaleSnapshot when a guarded step
    changed no row, sqlalchemy's IntegrityError when a constraint refused a row (and its other
    DBAPIError subclasses for other database errors), CommitOutcomeUnknownError where the
    connection broke in the COMMIT's round trip, since the server may have committed."""
    writes = [step for step in steps if step.rows]
    raw: Any = conn.connection.driver_connection  # in conn's transaction
    committing = begin = False
    try:
        if conn.dialect.name != "postgresql":
            _one_by_one(conn.dialect, raw, writes)
        else:  # BEGIN goes with the steps (psycopg sends it alone: a round trip)
            begin = raw.info.transaction_status == IDLE
            _pipeline(conn.dialect, raw, writes, begin=begin)
        committing = True
        raw.commit()
    except conn.dialect.loaded_dbapi.Error as exc:
        if begin:
            _roll_back(conn, raw)  # the transaction the pipeline began, failed
        if getattr(exc, "sqlstate", None) == GUARD_SQLSTATE:
            raise StaleSnapshot(exc.diag.message_primary) from exc
        error = _reported(conn, raw, exc)
        if committing and _broken(raw):
            raise CommitOutcomeUnknownError(error) from exc
        raise error from exc


def _roll_back(conn: Connection, raw: Any) -> None:
    """PostgreSQL: no transaction left open on the connection, or the connection invalidated
    (the pool opens another)."""
    try:
        if not _broken(raw) and raw.info.transaction_status != IDLE:
            raw.rollback()
    except Exception:
        conn.invalidate()


def fetch(conn: Connection, statement: Executable, row: Mapping[str, Any]) -> list[Any]:
    """The rows of a module-level query, read on the driver's cursor (a read every request
    makes, such as the change feed: SQLAlchemy's result machinery cost more than the query).

    On PostgreSQL, outside a transaction, the query runs alone (`wire`, prepared): one round
    trip, where psycopg sent `BEGIN` first and the pool a `ROLLBACK` when the connection came
    back (three round trips per placement for the change feed). A single statement reads one
    snapshot anyway."""
    bound = _bound(statement, conn.dialect)
    raw: Any = conn.connection.driver_connection
    try:
        if bound.pg is not None:
            return wire.run_all(raw, [(bound.pg, [bound.parameters(row)])])
        cursor = raw.cursor()
        try:
            cursor.execute(bound.string, bound.parameters(row))
            return list(cursor.fetchall())
        finally:
            cursor.close()
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _reported(conn, raw, exc) from exc


def _reported(conn: Connection, raw: Any, exc: Exception) -> Exception:
    """The driver's error as SQLAlchemy reports it (IntegrityError for a refused row). A
    connection the error broke is not given back to the pool, nor are its siblings of before:
    the server went away (see `db.forget_connections`)."""
    if _broken(raw):
        forget_connections(conn, exc)
    return DBAPIError.instance(None, None, exc, conn.dialect.loaded_dbapi.Error)


def _broken(raw: Any) -> bool:
    return bool(getattr(raw, "closed", False) or getattr(raw, "broken", False))


def _one_by_one(dialect: Dialect, raw: Any, steps: Sequence[Step]) -> None:
    """SQLite: in process, a statement costs no round trip; guards are checked as they run."""
    cursor = raw.cursor()
    for step in steps:
        bound = _bound(step.statement, dialect)
        params = [bound.parameters(row) for row in step.rows]
        if step.stale is None:
            cursor.executemany(bound.string, params)
            continue
        for one in params:
            cursor.execute(bound.string, one)
            if cursor.rowcount != 1:
                raise StaleSnapshot(step.stale)


def _pipeline(dialect: Dialect, raw: Any, steps: Sequence[Step], *, begin: bool = False) -> None:
    """PostgreSQL: send `steps` (after a BEGIN, where asked) in one pipeline, in one write (see
    `wire`); the server checks the guards (see above)."""
    runs: list[wire.Run] = [(BEGIN, [{}])] if begin else []
    for step in steps:
        bound = _bound(step.statement, dialect)
        params = [bound.parameters(row) for row in step.rows]
        if step.stale is None:
            runs.append((cast(wire.Statement, bound.pg), params))
        else:
            guard = {STALE_BIND: step.stale}
            guarded = cast(wire.Statement, bound.pg_guarded)
            runs.append((guarded, [{**one, **guard} for one in params]))
    try:
        wire.run_all(raw, runs)
    except wire.Unprepared:
        if not begin:
            raise
        raw.rollback()  # the pipeline's BEGIN began the transaction: nothing else is lost
        wire.run_all(raw, runs)
