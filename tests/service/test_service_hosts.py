"""`/v1/hosts` over SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
import yaml
from fastapi.testclient import TestClient
from service_hosts import host, vm
from service_support import auth


def _cpu(chd: dict, pu: int) -> dict:
    return next(c for n in chd["numa_nodes"] for c in n["cpus"] if c["id"] == pu)


def test_put_creates_then_replaces_with_generation(client: TestClient) -> None:
    created = client.put("/v1/hosts/h1", json=host("h1"))
    assert created.status_code == 201
    assert created.json()["generation"] == 1
    assert created.headers["location"] == "/v1/hosts/h1"
    replaced = client.put("/v1/hosts/h1", json=host("h1", pages_1g=8))
    assert replaced.status_code == 200
    assert replaced.json()["generation"] == 2
    assert replaced.json()["conflicts"] == []
    got = client.get("/v1/hosts/h1")
    assert got.status_code == 200
    assert got.headers["etag"] == '"2"'
    assert got.json()["chd"]["numa_nodes"][0]["memory"]["hugepages"][0]["total"] == 8


@pytest.mark.parametrize(
    ("second", "moved"),
    [
        pytest.param({}, 0, id="the same report keeps the generation"),
        pytest.param({"pages_1g": 8}, 1, id="a changed report moves it"),
    ],
)
def test_an_unchanged_report_keeps_its_generation(
    client: TestClient, second: dict, moved: int
) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    placed = client.post("/v1/placements", json={"vm": vm(vcpus=2, pages=2)})
    assert placed.status_code == 201
    before = client.get("/v1/hosts/h1")
    again = client.put("/v1/hosts/h1", json=host("h1", **second))
    assert again.status_code == 200
    assert again.json()["generation"] == before.json()["generation"] + moved
    assert again.headers["etag"] == f'"{again.json()["generation"]}"'
    after = client.get("/v1/hosts/h1")
    assert again.json()["chd"] == after.json()["chd"]
    assert (after.json()["chd"] == before.json()["chd"]) == (moved == 0)
    assert again.json()["conflicts"] == []


def test_put_accepts_yaml(client: TestClient) -> None:
    answer = client.put(
        "/v1/hosts/h1",
        content=yaml.safe_dump(host("h1")),
        headers={"Content-Type": "application/yaml"},
    )
    assert answer.status_code == 201, answer.text


def test_list_shows_availability_after_claims(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    client.put("/v1/hosts/h2", json=host("h2"))
    placed = client.post("/v1/placements", json={"vm": vm(vcpus=2, pages=2)})
    assert placed.status_code == 201
    config = placed.json()["configurations"][0]
    hosts = {h["id"]: h for h in client.get("/v1/hosts").json()["hosts"]}
    assert sorted(hosts) == ["h1", "h2"]
    chd = hosts[config["host"]]["chd"]
    for pu in config["cpu_sets"][0]["vcpu_pins"].values():
        assert _cpu(chd, pu)["state"] == "dedicated"
        assert _cpu(chd, pu)["owner"] == config["instance"]
    node = config["cpu_sets"][0]["numa_node"]
    assert chd["numa_nodes"][node]["memory"]["hugepages"][0]["used"] == 2
    assert hosts[config["host"]]["generation"] == 2


def test_put_keeps_claims_and_reports_vanished_vf(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1", vfs=2))
    placed = client.post("/v1/placements", json={"vm": vm(sriov=1)}).json()
    vf = placed["configurations"][0]["interfaces"][0]["pci_address"]
    fresh = client.put("/v1/hosts/h1", json=host("h1", vfs=0))
    assert fresh.status_code == 200
    conflicts = fresh.json()["conflicts"]
    assert len(conflicts) == 1
    assert conflicts[0]["placement"] == placed["id"]
    assert vf in conflicts[0]["message"]
    pins = placed["configurations"][0]["cpu_sets"][0]["vcpu_pins"].values()
    chd = fresh.json()["chd"]
    assert all(_cpu(chd, pu)["state"] == "dedicated" for pu in pins)  # claims kept
    assert client.get(f"/v1/placements/{placed['id']}").status_code == 200


def test_delete_refused_while_placements_hold_resources(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    pid = client.post("/v1/placements", json={"vm": vm()}).json()["id"]
    refused = client.delete("/v1/hosts/h1")
    assert refused.status_code == 409
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["code"] == "nfvplace.host.in_use"
    assert refused.json()["placements"] == [pid]
    assert client.delete(f"/v1/placements/{pid}").status_code == 204
    assert client.delete("/v1/hosts/h1").status_code == 204
    assert client.delete("/v1/hosts/h1").status_code == 404
    assert client.get("/v1/hosts/h1").json()["code"] == "nfvplace.host.not_found"


def test_id_mismatch_and_invalid_chd(client: TestClient) -> None:
    mismatch = client.put("/v1/hosts/other", json=host("h1"))
    assert mismatch.status_code == 422
    assert mismatch.json()["code"] == "nfvplace.host.id_mismatch"
    bad = host("h1")
    bad["numa_nodes"][0]["cpus"][1]["stat"] = "free"
    invalid = client.put("/v1/hosts/h1", json=bad)
    assert invalid.status_code == 422
    body = invalid.json()
    assert body["code"] == "nfvplace.input.invalid"
    finding = body["findings"][0]
    assert finding["path"] == "numa_nodes[0].cpus[1].stat"
    assert finding["hint"] == "did you mean 'state'?"
    assert client.get("/v1/hosts/h1").status_code == 404


def test_reader_cannot_put(client: TestClient) -> None:
    answer = client.put("/v1/hosts/h1", json=host("h1"), headers=auth("reader"))
    assert answer.status_code == 403
    assert answer.json()["code"] == "nfvplace.service.forbidden"


def test_agent_reporting_our_own_claims_is_no_conflict(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    placed = client.post("/v1/placements", json={"vm": vm(sriov=1)}).json()
    config = placed["configurations"][0]
    seen = host("h1")  # what the host itself now shows: our VM holds its PUs and VF
    pins = set(config["cpu_sets"][0]["vcpu_pins"].values())
    vf = config["interfaces"][0]["pci_address"]
    for node in seen["numa_nodes"]:
        for cpu in node["cpus"]:
            if cpu["id"] in pins:
                cpu.update(state="dedicated", owner=config["instance"])
        for port in node["nics"][0]["ports"]:
            for entry in port["vfs"]:
                if entry["pci_address"] == vf:
                    entry.update(in_use=True, owner=config["instance"])
    answer = client.put("/v1/hosts/h1", json=seen)
    assert answer.status_code == 200
    assert answer.json()["conflicts"] == []
    chd = answer.json()["chd"]
    assert all(_cpu(chd, pu)["owner"] == config["instance"] for pu in pins)
    assert client.app.state.store.audit() == []
    # and once released, the host's own report is what is left
    assert client.delete(f"/v1/placements/{placed['id']}").status_code == 204
    assert _cpu(client.get("/v1/hosts/h1").json()["chd"], min(pins))["state"] == "dedicated"


def test_host_ids_with_slashes(client: TestClient) -> None:
    assert (
        client.put("/v1/hosts/rack1/compute-07", json=host("rack1/compute-07")).status_code == 201
    )
    assert client.get("/v1/hosts/rack1/compute-07").json()["id"] == "rack1/compute-07"
    assert client.delete("/v1/hosts/rack1/compute-07").status_code == 204


def test_put_accepts_a_node_resource_topology_object(client: TestClient) -> None:
    from pathlib import Path

    nrt = yaml.safe_load(
        (Path(__file__).parents[2] / "examples" / "kubernetes" / "nrt-worker-1.yaml").read_text()
    )
    answer = client.put(
        "/v1/hosts/worker-1",
        content=yaml.safe_dump(nrt),
        headers={"Content-Type": "application/yaml"},
    )
    assert answer.status_code == 201, answer.text
    chd = answer.json()["chd"]
    assert chd["topology_manager"]["policy"] == "single-numa-node"
    assert len(chd["numa_nodes"][0]["cpus"]) == 32
    wrong = client.put("/v1/hosts/worker-2", json=nrt)
    assert wrong.status_code == 422
    assert wrong.json()["code"] == "nfvplace.host.id_mismatch"
    nrt["zones"][0]["resources"][0]["available"] = "40"  # more than allocatable
    bad = client.put("/v1/hosts/worker-1", json=nrt)
    assert bad.status_code == 422
    assert "capacity >= allocatable >= available" in bad.text
    listed = client.put("/v1/hosts/worker-1", json={"kind": "List", "items": [nrt]})
    assert listed.status_code == 422
