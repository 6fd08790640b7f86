"""A transaction's writes as a list of steps: run one after another on SQLite, and in one round trip
on PostgreSQL (psycopg's pipeline mode).

A placement's commit is about ten statements. On PostgreSQL each was a round trip to the server
(about 0.3 ms each on a loaded machine, more than the engine's decision), and the commits of one
worker on its hot host wait for each other, so the round trips capped a worker's placements per
second. Pipelined, the statements travel together and the server answers them together; the checks
that make a commit a compare-and-swap (a row count of one) are read once the answers are in, and a
failed check rolls the whole transaction back as before. A step marked `barrier` (the hosts'
compare-and-swap) is checked before the rest is sent: a commit that lost its race stops there,
holding nothing, instead of waiting on rows the winner holds (which can deadlock).

Statements are module-level constants with bind parameters only, so SQLAlchemy compiles each once
per dialect. JSON values are given already serialised (`db.JsonText`): SQLAlchemy's JSON type
passes them on as they are, and PostgreSQL takes the text as `json`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Executable
from sqlalchemy.sql.compiler import SQLCompiler

from .db import forget_connections
from .records import StaleSnapshot


@dataclass(frozen=True, slots=True)
class Step:
    statement: Executable  # a module-level constant: compiled once per dialect
    rows: Sequence[Mapping[str, Any]]  # one execution per row
    stale: str | None = None  # each row must change exactly one row, else StaleSnapshot(stale)
    # checked before any later step is sent: the step takes the locks the later ones rely on (a
    # compare-and-swap that fails must stop the transaction before it waits on other rows)
    barrier: bool = False


_COMPILED: dict[tuple[int, str], tuple[Executable, SQLCompiler]] = {}


def _compiled(statement: Executable, dialect: Dialect) -> SQLCompiler:
    key = (id(statement), dialect.name)
    found = _COMPILED.get(key)
    if found is None or found[0] is not statement:
        compiled = cast(SQLCompiler, statement.compile(dialect=dialect))  # type: ignore[attr-defined]
        found = _COMPILED[key] = (statement, compiled)
    return found[1]


def run(conn: Connection, steps: Sequence[Step]) -> None:
    """Execute `steps` in order in `conn`'s transaction; StaleSnapshot when a guarded step changed
    no row, sqlalchemy's IntegrityError when a constraint refused a row (and its other DBAPIError
    subclasses for other database errors)."""
    steps = [step for step in steps if step.rows]
    raw: Any = conn.connection.driver_connection  # in conn's transaction
    try:
        if conn.dialect.name == "postgresql":
            _pipelined(conn.dialect, raw, steps)
        else:
            _one_by_one(conn.dialect, raw, steps)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _reported(conn, raw, exc) from exc


def fetch(conn: Connection, statement: Executable, row: Mapping[str, Any]) -> list[Any]:
    """The rows of a module-level query, read on the driver's cursor (a read every request
    makes, such as the change feed: SQLAlchemy's result machinery cost more than the query)."""
    compiled = _compiled(statement, conn.dialect)
    raw: Any = conn.connection.driver_connection
    try:
        cursor = raw.cursor()
        try:
            cursor.execute(compiled.string, _parameters(compiled, row))
            return list(cursor.fetchall())
        finally:
            cursor.close()
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _reported(conn, raw, exc) from exc


def _reported(conn: Connection, raw: Any, exc: Exception) -> Exception:
    """The driver's error as SQLAlchemy reports it (IntegrityError for a refused row). A
    connection the error broke is not given back to the pool, nor are its siblings of before:
    the server went away (see `db.forget_connections`)."""
    if getattr(raw, "closed", False) or getattr(raw, "broken", False):
        forget_connections(conn, exc)
    return DBAPIError.instance(None, None, exc, conn.dialect.loaded_dbapi.Error)


def _parameters(compiled: SQLCompiler, row: Mapping[str, Any]) -> Any:
    """`row` as the driver takes it: every bind of the statement, through SQLAlchemy's bind
    processors (SQLite's datetimes), by name or in order as the dialect's placeholders want."""
    params = dict(compiled.construct_params(row))
    for name, process in compiled._bind_processors.items():  # SQLAlchemy's own, as it runs them
        if callable(process) and params.get(name) is not None:  # (tuple binds: none here)
            params[name] = process(params[name])
    order = compiled.positiontup
    return params if order is None else [params[name] for name in order]


def _one_by_one(dialect: Dialect, raw: Any, steps: Sequence[Step]) -> None:
    """SQLite: in process, a statement costs no round trip; guards are checked as they run."""
    cursor = raw.cursor()
    for step in steps:
        compiled = _compiled(step.statement, dialect)
        params = [_parameters(compiled, row) for row in step.rows]
        if step.stale is None:
            cursor.executemany(compiled.string, params)
            continue
        for one in params:
            cursor.execute(compiled.string, one)
            if cursor.rowcount != 1:
                raise StaleSnapshot(step.stale)


def _pipelined(dialect: Dialect, raw: Any, steps: Sequence[Step]) -> None:
    batch: list[Step] = []
    for step, following in zip(steps, [*steps[1:], None], strict=True):
        batch.append(step)
        if step.barrier and (following is None or not following.barrier):
            _round_trip(dialect, raw, batch)  # barriers in a row travel together
            batch = []
    if batch:
        _round_trip(dialect, raw, batch)


def _round_trip(dialect: Dialect, raw: Any, steps: Sequence[Step]) -> None:
    """Send `steps` in one pipeline, then check the guarded ones."""
    guarded: list[tuple[str, Any]] = []
    with raw.pipeline():
        for step in steps:
            compiled = _compiled(step.statement, dialect)
            params = [_parameters(compiled, row) for row in step.rows]
            if step.stale is None:
                raw.cursor().executemany(compiled.string, params)
                continue
            for one in params:
                cursor = raw.cursor()
                cursor.execute(compiled.string, one)
                guarded.append((step.stale, cursor))
    for stale, cursor in guarded:
        if cursor.rowcount != 1:
            raise StaleSnapshot(stale)
