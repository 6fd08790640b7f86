"""A placement's commit: the rows it writes (`PlacementWrite`), written in one transaction.

- **PostgreSQL**: one call of the server-side function `nfvplace_commit_placement` (migrations
  0009 and 0010), with the rows as one jsonb document, through psycopg's ordinary API. The call
  goes with its `BEGIN` in one round trip, the `COMMIT` in a second: a connection lost before the `COMMIT` leaves nothing
  stored, and one lost during it leaves the outcome unknown (`CommitOutcomeUnknownError`).
  PL/pgSQL keeps the plans of the function's statements for the session, so nothing is prepared
  by hand.
- **SQLite**: the same statements one after another (in process, a statement costs no round
  trip), each compiled once by SQLAlchemy and run on `sqlite3`'s own cursor (`db.run_on_driver`).

Either way the hosts' compare-and-swaps come first, in sorted order (the lock order), and a commit
that lost its race stops there holding nothing: a swap that matched no row, or a hugepage counter
that would go over its pool, is `StaleSnapshot` naming the host; a claim row held already is
SQLAlchemy's `IntegrityError` (the `claims` table's UNIQUE constraint).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import ClientCursor
from psycopg.pq import TransactionStatus
from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError

from .changes import BUMP_COUNTER, SWAP, counts_changes
from .db import forget_connections
from .driver import on_raw
from .faults import CommitOutcomeUnknownError
from .records import (
    INSERT_CLAIM,
    INSERT_INSTANCE,
    INSERT_PAGE_CLAIM,
    INSERT_PLACEMENT,
    INSERT_PLACEMENT_HOST,
    RAISE_POOL,
    StaleSnapshot,
)
from .resources import Held

# PostgreSQL: the SQLSTATE the commit function raises where a host moved on or a pool is full
STALE_SQLSTATE = "NV001"
IDLE = TransactionStatus.IDLE
# the columns of `placements` the commit function writes, in its order (a test checks the table)
PLACEMENT_COLUMNS = (
    "id",
    "idempotency_key",
    "request_hash",
    "response",
    "configurations",
    "name",
    "descriptor",
    "created_at",
)
BEGIN = "BEGIN; "
CALL = (
    "SELECT nfvplace_commit_placement("
    "%s, %s, %s, %s::json, %s::json, %s, %s::json, %s::timestamptz, %s::jsonb)"
)


@dataclass(frozen=True, slots=True)
class Swap:
    """A host's compare-and-swap: from the generation the placement was decided on to the next."""

    host: str
    seen: int
    made: int


@dataclass(frozen=True, slots=True)
class PlacedInstance:
    owner: str
    host: str
    vm: str


@dataclass(frozen=True, slots=True)
class PageClaim:
    """Hugepages of one pool (host, NUMA node, page size) the placement holds."""

    host: str
    node: int
    size_kib: int
    count: int


@dataclass(frozen=True, slots=True)
class PlacementWrite:
    """Every row one placement's commit writes."""

    placement: Mapping[str, Any]  # a row of `placements` (PLACEMENT_COLUMNS; JSON as JsonText)
    swaps: Sequence[Swap]  # sorted by host: the lock order
    instances: Sequence[PlacedInstance]
    claims: Sequence[Held]
    pages: Sequence[PageClaim]


def commit(conn: Connection, write: PlacementWrite) -> None:
    """Write `write` on `conn` (in `db.transaction`) and commit it: StaleSnapshot where a host
    moved on or a hugepage pool is full, SQLAlchemy's IntegrityError where a row was refused (a
    claim held already, a placement id or Idempotency-Key used), its other DBAPIError subclasses
    for other database errors, and CommitOutcomeUnknownError where the connection broke in the
    `COMMIT`'s round trip, since the server may have committed."""
    if conn.dialect.name == "postgresql":
        _call(conn, write)
    else:
        in_process(conn.connection.driver_connection, conn.dialect, write)
        conn.commit()


def _call(conn: Connection, write: PlacementWrite) -> None:
    """PostgreSQL: `BEGIN` and the commit function's call in one round trip, then `COMMIT`.

    psycopg sends a transaction's `BEGIN` alone and waits for it (a round trip more, and one more
    wake-up of the server's backend), so the connection is in autocommit for the call, and the
    call's text begins the transaction itself: two statements in one message, which takes the
    parameters bound by the client (psycopg's `ClientCursor`)."""
    raw: Any = conn.connection.driver_connection
    committing = False
    begin = raw.info.transaction_status == IDLE  # else the call joins the transaction begun
    if begin:
        raw.autocommit = True
    try:
        with ClientCursor(raw) as cursor:
            cursor.execute(BEGIN + CALL if begin else CALL, _arguments(write))
        committing = True
        raw.commit()
    except conn.dialect.loaded_dbapi.Error as exc:
        if exc.sqlstate == STALE_SQLSTATE:
            raise StaleSnapshot(exc.diag.message_primary) from exc
        error = DBAPIError.instance(None, None, exc, conn.dialect.loaded_dbapi.Error)
        if raw.broken or raw.closed:
            forget_connections(conn, exc)
            if committing:  # the server may have committed before the connection broke
                raise CommitOutcomeUnknownError(error) from exc
        raise error from exc
    finally:
        _lend_back(conn, raw)


def _lend_back(conn: Connection, raw: Any) -> None:
    """The connection as it was lent: no transaction open (the failed call's rolled back), out of
    autocommit; or invalidated (the pool opens another)."""
    if raw.broken or raw.closed:
        return
    try:
        if raw.info.transaction_status != IDLE:
            raw.rollback()
        if raw.autocommit:
            raw.autocommit = False
    except conn.dialect.loaded_dbapi.Error:
        conn.invalidate()


def _arguments(write: PlacementWrite) -> list[str | None]:
    """The call's parameters, every one a string: psycopg quotes strings cheaply (its arrays, a
    datetime and the like cost it several times as much, about 0.15 ms per commit), and the
    call's casts type them."""
    placement = write.placement
    rows = {
        "swaps": [{"h": s.host, "s": s.seen, "m": s.made} for s in write.swaps],
        "instances": [{"o": i.owner, "h": i.host, "v": i.vm} for i in write.instances],
        "claims": [{"h": h.host, "k": h.kind, "u": h.resource} for h in write.claims],
        "pages": [{"h": p.host, "d": p.node, "s": p.size_kib, "c": p.count} for p in write.pages],
    }
    return [
        *(placement.get(column) for column in PLACEMENT_COLUMNS[:-1]),
        placement["created_at"].isoformat(),
        json.dumps(rows),
    ]


def in_process(raw: Any, dialect: Dialect, write: PlacementWrite) -> None:
    """SQLite: the function's statements, in its order, on the driver's connection `raw` (in a
    transaction the caller commits)."""
    placement_id = write.placement["id"]
    now = write.placement["created_at"]
    if counts_changes(dialect):
        on_raw(raw, dialect, BUMP_COUNTER, [{}], read=False)
    for swap in write.swaps:
        row = {"b_id": swap.host, "b_seen": swap.seen, "b_next": swap.made, "b_now": now}
        if on_raw(raw, dialect, SWAP, [row], read=False) != 1:
            raise StaleSnapshot(swap.host)
    on_raw(raw, dialect, INSERT_PLACEMENT, [{**write.placement, "released_at": None}], read=False)
    rows = [
        {"placement_id": placement_id, "host_id": s.host, "generation": s.made} for s in write.swaps
    ]
    _insert(raw, dialect, INSERT_PLACEMENT_HOST, rows)
    rows = [
        {"placement_id": placement_id, "owner": i.owner, "host_id": i.host, "vm": i.vm}
        for i in write.instances
    ]
    _insert(raw, dialect, INSERT_INSTANCE, rows)
    rows = [
        {"placement_id": placement_id, "host_id": h.host, "kind": h.kind, "resource": h.resource}
        for h in write.claims
    ]
    _insert(raw, dialect, INSERT_CLAIM, rows)
    for page in write.pages:
        row = {"b_host": page.host, "b_node": page.node, "b_size": page.size_kib}
        if on_raw(raw, dialect, RAISE_POOL, [{**row, "b_count": page.count}], read=False) != 1:
            raise StaleSnapshot(page.host)
    rows = [
        {
            "placement_id": placement_id,
            "host_id": p.host,
            "numa_node": p.node,
            "size_kib": p.size_kib,
            "count": p.count,
        }
        for p in write.pages
    ]
    _insert(raw, dialect, INSERT_PAGE_CLAIM, rows)


def _insert(raw: Any, dialect: Dialect, statement: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    if rows:
        on_raw(raw, dialect, statement, list(rows), read=False)
