"""Database faults as the API answers them: 503 with `Retry-After` and a stable code, and one log
line per fault episode (when the database starts failing and when it serves again), not a
traceback per request."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from starlette.concurrency import run_in_threadpool

from ..store import Store
from ..store.faults import CommitOutcomeUnknownError, StoreFault
from .logs import LOGGER

PROBE_EVERY_S = 2.0  # /readyz writes to the database at most this often per worker
QUIET_S = 1.0  # a fault episode ends after this long without a fault


class FaultEpisodes:
    """A worker's view of its database: healthy, or in a fault episode since its first fault.

    An episode is logged when it starts (and once more for each other kind of fault met in it),
    and when it ends: at the first request served that began after the last fault, once no fault
    was met for `QUIET_S` (a database that fails every other request is still in its episode)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: StoreFault | None = None
        self._codes: set[str] = set()
        self._since = 0.0
        self._last = 0.0
        self._answers = 0

    @property
    def last_fault(self) -> float:
        """When (monotonic) the last fault was met; 0 if never."""
        return self._last

    def fault(self, fault: StoreFault) -> None:
        """A request failed on `fault`: the first of an episode (or of a new kind) is logged."""
        with self._lock:
            self._answers += 1
            self._last = time.monotonic()
            if self._open is None:
                self._since = self._last
                self._codes = set()
            self._open = fault
            if fault.code in self._codes:
                return
            self._codes.add(fault.code)
        LOGGER.warning(
            "database fault", extra={"code": fault.code, "reason": fault.reason, "answered": 503}
        )

    def served(self, started: float) -> None:
        """A request that used the database, begun at `started` (monotonic), was served."""
        if self._open is None:  # the common case, without the lock
            return
        with self._lock:
            if (
                self._open is None
                or started < self._last
                or time.monotonic() - self._last < QUIET_S
            ):
                return
            codes, answers, since = sorted(self._codes), self._answers, self._since
            self._open, self._answers = None, 0
        LOGGER.warning(
            "database serves again",
            extra={
                "codes": codes,
                "after_s": round(time.monotonic() - since, 2),
                "answered_503": answers,
            },
        )


def fault_extra(exc: BaseException) -> dict[str, Any]:
    """Members the problem document adds for this fault (the placement an unknown commit made)."""
    if isinstance(exc, CommitOutcomeUnknownError):
        return dict(exc.extra)
    return {}


class Readiness:
    """Whether the store accepts a write, probed at most every `PROBE_EVERY_S` (a load balancer
    may ask many times a second; concurrent asks share one probe), and again as soon as a request
    met a database fault."""

    def __init__(self, store: Store, episodes: FaultEpisodes) -> None:
        self.store = store
        self.episodes = episodes
        self._lock = asyncio.Lock()
        self._at = -PROBE_EVERY_S
        self._error: Exception | None = None

    async def check(self) -> Exception | None:
        """None when the store took the last probe's write, else what it raised."""
        async with self._lock:
            # probed again when due, or at once when a request met a fault since
            if time.monotonic() - self._at >= PROBE_EVERY_S or self.episodes.last_fault > self._at:
                try:
                    await run_in_threadpool(self.store.check_writable)
                    self._error = None
                except Exception as exc:
                    self._error = exc
                self._at = time.monotonic()
            return self._error
