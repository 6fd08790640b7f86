"""SQLite: the connection a worker's event loop commits its placements on, kept for it.

A placement decided on the event loop (`Placements.place_inline`) reads the change feed and commits
on SQLite in process, and must not wait for SQLite's write lock for longer than a few
milliseconds. Through the pool, each such placement checked a connection out twice (SQLAlchemy's
`Connection`, its transaction and their context managers) and set SQLite's busy timeout down and
back up around its commit (two `PRAGMA busy_timeout`s). The lane keeps one of the pool's
connections checked out instead, its busy timeout the short one for good, and runs the same
statements, in the same order, on it: the same rows, committed before the answer as before.

Only one thread uses the lane at a time: a caller that finds it taken (another thread committing
inline) is told so (`None`) and goes through the pool as before. A connection that failed in a way
that is not a lost race or a busy write lock is given up (invalidated): the next use opens another.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.sql import Executable

from .changes import CHANGES
from .commit import PlacementWrite, in_process
from .driver import on_raw
from .records import StaleSnapshot


class Lane:
    """One pooled SQLite connection of `engine`, with SQLite's busy timeout at `timeout_s`."""

    def __init__(self, engine: Engine, timeout_s: float) -> None:
        self.engine = engine
        self.timeout_ms = int(timeout_s * 1000)
        self._lock = threading.Lock()
        self._held: Any = None  # the pool's connection, checked out on first use
        self._last: tuple[Any, int, int] | None = None  # `changes`: connection, version, mark
        self.driver_error: type[Exception] = engine.dialect.loaded_dbapi.Error

    @contextlib.contextmanager
    def taken(self) -> Iterator[Any]:
        """The driver's connection for this thread alone, or None where another thread has it."""
        if not self._lock.acquire(blocking=False):
            yield None
            return
        try:
            yield self._connection()
        finally:
            self._lock.release()

    def _connection(self) -> Any:
        if self._held is None:
            held = self.engine.raw_connection()
            raw: Any = held.driver_connection
            try:
                raw.execute(f"PRAGMA busy_timeout={self.timeout_ms}")
            except BaseException:
                held.invalidate()
                raise
            self._held = held
        return self._held.driver_connection

    def commit(self, raw: Any, write: PlacementWrite) -> None:
        """`write`'s statements on `raw` (from `taken`), committed; rolled back if any fails."""
        try:
            in_process(raw, self.engine.dialect, write)
            raw.commit()
        except BaseException as exc:
            self._failed(raw, exc)
            raise

    def changes(self, raw: Any, seq: int) -> list[Any]:
        """The change feed's rows after `seq` (`changes.CHANGES`) on `raw` (from `taken`), or
        none but the watermark `seq` where nothing but the lane committed since the lane last read
        them and `seq` is past what it read then: SQLite's `PRAGMA data_version` moves with every
        commit of another connection (another thread's, another process's), never with the
        lane's own, which its caller made and knows."""
        last, self._last = self._last, None
        version = raw.execute("PRAGMA data_version").fetchone()[0]
        if last is not None and last[:2] == (raw, version) and 0 <= last[2] <= seq:
            self._last = last
            return [(None, None, seq)]
        rows = self.read(raw, CHANGES, {"b_seq": seq})
        marks = [int(change) for host_id, _generation, change in rows if host_id is None]
        self._last = (raw, version, max([seq, *marks]))
        return rows

    def read(self, raw: Any, statement: Executable, row: Mapping[str, Any]) -> list[Any]:
        """The rows of one query on `raw` (from `taken`): one snapshot, no transaction kept."""
        try:
            return list(on_raw(raw, self.engine.dialect, statement, [row], read=True))
        except BaseException as exc:
            self._failed(raw, exc)
            raise

    def _failed(self, raw: Any, exc: BaseException) -> None:
        """Nothing of a failed statement kept; the connection given up unless the failure was
        the statement's own (a row refused, a host moved on, the write lock busy)."""
        try:
            raw.rollback()
        except Exception:
            self._drop()
            return
        if not isinstance(exc, IntegrityError | OperationalError | StaleSnapshot):
            self._drop()

    def _drop(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            with contextlib.suppress(Exception):
                held.invalidate()

    def close(self) -> None:
        """Close the connection (a caller using it finishes first): not given back to the pool,
        whose connections wait for the write lock as long as SQLite's busy timeout says."""
        with self._lock:
            self._drop()
