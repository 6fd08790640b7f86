"""The Nova plug-ins' client (`nfvplace.integrations.nova.client`) against a real `nfvplace serve`:
hosts the service holds go by digest, a digest it does not hold is sent again in full after its
409, and a cold request too large for one body goes in parts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from nfvplace.integrations.nova import client as nova_client
from nfvplace.integrations.nova.client import EvaluationClient, digest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from service_hosts import host

FLAVOR = {
    "flavor": {
        "name": "dp",
        "vcpus": 2,
        "ram": 2048,
        "extra_specs": {"hw:cpu_policy": "dedicated"},
    }
}


@pytest.fixture
def posts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, set[str]]]:
    """Each request the client makes: (hosts, digests sent in full)."""
    sent: list[tuple[int, set[str]]] = []
    original = EvaluationClient._post

    def recording(self: EvaluationClient, vm: Any, hosts: Any, inline: set[str]) -> Any:
        sent.append((len(hosts), set(inline)))
        return original(self, vm, hosts, inline)

    monkeypatch.setattr(EvaluationClient, "_post", recording)
    return sent


def _client(live_service: tuple[str, Path]) -> EvaluationClient:
    url, token_file = live_service
    return EvaluationClient(url, str(token_file), timeout=60.0)


def test_hosts_go_in_full_once_then_by_digest(
    live_service: tuple[str, Path], posts: list[tuple[int, set[str]]]
) -> None:
    hosts = [host(f"c{k}", cores=2 + k) for k in range(3)]
    ask = _client(live_service)
    first = ask.evaluate(FLAVOR, hosts)
    hosts[1] = host("c1", cores=7)  # the next request: one host changed
    second = ask.evaluate(FLAVOR, hosts)
    assert [a.host for a in first] == [a.host for a in second] == ["c0", "c1", "c2"]
    assert posts[0] == (3, {digest(h)[0] for h in [host(f"c{k}", cores=2 + k) for k in range(3)]})
    assert posts[1] == (3, {digest(hosts[1])[0]})


def test_a_digest_the_service_does_not_hold_is_sent_again_in_full(
    live_service: tuple[str, Path], posts: list[tuple[int, set[str]]]
) -> None:
    hosts = [host("never-sent", cores=5)]
    ask = _client(live_service)
    ask.refs.add([digest(hosts[0])[0]])  # believed held, as after the service restarted
    (answer,) = ask.evaluate(FLAVOR, hosts)
    assert answer.host == "never-sent"
    assert posts == [(1, set()), (1, {digest(hosts[0])[0]})]


def test_a_cold_request_too_large_for_one_body_goes_in_parts(
    live_service: tuple[str, Path],
    posts: list[tuple[int, set[str]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hosts = [host(f"p{k}", cores=2 + k % 5, pages_1g=k % 3) for k in range(10)]
    size = max(len(digest(h)[1]) for h in hosts)
    monkeypatch.setattr(nova_client, "CHUNK_BYTES", 4 * size)
    answers = _client(live_service).evaluate(FLAVOR, hosts)
    assert [a.host for a in answers] == [f"p{k}" for k in range(10)]
    *parts, last = posts
    assert len(parts) >= 2
    assert sum(n for n, _ in parts) == 10
    assert last == (10, set())  # every host by digest


def test_a_second_409_sends_every_host_in_full(
    live_service: tuple[str, Path],
    posts: list[tuple[int, set[str]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As when the retry reaches another worker, which lacks other hosts: a third request sends
    every host in full, and no 409 escapes to the filter."""
    hosts = [host("w1", cores=9), host("w2", cores=11)]  # shapes no other test sends
    refs = [digest(h)[0] for h in hosts]
    ask = _client(live_service)
    ask.refs.add(refs[:1])
    recording = EvaluationClient._post

    def another_worker(self: EvaluationClient, vm: Any, sent: Any, inline: set[str]) -> Any:
        if len(posts) == 1:  # the retry: answered by a worker that lacks w2
            posts.append((len(sent), set(inline)))
            raise nova_client._UnknownRefsError(refs[1:])
        return recording(self, vm, sent, inline)

    monkeypatch.setattr(EvaluationClient, "_post", another_worker)
    answers = ask.evaluate(FLAVOR, hosts)
    assert [a.host for a in answers] == ["w1", "w2"]
    assert posts == [(2, {refs[1]}), (2, set(refs)), (2, set(refs))]
