"""A worker's placements on the event loop through SQLite's lane (store/lane.py) answer what they
answered through the pool, another worker's commits in between included: the lane's change feed
leaves out only the lane's own commits."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from service_hosts import host, vm

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.service import live, placing
from nfvplace.service.live import Placer
from nfvplace.service.metrics import Metrics
from nfvplace.service.placing import PlacementRequest, Placements
from nfvplace.service.problems import ProblemError
from nfvplace.store import Store

SHAPES = [
    vm("a", vcpus=2, pages=1, sriov=1),
    vm("b", vcpus=4, pages=0, sriov=0),
    vm("c", vcpus=2, pages=2, sriov=2),
]


def request(k: int) -> PlacementRequest:
    body = {"vm": SHAPES[k % len(SHAPES)]}
    return PlacementRequest(VmDescriptor.model_validate(body["vm"]), body)


def run(url: str, placer: Placer, steps: int) -> list[tuple[str, int, Any]]:
    """Worker A places on the event loop (on its placing path where it cannot), worker B (another
    connection, as another process) every third request: each answer, in turn."""
    first = Store.open(url)
    for name in ("h0", "h1", "h2"):
        first.put_host(ComputeHostDescriptor.model_validate(host(name, cores=8, pages_1g=6, vfs=8)))
    stores = [first, Store.open(url, migrate=False)]
    workers = [Placements(s, placer, Metrics(), max_attempts=8) for s in stores]
    answers: list[tuple[str, int, Any]] = []
    try:
        for worker in workers:
            worker.live.refresh()
        for k in range(steps):
            other = k % 3 == 2
            worker = workers[1 if other else 0]
            try:
                answer = None if other else worker.place_inline(request(k), None)
                how = "B" if other else ("A inline" if answer is not None else "A placing")
                if answer is None:
                    answer = worker.place(request(k), None)
                answers.append((how, answer.status, answer.document()["configurations"]))
            except ProblemError as exc:
                answers.append(("refused", exc.status, exc.code))
        assert all(s.audit() == [] for s in stores)
    finally:
        for store in stores:
            store.close()
    return answers


def test_placements_on_the_lane_answer_as_through_the_pool(
    tmp_path: Any, placer: Placer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "STALE_S", 3600.0)  # stale hosts read when needed, not by the clock
    ids = itertools.count()
    monkeypatch.setattr(placing, "new_placement_id", lambda: f"pl-{next(ids):04d}")
    used: list[bool] = []
    lane = Store.lane

    def watched(store: Store, timeout_s: float) -> Any:
        found = lane(store, timeout_s)
        used.append(found is not None)
        return found

    monkeypatch.setattr(Store, "lane", watched)
    on_lane = run(f"sqlite:///{tmp_path / 'lane.db'}", placer, 40)
    assert used
    assert all(used)
    ids = itertools.count()
    monkeypatch.setattr(Store, "lane", lambda _store, _timeout_s: None)
    on_pool = run(f"sqlite:///{tmp_path / 'pool.db'}", placer, 40)
    assert on_lane == on_pool
    hows = {how for how, _status, _configs in on_lane}
    assert {"A inline", "B", "refused"} <= hows  # the fleet filled, B's hosts read by A
