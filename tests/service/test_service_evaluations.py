"""`POST /v1/evaluations`: every candidate host's answer for one VM, hosts inline, nothing claimed."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from service_hosts import host, vm
from service_support import auth

import nfvplace
from nfvplace.models import ComputeHostDescriptor, VmDescriptor

FLAVOR = {
    "flavor": {
        "name": "dp",
        "vcpus": 2,
        "ram": 2048,
        "extra_specs": {"hw:cpu_policy": "dedicated", "hw:mem_page_size": "1GB"},
    }
}


def _post(client: TestClient, body: dict[str, Any], role: str = "reader") -> Any:
    return client.post("/v1/evaluations", json=body, headers=auth(role))


def test_every_host_is_answered_in_order_as_the_library_answers(sqlite_client: TestClient) -> None:
    hosts = [host("full", pages_1g=0), host("small", cores=2), host("big", cores=8)]
    answer = _post(sqlite_client, {"vm": vm(vcpus=2, sriov=0), "hosts": hosts})
    assert answer.status_code == 200, answer.text
    got = answer.json()["hosts"]
    assert [a["host"] for a in got] == ["full", "small", "big"]
    library = nfvplace.evaluate(
        [ComputeHostDescriptor.model_validate(h) for h in hosts],
        VmDescriptor.model_validate(vm(vcpus=2, sriov=0)),
    )
    assert got == [a.to_dict() for a in library]
    full, small, big = got
    assert not full["fits"]
    assert full["score"] == 0
    assert full["reasons"]
    assert small["fits"]
    assert big["fits"]
    assert max(small["score"], big["score"]) == 100
    assert big["configuration"]["host"] == "big"


def test_nothing_is_claimed_and_the_inventory_is_not_used(sqlite_client: TestClient) -> None:
    body = {"vm": vm(vcpus=2, sriov=0), "hosts": [host("h", cores=2)]}
    first = _post(sqlite_client, body).json()
    assert _post(sqlite_client, body).json() == first
    assert sqlite_client.get("/v1/hosts", headers=auth("reader")).json() == {"hosts": []}
    assert sqlite_client.get("/v1/placements", headers=auth("reader")).json()["placements"] == []


def test_answers_without_configurations_are_kept_apart(sqlite_client: TestClient) -> None:
    hosts = [host("full", pages_1g=0), host("small", cores=2), host("big", cores=8)]
    body = {"vm": vm(vcpus=3, sriov=0), "hosts": hosts}
    verdicts = _post(sqlite_client, {**body, "configurations": False}).json()["hosts"]
    full = _post(sqlite_client, body).json()["hosts"]  # not the verdicts kept just before
    assert [a["configuration"] for a in verdicts] == [None, None, None]
    assert full[2]["configuration"]["host"] == "big"
    assert [{**a, "configuration": None} for a in full] == verdicts
    again = _post(sqlite_client, {**body, "configurations": False}).json()["hosts"]
    assert again == verdicts


def test_a_dialect_vm_is_read_by_its_reader(sqlite_client: TestClient) -> None:
    hosts = [host("a"), host("b", pages_1g=1)]
    for chd in hosts:  # what a flavor with hugepages asks of the hypervisor
        chd["hypervisor"]["capabilities"] += ["numa_memory_pinning"]
    body = {"vm": FLAVOR, "dialect": "openstack-flavor", "hosts": hosts}
    answer = _post(sqlite_client, body)
    assert answer.status_code == 200, answer.text
    assert [a["fits"] for a in answer.json()["hosts"]] == [True, False], answer.text
    wrong = _post(sqlite_client, {**body, "dialect": "osm-sol006"})
    assert wrong.status_code == 422
    assert "reads as openstack-flavor" in wrong.json()["detail"]


def test_identical_hosts_get_the_same_answer_under_their_own_ids(
    sqlite_client: TestClient,
) -> None:
    hosts = [host(f"twin-{k}") for k in range(3)] + [host("tiny", cores=1, pages_1g=0)]
    got = _post(sqlite_client, {"vm": vm(vcpus=2, sriov=0), "hosts": hosts}).json()["hosts"]
    assert [a["configuration"]["host"] for a in got[:3]] == ["twin-0", "twin-1", "twin-2"]
    assert len({str(a["configuration"]["cpu_sets"]) for a in got[:3]}) == 1
    assert got[3]["host"] == "tiny"
    assert not got[3]["fits"]


def test_what_lint_refuses_is_refused_with_its_findings(sqlite_client: TestClient) -> None:
    bad = vm(vcpus=2, sriov=0)
    bad["cpu_sets"][0]["howtogroup"] = [[0, 5]]  # vCPU 5 is not in the cpu-set
    answer = _post(sqlite_client, {"vm": bad, "hosts": [host("h")]})
    assert answer.status_code == 422
    assert answer.json()["findings"]
    bad_flavor = {"flavor": {**FLAVOR["flavor"], "ram": 1536}}
    answer = _post(
        sqlite_client, {"vm": bad_flavor, "dialect": "openstack-flavor", "hosts": [host("h")]}
    )
    assert answer.status_code == 422
    assert "not a whole number" in answer.text


def test_bad_envelopes_and_hosts_are_422_naming_the_field(sqlite_client: TestClient) -> None:
    good = {"vm": vm(), "hosts": [host("h")]}
    cases = [
        ({"vm": vm()}, '"hosts"'),
        ({**good, "hosts": []}, "1 to 1000"),
        ({**good, "extra": 1}, "extra"),
        ({**good, "hosts": [host("h"), host("h")]}, "unique"),
        ({**good, "hosts": [{"id": "x"}]}, "not a valid CHD"),
        ({**good, "policy": "fastest"}, "policy"),
    ]
    for body, words in cases:
        answer = _post(sqlite_client, body)
        assert answer.status_code == 422, body
        assert words in answer.json()["detail"], (words, answer.text)
    broken = _post(sqlite_client, {**good, "hosts": [{**host("h"), "numa_nodes": []}]})
    assert broken.json()["findings"][0]["pointer"].startswith("/hosts/0/numa_nodes")


def test_the_reader_role_may_ask_and_nobody_else(sqlite_client: TestClient) -> None:
    body = {"vm": vm(), "hosts": [host("h")]}
    nobody = {"Authorization": "Bearer nobody"}
    assert sqlite_client.post("/v1/evaluations", json=body, headers=nobody).status_code == 401
    assert _post(sqlite_client, body, role="reader").status_code == 200
