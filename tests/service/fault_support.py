"""Clients that place and release as a MANO would through faults (an Idempotency-Key on every POST,
the same request sent again after a 503 or a broken connection until it gets an answer), and the
invariants checked after each fault scenario."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
from service_hosts import host, vm
from service_support import auth

from nfvplace.store import Store

VM = vm(vcpus=2, pages=1, sriov=1)
CLIENTS = 8
HELD = 3  # placements each client holds at most: it releases its oldest before placing more
STORE_CODES = {
    "nfvplace.store.unavailable",
    "nfvplace.store.busy",
    "nfvplace.store.full",
    "nfvplace.store.read_only",
    "nfvplace.store.outcome_unknown",
}
GIVE_UP_S = 90.0  # a request still unanswered after this long fails the test


def fleet(count: int = 10) -> list[dict[str, Any]]:
    """Room for four such VMs per host: more than the clients ever hold together."""
    return [host(f"h{k:02d}") for k in range(count)]


def register(url: str, hosts: list[dict[str, Any]]) -> None:
    with httpx.Client(base_url=url, headers=auth("host-agent"), timeout=60) as client:
        for chd in hosts:
            answer = client.put(f"/v1/hosts/{chd['id']}", json=chd)
            assert answer.status_code == 201, answer.text


@dataclass
class Tally:
    """What the clients saw, shared between their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    placed: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> the 201's body
    released: set[str] = field(default_factory=set)  # acknowledged releases (204, or 404 after)
    answers: Counter[str] = field(default_factory=Counter)  # status or code -> count
    successes: list[float] = field(default_factory=list)  # monotonic times of 2xx answers
    problems: list[str] = field(default_factory=list)  # what must never happen

    def count(self, what: str) -> None:
        with self.lock:
            self.answers[what] += 1


class Load:
    """`CLIENTS` threads placing and releasing on `urls` (each client sticks to one until it
    fails in transport, then moves to the next, as behind a load balancer) until stopped."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.stop = threading.Event()
        self.tally = Tally()
        self.threads = [
            threading.Thread(target=self._client, args=(k,), daemon=True) for k in range(CLIENTS)
        ]

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=GIVE_UP_S + 30)
        assert not any(t.is_alive() for t in self.threads), "a client never got its answer"

    def wait_for(self, placed: int, timeout: float = 60) -> None:
        """Until `placed` more placements were acknowledged."""
        goal = len(self.tally.placed) + placed
        deadline = time.monotonic() + timeout
        while len(self.tally.placed) < goal:
            assert time.monotonic() < deadline, f"load stalled: {self.tally.answers}"
            time.sleep(0.02)

    def _client(self, k: int) -> None:
        held: list[str] = []
        server = k % len(self.urls)
        client = httpx.Client(base_url=self.urls[server], headers=auth("placer"), timeout=30)
        try:
            while not self.stop.is_set():
                if len(held) >= HELD:
                    released = held.pop(0)
                    client, server = self._until_answered(client, server, "DELETE", released)
                    continue
                client, server = self._until_answered(client, server, "POST", None, held)
        finally:
            client.close()

    def _until_answered(
        self,
        client: httpx.Client,
        server: int,
        method: str,
        placement: str | None,
        held: list[str] | None = None,
    ) -> tuple[httpx.Client, int]:
        """Send one request (again and again, with the same key) until it has an answer."""
        key = f"key-{uuid.uuid4().hex}"
        deadline = time.monotonic() + GIVE_UP_S
        tally = self.tally
        tries = 0
        while True:
            tries += 1
            if time.monotonic() > deadline:
                with tally.lock:
                    tally.problems.append(f"{method} unanswered for {GIVE_UP_S} s")
                return client, server
            try:
                if method == "POST":
                    answer = client.post(
                        "/v1/placements", json={"vm": VM}, headers={"Idempotency-Key": key}
                    )
                else:
                    answer = client.delete(f"/v1/placements/{placement}")
            except httpx.TransportError:
                tally.count("transport error")
                client.close()  # another server, as a load balancer would pick
                server = (server + 1) % len(self.urls)
                client = httpx.Client(
                    base_url=self.urls[server], headers=auth("placer"), timeout=30
                )
                time.sleep(0.1)
                continue
            if answer.status_code == 503:
                code = answer.json().get("code")
                tally.count(str(code))
                if code not in STORE_CODES or "retry-after" not in answer.headers:
                    with tally.lock:
                        tally.problems.append(f"503 without a store code: {answer.text}")
                time.sleep(min(float(answer.headers.get("retry-after", 1)), 1.0) * random.random())
                continue
            tally.count(str(answer.status_code))
            self._record(answer, method, placement, held, tries)
            return client, server

    def _record(
        self,
        answer: httpx.Response,
        method: str,
        placement: str | None,
        held: list[str] | None,
        tries: int,
    ) -> None:
        tally = self.tally
        with tally.lock:
            if method == "POST" and answer.status_code == 201:
                body = answer.json()
                tally.placed[body["id"]] = body
                tally.successes.append(time.monotonic())
                assert held is not None
                held.append(body["id"])
            elif method == "DELETE" and answer.status_code in ((204, 404) if tries > 1 else (204,)):
                # 404 after a first try: that try was committed before its answer was lost
                assert placement is not None
                tally.released.add(placement)
                tally.successes.append(time.monotonic())
            else:
                tally.problems.append(f"{method}: {answer.status_code} {answer.text[:300]}")


def check_invariants(db: str, tally: Tally) -> None:
    """Every acknowledged placement is there (and nothing else is), nothing is held twice, and
    every host's availability is its report with exactly those placements claimed."""
    assert tally.problems == []
    store = Store.open(db, migrate=False)
    try:
        assert store.audit() == []  # no double claim, no half-written host
        live = {p.id: dict(p.response) for p in _all_live(store)}
    finally:
        store.close()
    expected = {k: v for k, v in tally.placed.items() if k not in tally.released}
    assert sorted(live) == sorted(expected)  # none lost, none made behind the clients' backs
    assert live == expected  # each as its 201 said


def _all_live(store: Store) -> list[Any]:
    out = []
    after = None
    while True:
        page = store.list_placements(after=after, limit=1000)
        out.extend(page.placements)
        if page.next_after is None:
            return out
        after = page.next_after


def served_again_within(tally: Tally, back_at: float) -> float:
    """Seconds from the database's return to the first answer that needed it."""
    later = [t for t in tally.successes if t >= back_at]
    assert later, "never served again"
    return min(later) - back_at


def log_lines(log: str, message: str) -> int:
    return sum(f'"msg":"{message}"' in line for line in log.splitlines())
