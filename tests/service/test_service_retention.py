"""Retention, on SQLite and PostgreSQL: a released placement keeps only what a replay of its key
needs, is forgotten after `keep_released_s` (in batches), and its key then places anew."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from service_hosts import host, vm
from service_support import auth
from sqlalchemy import func, select
from stored import generations

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.service import retention
from nfvplace.service.live import Placer
from nfvplace.service.metrics import Metrics
from nfvplace.service.placing import PlacementRequest, Placements
from nfvplace.store import Store
from nfvplace.store.records import PLACEMENTS

VM = vm(vcpus=2, pages=1, sriov=1)


def rows(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(PLACEMENTS)).scalar_one())


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("7d", 604800), ("12h", 43200), ("30m", 1800), ("90s", 90), ("90", 90), ("1w", 604800)],
)
def test_durations(text: str, seconds: float) -> None:
    assert retention.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "7 days", "-1d", "d", "1y"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not a duration"):
        retention.parse_duration(text)


def test_a_replayed_key_after_pruning_places_anew(
    app_factory: Callable[..., Any], db_url: str
) -> None:
    keyed = {**auth("placer"), "Idempotency-Key": "order-4711"}
    with TestClient(app_factory(db_url, keep_released_s=3600), headers=auth("admin")) as client:
        store: Store = client.app.state.store  # type: ignore[attr-defined]
        client.put("/v1/hosts/h1", json=host("h1"))
        first = client.post("/v1/placements", json={"vm": VM}, headers=keyed).json()
        assert client.delete(f"/v1/placements/{first['id']}").status_code == 204
        replayed = client.post("/v1/placements", json={"vm": VM}, headers=keyed)
        assert replayed.status_code == 409  # released, and still remembered
        assert replayed.json()["code"] == "nfvplace.placement.released"
        with store.engine.connect() as conn:  # only what that answer needs is kept
            kept = conn.execute(select(PLACEMENTS).where(PLACEMENTS.c.id == first["id"])).one()
        assert (kept.response, kept.configurations, kept.descriptor) == ({}, [], None)
        assert kept.idempotency_key == "order-4711"
        assert retention.prune(store, keep_s=3600) == 0  # not old enough
        time.sleep(0.05)
        assert retention.prune(store, keep_s=0.01) == 1
        again = client.post("/v1/placements", json={"vm": VM}, headers=keyed)
        assert again.status_code == 201, again.text  # forgotten: a new request
        assert again.json()["id"] != first["id"]
        assert "idempotent-replayed" not in again.headers
        assert store.audit() == []


def test_pruning_goes_in_batches_and_keeps_the_live(db_url: str, monkeypatch: Any) -> None:
    from nfvplace.models.chd import ComputeHostDescriptor
    from nfvplace.models.vmd import VmDescriptor
    from nfvplace.placement import place

    store = Store.open(db_url)
    try:
        chd = ComputeHostDescriptor.model_validate(host("h1", cores=8, pages_1g=8, vfs=8))
        store.put_host(chd)
        placed = []
        for k in range(7):
            current = store.snapshot()
            result = place(list(current.hosts.values()), VmDescriptor.model_validate(VM))
            store.commit_placement(
                placement_id=f"pl-{k}",
                idempotency_key=f"key-{k}",
                request_hash="",
                response={"id": f"pl-{k}"},
                configurations=result.configurations,
                snapshot=current,
            )
            placed.append(f"pl-{k}")
        for placement_id in placed[:5]:
            assert store.release_placement(placement_id)
        monkeypatch.setattr(retention, "PRUNE_BATCH", 2)
        batches: list[int] = []
        real = store.prune_released

        def counted(before: Any, limit: int) -> int:
            batches.append(real(before, limit))
            return batches[-1]

        monkeypatch.setattr(store, "prune_released", counted)
        time.sleep(0.05)
        assert retention.prune(store, keep_s=0.01) == 5
        assert batches == [2, 2, 1]
        assert rows(store) == 2
        assert [p.id for p in store.list_placements().placements] == placed[5:]
        assert store.find_by_key("key-0") is None
        assert store.audit() == []
    finally:
        store.close()


def test_the_server_prunes_by_itself(app_factory: Callable[..., Any], sqlite_url: str) -> None:
    with TestClient(app_factory(sqlite_url, keep_released_s=0.2), headers=auth("admin")) as client:
        store: Store = client.app.state.store  # type: ignore[attr-defined]
        client.put("/v1/hosts/h1", json=host("h1"))
        for _ in range(3):
            placed = client.post("/v1/placements", json={"vm": VM}).json()
            client.delete(f"/v1/placements/{placed['id']}")
        deadline = time.monotonic() + 10  # every second (a tenth of keep, at least 1 s)
        while rows(store) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert rows(store) == 0


def test_the_server_writes_back_what_it_committed(
    app_factory: Callable[..., Any], sqlite_url: str
) -> None:
    """Commits leave the host's availability document behind its generation; the worker's
    upkeep stores it from its index within a round (`WRITE_BACK_S`)."""
    with TestClient(app_factory(sqlite_url), headers=auth("admin")) as client:
        store: Store = client.app.state.store  # type: ignore[attr-defined]
        client.put("/v1/hosts/h1", json=host("h1"))
        for _ in range(2):
            assert client.post("/v1/placements", json={"vm": VM}).status_code == 201
        deadline = time.monotonic() + 10 * retention.WRITE_BACK_S
        while generations(store, "h1")[1] < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert generations(store, "h1") == (3, 3)
        assert store.audit() == []


def test_the_same_upkeep_catches_up_what_no_worker_wrote_back(
    app_factory: Callable[..., Any],
    sqlite_url: str,
    placer: Placer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A commit made outside the server (a worker that died before writing back) leaves the
    host's document behind; the server's one upkeep loop catches it up by replaying."""
    monkeypatch.setattr(retention, "WRITE_BACK_S", 0.05)
    monkeypatch.setattr(retention, "CATCH_UP_S", 0.2)
    monkeypatch.setattr(retention, "CATCH_UP_QUIET_S", 0.0)
    other = Store.open(sqlite_url)
    try:
        other.put_host(ComputeHostDescriptor.model_validate(host("h1")))
        gone = Placements(other, placer, Metrics(), max_attempts=8)  # never writes back
        request = PlacementRequest(VmDescriptor.model_validate(VM), {"vm": VM})
        assert gone.place(request, None).status == 201
        assert generations(other, "h1") == (2, 1)
        with TestClient(app_factory(sqlite_url), headers=auth("admin")):
            deadline = time.monotonic() + 10
            while generations(other, "h1")[1] < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        assert generations(other, "h1") == (2, 2)
        assert other.audit() == []
    finally:
        other.close()


def test_the_upkeep_checkpoints_sqlites_log_after_each_round(
    app_factory: Callable[..., Any], sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's write-ahead log is checkpointed by the worker's upkeep, between requests, not by
    the commit that happens to take it past SQLite's bound."""
    monkeypatch.setattr(retention, "WRITE_BACK_S", 0.05)
    checkpoints: list[tuple[int, int] | None] = []
    checkpoint = Store.checkpoint

    def counted(store: Store) -> tuple[int, int] | None:
        checkpoints.append(checkpoint(store))
        return checkpoints[-1]

    monkeypatch.setattr(Store, "checkpoint", counted)
    with TestClient(app_factory(sqlite_url), headers=auth("admin")) as client:
        client.put("/v1/hosts/h1", json=host("h1"))
        assert client.post("/v1/placements", json={"vm": VM}).status_code == 201
        deadline = time.monotonic() + 10
        while not any(c and c[0] for c in checkpoints) and time.monotonic() < deadline:
            time.sleep(0.05)
    done = [c for c in checkpoints if c and c[0]]
    assert done, "the upkeep never checkpointed the log"
    log, copied = done[0]
    assert copied == log
