"""PostgreSQL: a transaction's statements sent to the server in one write, through libpq's
pipeline mode driven directly, and their results read when all have run.

psycopg's own pipeline sends each statement as soon as it is queued (two `poll`s and a `send`
per statement: twelve sends for a placement's commit), and each send woke the server's backend
to read it: the backends slept and woke 7.6 times per placement with one worker, 10.5 with two.
With two workers on two cores every core is busy, so each wake-up preempted a worker in the middle of a decision (6-11 involuntary context
switches per placement, against 2 with one worker) and the CPU per placement of the workers and
of PostgreSQL rose by a third over one worker's. Queued in libpq's output buffer and flushed with
the pipeline's sync, the statements travel in one write and the backend wakes once for them
(6.1-6.4 sleeps per placement with two workers since: three round trips, the log's fsync, the
write-backs; docs/benchmarks.md, eighth round).

Statements are prepared once per connection, under a name derived from their text, and their
parameters are sent as text for the server to type from the statement (as psycopg leaves
strings). psycopg's own automatic preparation is off on our engines (`db.make_engine`): at every
rollback it sends `DEALLOCATE ALL`, which would drop these too. A statement found gone all the
same (a `DISCARD ALL` from a connection pooler) is prepared again: at once where nothing else
ran in the transaction, else by the caller (`Unprepared`).
"""

from __future__ import annotations

import hashlib
import re
import select
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any
from uuid import UUID

from psycopg import errors, pq
from psycopg.adapt import Transformer
from psycopg.types.json import Json, Jsonb

from .db import serialise_json

_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%%")
_GONE = "26000"  # invalid_sql_statement_name: a prepared statement the connection no longer has
_OK = pq.ExecStatus.COMMAND_OK
_ROWS = pq.ExecStatus.TUPLES_OK
_SYNC = pq.ExecStatus.PIPELINE_SYNC
_FAILED = pq.ExecStatus.FATAL_ERROR
# connection -> names of the statements prepared on it
_PREPARED: weakref.WeakKeyDictionary[Any, set[bytes]] = weakref.WeakKeyDictionary()


class Unprepared(errors.InvalidSqlStatementName):
    """A statement prepared on the connection before was gone, in a transaction begun before
    the pipeline: the caller rolls back and runs its transaction again."""


@dataclass(frozen=True, slots=True)
class Statement:
    """A statement in libpq's terms: `$n` placeholders, and the bind name of each."""

    name: bytes
    query: bytes
    binds: tuple[str, ...]


Run = tuple[Statement, Sequence[Mapping[str, Any]]]  # a statement, executed once per row


def statement(pyformat: str) -> Statement:
    """`pyformat` (psycopg's `%(name)s` placeholders) with `$n` placeholders instead."""
    binds: list[str] = []

    def numbered(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "%"  # an escaped percent sign
        if name not in binds:
            binds.append(name)
        return f"${binds.index(name) + 1}"

    query = _PLACEHOLDER.sub(numbered, pyformat).encode()
    name = b"nfvplace_" + hashlib.blake2b(query, digest_size=8).hexdigest().encode()
    return Statement(name, query, tuple(binds))


def text(value: Any) -> bytes | None:
    """A parameter as PostgreSQL's text input takes it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return b"t" if value else b"f"
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, Json | Jsonb):  # SQLAlchemy's JSON type wraps values so for psycopg,
        # which serialises them as our engines tell it to
        dumped = (value.dumps or serialise_json)(value.obj)
        return dumped if isinstance(dumped, bytes) else dumped.encode()
    if isinstance(value, date):
        return value.isoformat().encode()
    if isinstance(value, int | float | Decimal | UUID):
        return str(value).encode()
    raise TypeError(f"no text form for a parameter of type {type(value).__name__}")


def run_all(raw: Any, runs: Sequence[Run]) -> list[tuple[Any, ...]]:
    """Execute `runs` in order in one pipeline on `raw` (a psycopg connection, idle or in a
    transaction): the rows the last statement returned; else psycopg's error for the first
    statement that failed (the server skips the ones after it)."""
    # every parameter in its text form before the pipeline starts: nothing fails half-sent
    sends = [(run, [[text(row[b]) for b in run.binds] for row in rows]) for run, rows in runs]
    try:
        return _run_once(raw, sends)
    except errors.InvalidSqlStatementName:
        if raw.pgconn.transaction_status != pq.TransactionStatus.IDLE:
            raise Unprepared("a prepared statement was gone; run the transaction again") from None
        return _run_once(raw, sends)  # nothing else ran in its transaction: prepared anew


def _run_once(
    raw: Any, sends: Sequence[tuple[Statement, list[list[bytes | None]]]]
) -> list[tuple[Any, ...]]:
    pgconn = raw.pgconn
    prepared = _PREPARED.setdefault(raw, set())
    preparing: list[bytes | None] = []  # per result expected: the name its prepare makes
    pgconn.enter_pipeline_mode()
    try:
        for run, parameters in sends:
            if run.name not in prepared and run.name not in preparing:
                pgconn.send_prepare(run.name, run.query)
                preparing.append(run.name)
            for values in parameters:
                pgconn.send_query_prepared(run.name, values)
                preparing.append(None)
        pgconn.pipeline_sync()
        while pgconn.flush():
            _wait(pgconn, select.POLLOUT)
        error, last = _results(raw, preparing, prepared)
    finally:
        _leave_pipeline(raw)
    if error is not None:
        if error.sqlstate == _GONE:
            prepared.clear()  # the server forgot them: prepared again next time
        raise error
    if last is None or last.status != _ROWS:
        return []
    loader = Transformer(raw)
    loader.set_pgresult(last)
    rows: list[tuple[Any, ...]] = loader.load_rows(0, last.ntuples, tuple)
    return rows


def _leave_pipeline(raw: Any) -> None:
    """The connection out of pipeline mode; closed (the pool replaces it) where results were
    left unread, as when reading them failed half-way."""
    pgconn = raw.pgconn
    if pgconn.status != pq.ConnStatus.OK or pgconn.pipeline_status == pq.PipelineStatus.OFF:
        return
    try:
        pgconn.exit_pipeline_mode()
    except errors.OperationalError:
        raw.close()


def _wait(pgconn: Any, events: int) -> None:
    poller = select.poll()
    poller.register(pgconn.socket, events | select.POLLERR)
    while not poller.poll():
        pass


def _results(
    raw: Any, preparing: list[bytes | None], prepared: set[bytes]
) -> tuple[errors.Error | None, Any]:
    """Read the pipeline's results up to its sync: the first error (None if none) and the last
    statement's result."""
    pgconn = raw.pgconn
    error: errors.Error | None = None
    last = None
    expected = iter(preparing)
    while True:
        _wait(pgconn, select.POLLIN)
        pgconn.consume_input()
        while not pgconn.is_busy():
            result = pgconn.get_result()
            if result is None:
                continue  # the end of one statement's results
            if result.status == _SYNC:
                return error, last
            name = next(expected)
            if result.status == _FAILED and error is None:
                error = errors.error_from_result(result, encoding=raw.info.encoding)
            elif result.status == _OK and name is not None:
                prepared.add(name)
            elif name is None:
                last = result
