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
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Executable
from sqlalchemy.sql.compiler import Compiled

from .records import StaleSnapshot


@dataclass(frozen=True, slots=True)
class Step:
    statement: Executable  # a module-level constant: compiled once per dialect
    rows: Sequence[Mapping[str, Any]]  # one execution per row
    stale: str | None = None  # each row must change exactly one row, else StaleSnapshot(stale)
    # checked before any later step is sent: the step takes the locks the later ones rely on (a
    # compare-and-swap that fails must stop the transaction before it waits on other rows)
    barrier: bool = False


_COMPILED: dict[tuple[int, str], tuple[Executable, Compiled]] = {}


def _compiled(statement: Executable, dialect: Dialect) -> Compiled:
    key = (id(statement), dialect.name)
    found = _COMPILED.get(key)
    if found is None or found[0] is not statement:
        found = _COMPILED[key] = (statement, statement.compile(dialect=dialect))  # type: ignore[attr-defined]
    return found[1]


def run(conn: Connection, steps: Sequence[Step]) -> None:
    """Execute `steps` in order in `conn`'s transaction; StaleSnapshot when a guarded step changed
    no row, sqlalchemy's IntegrityError when a constraint refused a row (and its other DBAPIError
    subclasses for other database errors)."""
    steps = [step for step in steps if step.rows]
    if conn.dialect.name == "postgresql":
        _pipelined(conn, steps)
        return
    for step in steps:
        if step.stale is None:
            conn.execute(step.statement, list(step.rows))
            continue
        for row in step.rows:
            if conn.execute(step.statement, row).rowcount != 1:
                raise StaleSnapshot(step.stale)


def _pipelined(conn: Connection, steps: Sequence[Step]) -> None:
    raw: Any = conn.connection.driver_connection  # psycopg.Connection, in conn's transaction
    batch: list[Step] = []
    for step, following in zip(steps, [*steps[1:], None], strict=True):
        batch.append(step)
        if step.barrier and (following is None or not following.barrier):
            _round_trip(conn, raw, batch)  # barriers in a row travel together
            batch = []
    if batch:
        _round_trip(conn, raw, batch)


def _round_trip(conn: Connection, raw: Any, steps: Sequence[Step]) -> None:
    """Send `steps` in one pipeline, then check the guarded ones."""
    dialect = conn.dialect
    guarded: list[tuple[str, Any]] = []
    sql = ""
    try:
        with raw.pipeline():
            for step in steps:
                compiled = _compiled(step.statement, dialect)
                sql = compiled.string
                params = [compiled.construct_params(row) for row in step.rows]
                if step.stale is None:
                    raw.cursor().executemany(sql, params)
                    continue
                for one in params:
                    cursor = raw.cursor()
                    cursor.execute(sql, one)
                    guarded.append((step.stale, cursor))
    except dialect.loaded_dbapi.Error as exc:
        # as SQLAlchemy reports the driver's errors (IntegrityError for a refused row); a
        # connection the error broke is not given back to the pool
        if raw.closed or raw.broken:
            conn.invalidate(exc)
        raise DBAPIError.instance(sql, None, exc, dialect.loaded_dbapi.Error) from exc
    for stale, cursor in guarded:
        if cursor.rowcount != 1:
            raise StaleSnapshot(stale)
