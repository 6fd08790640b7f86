"""A worker's claiming placements run on its placing threads (service/placing.py): one at a time
on SQLite and by default, up to `placing_threads` at once on PostgreSQL, each answered in full."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from service_hosts import host, vm

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.service.live import Placer
from nfvplace.service.metrics import Metrics
from nfvplace.service.placing import Answer, PlacementRequest, Placements
from nfvplace.store import Store

VM = vm(vcpus=2, pages=1, sriov=1)
REQUESTS = 6


class CommitsAtOnce:
    """Wraps a store's commit: each takes 50 ms longer; counts how many ran at once."""

    def __init__(self, store: Store) -> None:
        self.commit = store.commit_placement
        self.running = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, **kwargs: Any) -> None:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(0.05)
            self.commit(**kwargs)
        finally:
            with self.lock:
                self.running -= 1


async def place_all(worker: Placements) -> list[Answer]:
    body = {"vm": VM}
    request = PlacementRequest(VmDescriptor.model_validate(VM), body)
    return await asyncio.gather(*(worker.place_async(request, None) for _ in range(REQUESTS)))


@pytest.mark.parametrize(
    ("db", "threads", "most"),
    [("sqlite", 3, 1), ("postgres", 1, 1), ("postgres", 3, 3)],
)
def test_placing_threads_bound_the_placements_a_worker_runs_at_once(
    request: pytest.FixtureRequest, placer: Placer, db: str, threads: int, most: int
) -> None:
    store = Store.open(request.getfixturevalue(f"{db}_url"))
    worker = Placements(store, placer, Metrics(), max_attempts=8, placing_threads=threads)
    try:
        for k in range(REQUESTS):
            store.put_host(ComputeHostDescriptor.model_validate(host(f"h{k}", vfs=4)))
        commits = CommitsAtOnce(store)
        store.commit_placement = commits  # type: ignore[method-assign]
        answers = asyncio.run(place_all(worker))
        assert [a.status for a in answers] == [201] * REQUESTS
        assert commits.most == most
        assert store.audit() == []
        assert len(store.list_placements().placements) == REQUESTS
    finally:
        worker.close()
        store.close()
