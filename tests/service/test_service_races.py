"""Placements, releases and host reports racing each other through two stores (as two workers)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from service_hosts import host, vm

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.service.live import Placer
from nfvplace.service.metrics import Metrics
from nfvplace.service.placing import PlacementRequest, Placements
from nfvplace.service.problems import ProblemError
from nfvplace.store import Store

HOSTS = [host(f"h{i}", cores=4, pages_1g=4, vfs=4) for i in range(3)]
VM = vm(vcpus=2, pages=1, sriov=1)
EACH = 4  # VMs each placing thread places: 24, where the hosts hold a few at a time


@pytest.fixture
def workers(db_url: str, placer: Placer) -> Iterator[list[Placements]]:
    stores = [Store.open(db_url), Store.open(db_url, migrate=False)]
    for chd in HOSTS:
        stores[0].put_host(ComputeHostDescriptor.model_validate(chd))
    yield [Placements(s, placer, Metrics(), max_attempts=50) for s in stores]
    for s in stores:
        s.close()


def test_place_release_and_host_reports_race_safely(workers: list[Placements]) -> None:
    request = PlacementRequest(descriptor=VmDescriptor.model_validate(VM), body={"vm": VM})
    placed: list[str] = []
    outcomes: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    stop = threading.Event()

    def placing(worker: Placements) -> None:
        """Place EACH VMs, waiting for room (the releases make it) where none is left."""
        deadline = time.monotonic() + 60
        try:
            done = 0
            while done < EACH and time.monotonic() < deadline:
                try:
                    answer = worker.place(request, None)
                except ProblemError as exc:
                    with lock:
                        outcomes.append(exc.code)
                    time.sleep(0.005)
                    continue
                with lock:
                    placed.append(answer.document()["id"])
                    outcomes.append("placed")
                done += 1
        except BaseException as exc:
            errors.append(exc)

    def releasing(worker: Placements) -> None:
        rng = random.Random(1)
        released: set[str] = set()
        try:
            while not stop.is_set():
                with lock:
                    live = sorted(set(placed) - released)
                victim = rng.choice(live) if live else None
                if victim is not None:
                    assert worker.store.release_placement(victim)
                    released.add(victim)
                stop.wait(0.01)
        except BaseException as exc:
            errors.append(exc)

    def reporting(worker: Placements) -> None:
        try:
            while not stop.is_set():
                for chd in HOSTS:
                    put = worker.store.put_host(ComputeHostDescriptor.model_validate(chd))
                    assert put.conflicts == ()  # the same hardware: every claim still fits
                stop.wait(0.01)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=placing, args=(w,)) for w in workers for _ in range(3)]
    others = [
        threading.Thread(target=releasing, args=(workers[1],)),
        threading.Thread(target=reporting, args=(workers[0],)),
    ]
    for t in threads + others:
        t.start()
    for t in threads:
        t.join(timeout=120)
    stop.set()
    for t in others:
        t.join(timeout=30)
    assert errors == []
    assert outcomes.count("placed") == EACH * len(threads)  # every thread placed its share
    assert set(outcomes) <= {"placed", "nfvplace.placement.no_fit"}
    store = workers[0].store
    assert store.audit() == []  # nothing held twice, counters and availability consistent
    live: list[dict[str, Any]] = [
        dict(record.response) for pid in placed if (record := store.get_placement(pid)) is not None
    ]
    pus = [
        (c["host"], pu)
        for p in live
        for c in p["configurations"]
        for pu in c["cpu_sets"][0]["vcpu_pins"].values()
    ]
    assert len(pus) == len(set(pus))
