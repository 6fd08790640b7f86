"""Retention: placements released more than `keep` ago are forgotten, a small batch at a time.

A released placement keeps only its id, Idempotency-Key and request hash (its documents are dropped
at release), so that a client replaying the key is told it was released. After `keep` (the
`--keep-released` option, 7 days by default) even that goes: under steady churn the database holds
the live placements and one `keep` of released ones, and does not grow without bound.
"""

from __future__ import annotations

import asyncio
import re
import time
from datetime import timedelta

from starlette.concurrency import run_in_threadpool

from ..store import Store
from ..store.records import utc_now
from .faults import FaultEpisodes
from .logs import LOGGER

PRUNE_BATCH = 200  # placements forgotten per transaction
BATCH_PAUSE_S = 0.05  # between batches: commits are not held up behind a long prune
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")


def parse_duration(text: str) -> float:
    """`"7d"`, `"12h"`, `"30m"`, `"90s"` or `"90"` (seconds) -> seconds; ValueError otherwise."""
    found = _DURATION.match(text.lower())
    if found is None:
        raise ValueError(f"{text!r} is not a duration: give a number and s, m, h, d or w (e.g. 7d)")
    return float(found[1]) * _UNITS[found[2] or "s"]


def prune_every_s(keep_s: float) -> float:
    """How often a worker looks for placements to forget: a tenth of `keep`, 1 s to 60 s."""
    return min(60.0, max(1.0, keep_s / 10))


def prune(store: Store, keep_s: float) -> int:
    """Forget every placement released more than `keep_s` ago, in batches; how many."""
    before = utc_now() - timedelta(seconds=keep_s)
    total = 0
    while True:
        count = store.prune_released(before, PRUNE_BATCH)
        total += count
        if count < PRUNE_BATCH:
            return total
        time.sleep(BATCH_PAUSE_S)


async def prune_forever(store: Store, keep_s: float, episodes: FaultEpisodes) -> None:
    """The worker's retention loop (a task of its lifespan)."""
    while True:
        await asyncio.sleep(prune_every_s(keep_s))
        try:
            count = await run_in_threadpool(prune, store, keep_s)
        except Exception as exc:
            fault = store.fault(exc)
            if fault is None:
                LOGGER.exception("pruning released placements failed")
            else:
                episodes.fault(fault)  # logged once per episode, with the requests' faults
            continue
        if count:
            LOGGER.info("released placements pruned", extra={"pruned": count})
