"""`POST /v1/placements` with a batch (placed jointly, claimed at once)."""

from __future__ import annotations

from fastapi.testclient import TestClient
from service_hosts import host, vm
from service_support import auth


def test_batch_is_placed_and_claimed_at_once(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    client.put("/v1/hosts/h2", json=host("h2"))
    body = {"batch": [{"vm": vm(name="a", vcpus=2), "count": 2}, {"vm": vm(name="b", vcpus=2)}]}
    answer = client.post("/v1/placements", json=body, headers=auth("placer"))
    assert answer.status_code == 201, answer.text
    configs = answer.json()["configurations"]
    assert sorted(c["vm"] for c in configs) == ["a", "a", "b"]
    owners = [c["instance"] for c in configs]
    assert len(set(owners)) == 3
    assert client.app.state.store.audit() == []


def test_batch_that_cannot_fit_whole_is_409_and_claims_nothing(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1", pages_1g=2))
    before = client.get("/v1/hosts/h1").json()
    body = {"batch": [{"vm": vm(pages=1), "count": 5}]}
    answer = client.post("/v1/placements", json=body, headers=auth("placer"))
    assert answer.status_code == 409
    assert answer.json()["code"] == "nfvplace.placement.no_fit"
    assert "instance 5/5 does not fit" in answer.json()["detail"]
    assert client.get("/v1/hosts/h1").json() == before


def test_batch_envelope_errors(client: TestClient) -> None:
    for batch in ([], [{"count": 1}], [{"vm": vm(), "count": 0}], [{"vm": vm(), "n": 1}], {}):
        answer = client.post("/v1/placements", json={"batch": batch}, headers=auth("placer"))
        assert answer.status_code == 422, batch
        assert answer.json()["code"] == "nfvplace.service.invalid_request"
