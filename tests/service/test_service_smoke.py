from __future__ import annotations

from fastapi.testclient import TestClient
from fleet import host, vm


def test_place_and_release(client: TestClient) -> None:
    assert client.put("/v1/hosts/h1", json=host("h1")).status_code == 201
    answer = client.post("/v1/placements", json={"vm": vm()})
    assert answer.status_code == 201, answer.text
    pid = answer.json()["id"]
    assert client.delete(f"/v1/placements/{pid}").status_code == 204
    assert client.delete(f"/v1/placements/{pid}").status_code == 404
    assert client.app.state.store.audit() == []
