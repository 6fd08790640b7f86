"""Real `nfvplace serve` processes: parallel clients, two workers, kill -9 in the middle."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from service_hosts import host, vm
from service_support import Server, auth, sequential_count

from nfvplace.service.live import Placer
from nfvplace.store import Store

pytestmark = pytest.mark.slow  # real servers and processes: not in the quick subset

CLIENTS = 16


def fleet(count: int) -> list[dict[str, Any]]:
    return [host(f"h{i:02d}", cores=4, pages_1g=4, vfs=4) for i in range(count)]


# One whole core per VM (a howtogroup pair), so a host takes several and clients contend.
VM = vm(vcpus=2, pages=1, sriov=1, paired=True)


def register(url: str, hosts: list[dict[str, Any]]) -> None:
    for chd in hosts:
        answer = httpx.put(f"{url}/v1/hosts/{chd['id']}", json=chd, headers=auth("host-agent"))
        assert answer.status_code == 201, answer.text


def load(
    url: str, stop: threading.Event, acknowledged: list[dict[str, Any]], counts: Counter[str]
) -> None:
    """One client: place until the fleet is full (or the server is gone)."""
    lock = threading.Lock()
    with httpx.Client(base_url=url, headers=auth("placer"), timeout=60) as client:
        while not stop.is_set():
            try:
                answer = client.post("/v1/placements", json={"vm": VM})
            except httpx.HTTPError:
                with lock:
                    counts["transport_error"] += 1
                return
            if answer.status_code == 201:
                with lock:
                    acknowledged.append(answer.json())
                continue
            code = answer.json().get("code")
            with lock:
                counts[str(code)] += 1
            if code == "nfvplace.placement.concurrent_update":
                continue  # the documented client behaviour: retry
            return


def run_clients(
    url: str, stop: threading.Event | None = None
) -> tuple[list[dict[str, Any]], Counter[str]]:
    stop = stop or threading.Event()
    acknowledged: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    threads = [
        threading.Thread(target=load, args=(url, stop, acknowledged, counts))
        for _ in range(CLIENTS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return acknowledged, counts


def same_key_in_parallel(url: str) -> dict[str, Any]:
    """8 retries of one request with the same Idempotency-Key at once: one placement, one answer."""
    answers: list[httpx.Response] = []

    def post() -> None:
        headers = {**auth("placer"), "Idempotency-Key": "same-order"}
        answers.append(httpx.post(f"{url}/v1/placements", json={"vm": VM}, headers=headers))

    threads = [threading.Thread(target=post) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [a.status_code for a in answers] == [201] * 8
    assert all(a.json() == answers[0].json() for a in answers)
    assert sum(a.headers.get("idempotent-replayed") == "true" for a in answers) == 7
    return dict(answers[0].json())


def assert_nothing_held_twice(placements: list[dict[str, Any]]) -> None:
    pus: Counter[tuple[str, int]] = Counter()
    vfs: Counter[tuple[str, str]] = Counter()
    pages: Counter[tuple[str, int]] = Counter()
    for placement in placements:
        for config in placement["configurations"]:
            for cs in config["cpu_sets"]:
                pus.update((config["host"], pu) for pu in cs["vcpu_pins"].values())
                pages[(config["host"], cs["numa_node"])] += cs["hugepages"]["count"]
            vfs.update((config["host"], i["pci_address"]) for i in config["interfaces"])
    assert [k for k, n in pus.items() if n > 1] == []
    assert [k for k, n in vfs.items() if n > 1] == []
    assert [k for k, n in pages.items() if n > 4] == []  # 4 free 1 GiB pages per node


@pytest.mark.parametrize("database", ["postgres", "sqlite"])
def test_parallel_clients_two_workers(
    database: str,
    request: pytest.FixtureRequest,
    serve: Callable[..., Server],
    placer: Placer,
) -> None:
    db = str(request.getfixturevalue(f"{database}_url"))
    hosts = fleet(4)
    server = serve(db, workers=2)
    register(server.url, hosts)
    same_key = same_key_in_parallel(server.url)
    acknowledged, counts = run_clients(server.url)
    assert counts["transport_error"] == 0, server.log()
    assert counts["nfvplace.placement.no_fit"] == CLIENTS  # every client ran until full
    expected = sequential_count(placer, hosts, VM)
    assert expected > CLIENTS  # more VMs fit than there are clients
    assert len(acknowledged) + 1 == expected
    assert_nothing_held_twice([*acknowledged, same_key])
    metrics = httpx.get(f"{server.url}/metrics").text  # summed over both workers
    assert f'nfvplace_placements_total{{outcome="placed"}} {len(acknowledged) + 1}.0' in metrics
    store = Store.open(db, migrate=False)
    try:
        assert store.audit() == []
        live = {h.id for h in store.list_hosts()}
        assert live == {h["id"] for h in hosts}
    finally:
        store.close()


def test_kill_9_during_load_loses_nothing_acknowledged(
    postgres_url: str, serve: Callable[..., Server], placer: Placer
) -> None:
    hosts = fleet(8)
    server = serve(postgres_url, workers=2)
    register(server.url, hosts)
    stop = threading.Event()
    acknowledged: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    threads = [
        threading.Thread(target=load, args=(server.url, stop, acknowledged, counts))
        for _ in range(CLIENTS)
    ]
    for t in threads:
        t.start()
    while len(acknowledged) < 12 and any(t.is_alive() for t in threads):
        threading.Event().wait(0.005)
    server.kill()  # SIGKILL to uvicorn and both workers, mid-load
    for t in threads:
        t.join(timeout=60)
    assert 12 <= len(acknowledged) < sequential_count(placer, hosts, VM), "killed too late"
    assert counts["transport_error"] > 0  # requests were in flight when it died

    store = Store.open(postgres_url, migrate=False)
    try:
        assert store.audit() == []  # nothing half-claimed
    finally:
        store.close()
    restarted = serve(postgres_url, workers=2)
    with httpx.Client(base_url=restarted.url, headers=auth("reader")) as client:
        for placement in acknowledged:
            answer = client.get(f"/v1/placements/{placement['id']}")
            assert answer.status_code == 200
            assert answer.json() == placement
    more, counts = run_clients(restarted.url)
    assert counts["transport_error"] == 0
    store = Store.open(postgres_url, migrate=False)
    try:
        assert store.audit() == []
        with store.engine.connect() as conn:
            from sqlalchemy import text

            live = conn.execute(
                text("SELECT count(*) FROM placements WHERE released_at IS NULL")
            ).scalar_one()
    finally:
        store.close()
    # placements committed but not acknowledged before the kill are kept too; none leaked
    assert live == sequential_count(placer, hosts, VM)
    assert live >= len(acknowledged) + len(more)
