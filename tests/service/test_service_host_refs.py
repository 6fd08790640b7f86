"""`POST /v1/evaluations` with hosts by the digest of their CHD, gzip-compressed, and its own body
limit (nfvplace/service/host_refs.py): what a scheduler asking about a thousand hosts sends."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from service_hosts import host, vm
from service_support import auth

from nfvplace.integrations.nova.client import digest
from nfvplace.service import host_refs


def _post(client: TestClient, body: Any, compress: bool = False) -> Any:
    data = json.dumps(body).encode()
    headers = {**auth("reader"), "Content-Type": "application/json"}
    if compress:
        data = gzip.compress(data)
        headers["Content-Encoding"] = "gzip"
    return client.post("/v1/evaluations", content=data, headers=headers)


def _full(chd: dict[str, Any]) -> dict[str, Any]:
    ref, _ = digest(chd)
    return {"id": chd["id"], "ref": ref, "chd": {k: v for k, v in chd.items() if k != "id"}}


def _ref(chd: dict[str, Any]) -> dict[str, Any]:
    return {"id": chd["id"], "ref": digest(chd)[0]}


def test_hosts_by_digest_answer_as_the_hosts_in_full(sqlite_client: TestClient) -> None:
    hosts = [host("small", cores=2), host("big", cores=8), host("full", pages_1g=0)]
    plain = _post(sqlite_client, {"vm": vm(vcpus=2, sriov=0), "hosts": hosts})
    assert plain.status_code == 200, plain.text
    first = _post(sqlite_client, {"vm": vm(vcpus=2, sriov=0), "hosts": [_full(h) for h in hosts]})
    assert first.json() == plain.json()
    again = _post(
        sqlite_client, {"vm": vm(vcpus=4, sriov=0), "hosts": [_ref(h) for h in hosts]}, True
    )
    assert again.status_code == 200, again.text
    assert [a["host"] for a in again.json()["hosts"]] == ["small", "big", "full"]


def test_a_digest_the_service_does_not_hold_is_a_409_naming_it(sqlite_client: TestClient) -> None:
    known, unknown = host("known"), host("unknown", cores=6)
    assert _post(sqlite_client, {"vm": vm(sriov=0), "hosts": [_full(known)]}).status_code == 200
    answer = _post(sqlite_client, {"vm": vm(sriov=0), "hosts": [_ref(known), _ref(unknown)]})
    assert answer.status_code == 409
    problem = answer.json()
    assert problem["code"] == "nfvplace.service.unknown_host_ref"
    assert problem["refs"] == [digest(unknown)[0]]


def test_a_host_in_full_under_another_digest_is_refused(sqlite_client: TestClient) -> None:
    wrong = {**_full(host("a")), "ref": digest(host("b", cores=6))[0]}
    answer = _post(sqlite_client, {"vm": vm(sriov=0), "hosts": [wrong]})
    assert answer.status_code == 422
    assert "not the digest of its chd" in answer.json()["detail"]
    assert host_refs.HOSTS.get(wrong["ref"]) is None


def test_a_host_in_full_with_its_keys_in_another_order_is_checked_the_long_way(
    sqlite_client: TestClient,
) -> None:
    chd = host("unsorted", cores=3)
    item = _full(chd)
    item["chd"] = dict(reversed(list(item["chd"].items())))  # not the canonical JSON's order
    answer = _post(sqlite_client, {"vm": vm(sriov=0), "hosts": [item]})
    assert answer.status_code == 200, answer.text
    held = host_refs.HOSTS.get(item["ref"])
    assert held is not None
    assert held.text == digest(chd)[1]  # kept as its canonical JSON
    inside = host("id-inside", cores=11)
    with_id = {**_full(inside), "chd": inside}  # the digest is of the CHD with its id aside
    answer = _post(sqlite_client, {"vm": vm(sriov=0), "hosts": [with_id]})
    assert answer.status_code == 200, answer.text
    found = host_refs.HOSTS.get(with_id["ref"])
    assert found is not None
    assert found.text == digest(inside)[1]


def test_a_held_host_is_read_once_for_every_flavor(
    sqlite_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nfvplace.service.routers import evaluations

    hosts = [host("once-a", cores=7), host("once-b", cores=9)]  # shapes no other test sends
    first = _post(sqlite_client, {"vm": vm(vcpus=2, sriov=0), "hosts": [_full(h) for h in hosts]})
    assert first.status_code == 200, first.text
    read: list[object] = []
    chd_of = evaluations._chd  # the route's reading of one host
    monkeypatch.setattr(evaluations, "_chd", lambda i, h: read.append(h) or chd_of(i, h))
    again = _post(sqlite_client, {"vm": vm(vcpus=4, sriov=0), "hosts": [_ref(h) for h in hosts]})
    assert again.status_code == 200, again.text
    assert read == []  # another flavor, the same hosts: none read again
    renamed = {**_ref(hosts[0]), "id": "once-c"}  # the same host under another id: read for it
    third = _post(sqlite_client, {"vm": vm(vcpus=6, sriov=0), "hosts": [renamed]})
    assert [a["host"] for a in third.json()["hosts"]] == ["once-c"]
    assert len(read) == 1


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ({"id": "a", "ref": 5}, "must be a CHD"),
        ({"id": "a", "ref": "x", "extra": 1}, "['extra']"),
        ({"id": "a", "ref": "x", "chd": []}, "chd must be an object"),
    ],
)
def test_a_malformed_reference_says_what_to_send(
    sqlite_client: TestClient, item: dict[str, Any], words: str
) -> None:
    answer = _post(sqlite_client, {"vm": vm(sriov=0), "hosts": [item]})
    assert answer.status_code == 422
    assert words in answer.json()["detail"]


def test_a_body_that_is_not_gzip_or_inflates_past_the_bound_is_refused(
    sqlite_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers = {**auth("reader"), "Content-Type": "application/json", "Content-Encoding": "gzip"}
    answer = sqlite_client.post("/v1/evaluations", content=b"not gzip", headers=headers)
    assert answer.status_code == 422
    from nfvplace.service.routers import evaluations

    monkeypatch.setattr(evaluations, "MAX_EVALUATION_JSON_BYTES", 1000)
    bomb = gzip.compress(b" " * 100_000)
    answer = sqlite_client.post("/v1/evaluations", content=bomb, headers=headers)
    assert answer.status_code == 413
    assert answer.json()["code"] == "nfvplace.input.too_large"


def test_the_evaluation_route_has_its_own_body_limit(sqlite_client: TestClient) -> None:
    """Past the 2 MiB of other routes, within the evaluation route's 16 MiB."""
    hosts = [host(f"h{k}", cores=8) for k in range(700)]
    body = {"vm": vm(vcpus=2, sriov=0), "hosts": hosts}
    assert len(json.dumps(body)) > 2 * 1024 * 1024
    answer = _post(sqlite_client, body)
    assert answer.status_code == 200, answer.text[:300]
    big = json.dumps({"x": "y" * (2 * 1024 * 1024)})
    other = sqlite_client.post(
        "/v1/lint", content=big, headers={**auth("reader"), "Content-Type": "application/json"}
    )
    assert other.status_code == 413


def test_answers_without_configurations_for_a_scheduler(sqlite_client: TestClient) -> None:
    hosts = [host("small", cores=2), host("big", cores=8)]
    full = _post(sqlite_client, {"vm": vm(vcpus=2, sriov=0), "hosts": hosts}).json()["hosts"]
    body = {"vm": vm(vcpus=2, sriov=0), "hosts": hosts, "configurations": False}
    lean = _post(sqlite_client, body).json()["hosts"]
    assert [a["configuration"] for a in lean] == [None, None]
    assert [a["configuration"] is not None for a in full] == [True, True]
    assert [{**a, "configuration": None} for a in full] == lean
    refused = _post(sqlite_client, {**body, "configurations": "no"})
    assert refused.status_code == 422
