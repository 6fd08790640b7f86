"""`POST /v1/placements` with a batch (placed jointly, claimed at once)."""

from __future__ import annotations

from pathlib import Path

import yaml
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
    client.put("/v1/hosts/h1", json=host("h1", cores=5, pages_1g=2))  # pages for 4: 2 a node
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


def test_capacity_is_read_only_and_says_what_runs_out(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1", cores=12, vfs=8, pages_1g=2))
    client.put("/v1/hosts/h2", json=host("h2", pages_1g=0))
    before = client.get("/v1/hosts/h1").json()
    answer = client.post("/v1/capacity", json={"vm": vm(pages=1)}, headers=auth("reader"))
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "vm": "dp-vm",
        "count": 4,
        "hosts": [{"host": "h1", "count": 4, "limited_by": "hugepages"}],
    }
    assert client.get("/v1/hosts/h1").json() == before
    bad = client.post("/v1/capacity", json={"vm": vm(), "dry_run": True}, headers=auth("reader"))
    assert bad.status_code == 422


def test_dry_run_with_moves_advises_and_moves_nothing(client: TestClient) -> None:
    for name in ("h1", "h2"):  # one "old" VM on each host
        client.put(f"/v1/hosts/{name}", json=host(name, nodes=1, cores=7, vfs=4))
        placed = client.post(
            "/v1/placements",
            json={"vm": vm(name="old", vcpus=2), "policy": "spread"},
            headers=auth("placer"),
        )
        assert placed.status_code == 201, placed.text
    before = client.get("/v1/hosts").json()
    big = {"vm": vm(name="big", vcpus=6), "dry_run": True}
    assert client.post("/v1/placements", json=big, headers=auth("placer")).status_code == 409
    answer = client.post("/v1/placements", json={**big, "moves": True}, headers=auth("placer"))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    (move,) = body["moves"]
    assert move["from"] != move["to"]
    assert body["configurations"][0]["host"] == move["from"]
    assert client.get("/v1/hosts").json() == before
    bad = client.post("/v1/placements", json={"vm": vm(), "moves": True}, headers=auth("placer"))
    assert bad.status_code == 422


def test_dry_run_batch_of_capacity_fits_and_one_more_is_409(client: TestClient) -> None:
    # issue 37: on examples/fleet, capacity counts 164 instances of a 1-vCPU VM; a dry-run batch
    # of 100 failed at instance 61
    fleet = Path(__file__).resolve().parents[2] / "examples" / "fleet"
    for chd in sorted(fleet.glob("*.yaml")):
        data = yaml.safe_load(chd.read_text())
        assert client.put(f"/v1/hosts/{data['id']}", json=data).status_code == 201
    tiny = {"schema": "nfvplace/vmd/v1", "name": "tiny", "vcpus": 1, "memory_mib": 256}
    before = client.get("/v1/hosts").json()
    capacity = client.post("/v1/capacity", json={"vm": tiny}, headers=auth("reader")).json()
    assert capacity["count"] == 164
    for count in (100, 164):
        body = {"batch": [{"vm": tiny, "count": count}], "dry_run": True}
        answer = client.post("/v1/placements", json=body, headers=auth("placer"))
        assert answer.status_code == 200, answer.text
        assert len(answer.json()["configurations"]) == count
    body = {"batch": [{"vm": tiny, "count": 165}], "dry_run": True}
    refused = client.post("/v1/placements", json=body, headers=auth("placer"))
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "nfvplace.placement.no_fit"
    detail = refused.json()["detail"]
    assert "instance 165/165 does not fit (164 instances of tiny fit" in detail, detail
    assert "vSwitch" not in detail
    assert client.get("/v1/hosts").json() == before
