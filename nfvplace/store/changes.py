"""The change feed: every write that changes a host stamps it with a change number
(`hosts.change_seq`, or `deleted_hosts.change_seq` for a deletion), and a reader asks for the hosts
stamped after the *watermark* it was given last time. A watermark w promises that every change
stamped w or lower had committed (or rolled back) when it was read, so a reader never misses one.

- **SQLite** takes one writer at a time: a write bumps the one-row change counter and stamps its
  value; the watermark is the counter.
- **PostgreSQL** commits many writers at once, and a counter row would make them commit one at a
  time: each held it until its commit was on disk (an fsync, with durable settings) and the next
  waited for it, so commits could never share a flush. There a write stamps its own transaction id
  (`pg_current_xact_id()`, taken without a lock), and the watermark is one less than the oldest
  transaction still running when the feed was read (the `xmin` of the query's snapshot): a
  transaction the reader could not see yet has an id at least that. A reader may be told again of
  a change it saw (its writer's id is above the watermark until every older transaction ended); it
  compares generations and skips it. A transaction that wrote and stays open (a session idle in
  a transaction) holds the watermark back until it ends: meanwhile each read lists every host
  changed since it began (PostgreSQL's `idle_in_transaction_session_timeout` bounds that).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import BigInteger, Connection, String, bindparam, null, select, union_all, update
from sqlalchemy import cast as sql_cast
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from .records import COUNTER, DELETED, HOSTS

_XID = "CAST(CAST({} AS TEXT) AS BIGINT)"  # an xid8 as a number (the column is a BIGINT)


class change_stamp(FunctionElement[int]):  # noqa: N801 - used as an SQL function
    """The change number a write stamps on the hosts it changes (see the module's docstring)."""

    type = BigInteger()
    inherit_cache = True


class change_watermark(FunctionElement[int]):  # noqa: N801 - used as an SQL function
    """The watermark a read of the change feed hands back (see the module's docstring)."""

    type = BigInteger()
    inherit_cache = True


@compiles(change_stamp)
@compiles(change_watermark)
def _counter(_element: Any, _compiler: Any, **_kw: Any) -> str:
    return "(SELECT change_counter.seq FROM change_counter WHERE change_counter.id = 1)"


@compiles(change_stamp, "postgresql")
def _transaction_id(_element: Any, _compiler: Any, **_kw: Any) -> str:
    return _XID.format("pg_current_xact_id()")


@compiles(change_watermark, "postgresql")
def _before_oldest_running(_element: Any, _compiler: Any, **_kw: Any) -> str:
    return "(" + _XID.format("pg_snapshot_xmin(pg_current_snapshot())") + " - 1)"


def counts_changes(dialect: Dialect) -> bool:
    """Whether a write on `dialect` bumps the change counter (`BUMP_COUNTER`) before it stamps."""
    return dialect.name != "postgresql"


# A commit's compare-and-swap on a host (`commit.py`, SQLite): the next generation, only if
# the host is still at the one the placement was decided on; it stamps the change too.
SWAP = (
    update(HOSTS)
    .where(HOSTS.c.id == bindparam("b_id"), HOSTS.c.generation == bindparam("b_seen"))
    .values(
        generation=bindparam("b_next"), updated_at=bindparam("b_now"), change_seq=change_stamp()
    )
)
BUMP_COUNTER = update(COUNTER).where(COUNTER.c.id == 1).values(seq=COUNTER.c.seq + 1)
MARK_CHANGED = (
    update(HOSTS).where(HOSTS.c.id == bindparam("b_id")).values(change_seq=bindparam("b_seq"))
)
# No stamp reaches it. Bounded on both sides, the feed's range is one PostgreSQL's planner takes as
# narrow where the table has no statistics yet (a fleet just registered, until autovacuum analyses
# it): it reads the index on change_seq, where `> b_seq` alone read every host for each placement.
UNREACHED = 2**63 - 1


def _after(column: Any) -> Any:
    return (column > bindparam("b_seq")) & (column < UNREACHED)


CHANGES = union_all(  # the change feed after b_seq, and the watermark (the row without an id)
    select(HOSTS.c.id, HOSTS.c.generation, HOSTS.c.change_seq).where(_after(HOSTS.c.change_seq)),
    select(DELETED.c.host_id, sql_cast(null(), BigInteger), DELETED.c.change_seq).where(
        _after(DELETED.c.change_seq)
    ),
    select(sql_cast(null(), String), sql_cast(null(), BigInteger), change_watermark()),
)


def stamp(conn: Connection, host_ids: Iterable[str]) -> int:
    """Stamp `host_ids` as changed by `conn`'s transaction; the stamp, for the other rows it
    writes (`deleted_hosts`)."""
    if counts_changes(conn.dialect):
        conn.execute(BUMP_COUNTER)
    seq = int(conn.execute(select(change_stamp())).scalar_one())
    ids = sorted(host_ids)
    if ids:
        conn.execute(MARK_CHANGED, [{"b_id": h, "b_seq": seq} for h in ids])
    return seq
