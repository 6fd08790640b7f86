"""The store's upkeep, in each worker: retention of released placements, and availability written
back.

Retention: placements released more than `keep` ago are forgotten, a small batch at a time.

A released placement keeps only its id, Idempotency-Key and request hash (its documents are dropped
at release), so that a client replaying the key is told it was released. After `keep` (the
`--keep-released` option, 7 days by default) even that goes: under steady churn the database holds
the live placements and one `keep` of released ones, and does not grow without bound.

Write-back: a placement's commit stores claim rows and moves its hosts' generations on, not their
availability documents (see `store/availability.py`, whose `write_back` is the one writer of those
documents). One loop of each worker hands it documents (`upkeep_forever`): every `WRITE_BACK_S`,
from the worker's index, the availability of the hosts the worker committed on, and every
`CATCH_UP_S` the hosts nobody wrote back (quiet for `CATCH_UP_QUIET_S`), folded from what the
store holds. The same loop checkpoints SQLite's write-ahead log after each round, so that no
request pays for it. A host's report (`PUT /v1/hosts/{id}`) writes it in its transaction, a release right
after its own.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from datetime import timedelta
from functools import partial

from starlette.concurrency import run_in_threadpool

from ..store import Store
from ..store.records import utc_now
from .faults import FaultEpisodes
from .live import LiveIndex
from .logs import LOGGER

PRUNE_BATCH = 200  # placements forgotten per transaction
# how often a worker stores the availability of the hosts it committed on: each round writes every
# host placed on since the last one, so a host packed by many placements is written once a round
# (0.5 s wrote one host per three placements on the mix, 2 s one per five: docs/benchmarks.md);
# a reader replays on a host's document at most this long of its commits
WRITE_BACK_S = 2.0
CATCH_UP_S = 15.0  # how often it looks for documents that nobody wrote back
CATCH_UP_QUIET_S = 30.0  # ... on hosts no commit touched for this long
CATCH_UP_BATCH = 100  # hosts written back per round (one short transaction each)
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
    await _repeat(
        store, episodes, prune_every_s(keep_s), partial(_prune_logged, store, keep_s), "pruning"
    )


def _prune_logged(store: Store, keep_s: float) -> None:
    count = prune(store, keep_s)
    if count:
        LOGGER.info("released placements pruned", extra={"pruned": count})


async def upkeep_forever(live: LiveIndex, episodes: FaultEpisodes) -> None:
    """The worker's loop that writes hosts' availability documents: what it committed, from its
    index, every `WRITE_BACK_S` (commits write only claim rows; a reader claims on a host's stored
    document what was committed since, so the less there is, the quicker a host is read); and
    every `CATCH_UP_S` the documents no worker wrote back (a worker that died, a commit made
    outside the service), replaying what was committed since. Each round then checkpoints
    SQLite's write-ahead log (`Store.checkpoint`), off the requests' path."""
    rounds = max(1, round(CATCH_UP_S / WRITE_BACK_S))
    turn = 0

    def write() -> None:
        nonlocal turn
        live.write_back()
        turn = (turn + 1) % rounds
        if turn == 0:
            live.store.catch_up(CATCH_UP_BATCH, CATCH_UP_QUIET_S)
        live.store.checkpoint()

    await _repeat(live.store, episodes, WRITE_BACK_S, write, "writing back")


async def _repeat(
    store: Store, episodes: FaultEpisodes, every_s: float, work: Callable[[], object], what: str
) -> None:
    """Run `work` every `every_s` in the thread pool; its database faults are logged once per
    episode, anything else with its traceback."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await run_in_threadpool(work)
        except Exception as exc:
            fault = store.fault(exc)
            if fault is None:
                LOGGER.exception("store upkeep failed", extra={"upkeep": what})
            else:
                episodes.fault(fault)  # logged once per episode, with the requests' faults
