"""What the store keeps of each placement, over SQLite and PostgreSQL: the list with filters and
pages, the VM Descriptor for rendering, idempotency after a release, an empty inventory, and
hugepages an agent reports counted once."""

from __future__ import annotations

from fastapi.testclient import TestClient
from service_hosts import host, vm
from service_support import auth

from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.vmd import VmDescriptor
from nfvplace.render import render


def test_list_placements_with_filters_and_pages(client: TestClient) -> None:
    for name in ("h1", "h2"):
        client.put(f"/v1/hosts/{name}", json=host(name, cores=8))
    placed = []
    for k in range(5):
        body = {"vm": vm(f"vm-{k % 2}", vcpus=2), "policy": "spread"}
        answer = client.post("/v1/placements", json=body)
        assert answer.status_code == 201, answer.text
        placed.append(answer.json())
    everything = client.get("/v1/placements", headers=auth("reader"))
    assert everything.status_code == 200, everything.text
    assert everything.json()["next"] is None
    assert [p["id"] for p in everything.json()["placements"]] == sorted(p["id"] for p in placed)
    by_vm = client.get("/v1/placements", params={"vm": "vm-1"}).json()["placements"]
    assert sorted(p["id"] for p in by_vm) == sorted(p["id"] for p in placed[1::2])
    on_h2 = client.get("/v1/placements", params={"host": "h2"}).json()["placements"]
    assert on_h2
    assert all(c["host"] == "h2" for p in on_h2 for c in p["configurations"])
    owner = placed[2]["configurations"][0]["instance"]
    assert owner.startswith(placed[2]["id"] + "/")
    by_owner = client.get("/v1/placements", params={"owner": owner}).json()["placements"]
    assert by_owner == [placed[2]]
    pages: list[str] = []
    url: str | None = "/v1/placements?limit=2"
    while url is not None:
        page = client.get(url).json()
        assert len(page["placements"]) <= 2
        pages.extend(p["id"] for p in page["placements"])
        url = page["next"]
    assert pages == sorted(p["id"] for p in placed)
    assert client.delete(f"/v1/placements/{placed[2]['id']}").status_code == 204
    assert client.get("/v1/placements", params={"owner": owner}).json()["placements"] == []
    assert client.get("/v1/placements", params={"limit": 0}).status_code == 422
    assert client.app.state.store.audit() == []


def test_render_carries_the_vm_descriptors_vlans(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    described = vm(vcpus=2, sriov=1)
    described["cpu_sets"][0]["interfaces"][0].update(vlan=412)
    placed = client.post("/v1/placements", json={"vm": described}).json()
    (stored,) = placed["configurations"]
    for target in ("libvirt", "openstack", "vmx"):
        answer = client.get(f"/v1/placements/{placed['id']}/render", params={"format": target})
        assert answer.status_code == 200, answer.text
        (rendered,) = answer.json()["renders"]
        expected = render(
            VmConfiguration.model_validate(stored),
            target,
            vm=VmDescriptor.model_validate(described),
        )
        assert rendered["text"] == expected.text  # what `nfvplace render --vm` prints
        assert rendered["warnings"] == list(expected.warnings)
    libvirt = client.get(f"/v1/placements/{placed['id']}/render").json()["renders"][0]["text"]
    assert '<tag id="412"' in libvirt


def test_replay_after_release_is_409_not_a_dangling_id(client: TestClient) -> None:
    client.put("/v1/hosts/h1", json=host("h1"))
    headers = {"Idempotency-Key": "order-77"}
    first = client.post("/v1/placements", json={"vm": vm()}, headers=headers)
    assert first.status_code == 201
    assert client.delete(f"/v1/placements/{first.json()['id']}").status_code == 204
    again = client.post("/v1/placements", json={"vm": vm()}, headers=headers)
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "nfvplace.placement.released"
    assert again.json()["placement"] == first.json()["id"]
    fresh = client.post(
        "/v1/placements", json={"vm": vm()}, headers={"Idempotency-Key": "order-78"}
    )
    assert fresh.status_code == 201
    assert client.app.state.store.audit() == []


def test_placing_on_an_empty_inventory_is_409_no_fit(client: TestClient) -> None:
    for body in ({"vm": vm()}, {"vm": vm(), "dry_run": True}):
        answer = client.post("/v1/placements", json=body)
        assert answer.status_code == 409, answer.text
        problem = answer.json()
        assert problem["code"] == "nfvplace.placement.no_fit"
        assert problem["diagnosis"]["hosts_considered"] == 0
        assert "no hosts" in problem["detail"]
    client.put("/v1/hosts/h1", json=host("h1"))  # seen by the very next request
    assert client.post("/v1/placements", json={"vm": vm()}).status_code == 201


def test_hugepages_an_agent_reports_are_counted_once(client: TestClient) -> None:
    chd = host("h1", nodes=1, cores=8, pages_1g=8, vfs=0)
    chd["numa_nodes"][0]["memory"]["hugepages"][0]["used"] = 1  # another VM's page
    client.put("/v1/hosts/h1", json=chd)
    placed = client.post("/v1/placements", json={"vm": vm(pages=3, sriov=0)}).json()
    (config,) = placed["configurations"]
    # the agent reports again once our VM runs: its PUs, and its 3 pages in `used`
    seen = host("h1", nodes=1, cores=8, pages_1g=8, vfs=0)
    seen["numa_nodes"][0]["memory"]["hugepages"][0]["used"] = 4
    pins = set(config["cpu_sets"][0]["vcpu_pins"].values())
    for cpu in seen["numa_nodes"][0]["cpus"]:
        if cpu["id"] in pins:
            cpu.update(state="dedicated", owner=config["instance"])
    answer = client.put("/v1/hosts/h1", json=seen)
    assert answer.status_code == 200, answer.text
    assert answer.json()["conflicts"] == []
    pool = answer.json()["chd"]["numa_nodes"][0]["memory"]["hugepages"][0]
    assert (pool["total"], pool["used"]) == (8, 4)  # 1 + 3, not 1 + 3 + 3
    more = [
        client.post("/v1/placements", json={"vm": vm(vcpus=1, pages=2, sriov=0)}) for _ in range(3)
    ]
    assert [a.status_code for a in more] == [201, 201, 409]  # the 4 free pages, used once
    assert client.app.state.store.audit() == []
