"""`/k8s/v1`: the scheduler extender over SQLite and PostgreSQL, on the upstream demo of the
NodeResourceTopologyMatch plugin (scheduler-plugins' worker-node-A/B and test-deployment) and on
exporter-style objects."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from fastapi.testclient import TestClient
from service_support import auth

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "kubernetes"
EXAMPLES = ROOT / "examples" / "kubernetes"


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def put_nrt(client: TestClient, nrt: dict[str, Any]) -> None:
    answer = client.put(f"/v1/hosts/{nrt['metadata']['name']}", json=nrt)
    assert answer.status_code in (200, 201), answer.text


def demo_pod(uid: str = "uid-1") -> dict[str, Any]:
    """The pod of scheduler-plugins' test deployment, as the scheduler sends it."""
    template = load(DATA / "test-deployment.yaml")["spec"]["template"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            **template["metadata"],
            "name": f"test-{uid}",
            "namespace": "default",
            "uid": uid,
        },
        "spec": template["spec"],
    }


def test_filter_follows_the_upstream_demo(client: TestClient) -> None:
    """worker-node-A holds deviceA and deviceB on NUMA node 0; worker-node-B has them on different
    NUMA nodes, so its kubelet (single-numa-node) would refuse the pod: unresolvable."""
    for name in ("worker-node-A.yaml", "worker-node-B.yaml"):
        put_nrt(client, load(DATA / name))
    args = {"Pod": demo_pod(), "NodeNames": ["worker-node-a", "worker-node-b", "no-nrt"]}
    answer = client.post("/k8s/v1/filter", json=args)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["NodeNames"] == ["worker-node-a", "no-nrt"]
    assert result["Error"] == ""
    assert result["FailedNodes"] == {}
    reason = result["FailedAndUnresolvableNodes"]["worker-node-b"]
    assert "Topology Affinity Error" in reason
    assert "1 example.com/deviceA, 1 example.com/deviceB" in reason
    assumed = client.get("/k8s/v1/assumptions").json()["pods"]
    assert [(p["uid"], list(p["nodes"])) for p in assumed] == [("uid-1", ["worker-node-a"])]
    assert assumed[0]["nodes"]["worker-node-a"]["cpu"] == {"0": 1}


def test_node_objects_are_given_back_and_the_second_pod_waits(client: TestClient) -> None:
    """nodeCacheCapable false: Node objects in, the ones that fit out. Each NUMA node of node A
    takes one such pod (node 0 has one deviceA, node 1 one deviceB): the first two are assumed
    there, the third is refused until the NRT shows them (resolvable: FailedNodes)."""
    put_nrt(client, load(DATA / "worker-node-A.yaml"))
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-node-a"}}

    def nodes_for(uid: str) -> dict[str, Any]:
        answer = client.post(
            "/k8s/v1/filter", json={"Pod": demo_pod(uid), "Nodes": {"items": [node]}}
        )
        result: dict[str, Any] = answer.json()
        return result

    first = nodes_for("p1")
    assert (first["Nodes"]["items"], first["NodeNames"]) == ([node], None)
    assert nodes_for("p2")["Nodes"]["items"] == [node]
    third = nodes_for("p3")
    assert third["Nodes"]["items"] == []
    assert "2 pod(s) admitted here" in third["FailedNodes"]["worker-node-a"]
    assert nodes_for("p2")["Nodes"]["items"] == [node]  # the same pod again replaces its own


def test_the_assumption_goes_when_the_nrt_shows_the_pod(client: TestClient) -> None:
    nrt = load(DATA / "worker-node-A.yaml")
    put_nrt(client, nrt)
    names = {"NodeNames": ["worker-node-a"]}
    assert client.post("/k8s/v1/filter", json={"Pod": demo_pod("p1"), **names}).json()["NodeNames"]
    shown = copy.deepcopy(nrt)  # the exporter reports p1 on NUMA node 0
    for resource in shown["zones"][0]["resources"]:
        resource["available"] -= 1
    put_nrt(client, shown)
    second = client.post("/k8s/v1/filter", json={"Pod": demo_pod("p2"), **names}).json()
    assert second["NodeNames"] == ["worker-node-a"]  # on NUMA node 1 now: p1 is in the NRT
    pods = client.get("/k8s/v1/assumptions").json()["pods"]
    assert [p["uid"] for p in pods] == ["p2"]
    assert pods[0]["nodes"]["worker-node-a"]["example.com/deviceA"] == {"1": 1}


def test_bad_requests_get_the_upstream_error_field(client: TestClient) -> None:
    for body in (
        [],
        {"Pod": {"metadata": {}}},
        {"Pod": demo_pod(), "NodeNames": "worker"},
        {"Pod": demo_pod()},
    ):
        answer = client.post("/k8s/v1/filter", json=body)
        assert answer.status_code == 200
        assert answer.json()["Error"], body
    pod = demo_pod()
    pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "lots"
    answer = client.post("/k8s/v1/filter", json={"Pod": pod, "NodeNames": []})
    assert "is not a Kubernetes quantity" in answer.json()["Error"]
    bad = client.post("/k8s/v1/prioritize", json={"Pod": []})
    assert bad.status_code == 422
    assert bad.json()["code"] == "nfvplace.service.invalid_request"


def test_prioritize_scores_zero_to_ten(client: TestClient) -> None:
    one = load(EXAMPLES / "nrt-worker-1.yaml")
    two = copy.deepcopy(one)
    two["metadata"]["name"] = "worker-2"
    for zone in two["zones"]:  # an empty node
        for resource in zone["resources"]:
            resource["available"] = resource["allocatable"]
    put_nrt(client, one)
    put_nrt(client, two)
    pod = load(EXAMPLES / "cnf-pod.yaml")
    pod["metadata"]["uid"] = "cnf-1"
    args = {"Pod": pod, "NodeNames": ["worker-1", "worker-2", "unknown"]}
    assert client.post("/k8s/v1/filter", json=args).json()["NodeNames"] == [
        "worker-1",
        "worker-2",
        "unknown",
    ]
    packed = {h["Host"]: h["Score"] for h in client.post("/k8s/v1/prioritize", json=args).json()}
    assert packed == {"worker-1": 10, "worker-2": 0, "unknown": 0}  # pack: the fuller node
    spread = client.post("/k8s/v1/prioritize?policy=spread", json=args).json()
    assert {h["Host"]: h["Score"] for h in spread} == {"worker-1": 0, "worker-2": 10, "unknown": 0}


def test_assumptions_are_listed_and_dropped_by_role(client: TestClient) -> None:
    put_nrt(client, load(DATA / "worker-node-A.yaml"))
    client.post("/k8s/v1/filter", json={"Pod": demo_pod("gone"), "NodeNames": ["worker-node-a"]})
    reader = client.delete("/k8s/v1/assumptions/gone", headers=auth("reader"))
    assert reader.status_code == 403
    assert client.delete("/k8s/v1/assumptions/gone", headers=auth("placer")).status_code == 204
    missing = client.delete("/k8s/v1/assumptions/gone")
    assert missing.status_code == 404
    assert missing.json()["code"] == "nfvplace.kubernetes.not_assumed"
    assert client.get("/k8s/v1/assumptions", headers=auth("reader")).json() == {"pods": []}
    refused = client.post("/k8s/v1/filter", json={}, headers=auth("reader"))
    assert refused.status_code == 403


def test_long_uids_and_names_are_kept_within_the_columns(client: TestClient) -> None:
    put_nrt(client, load(DATA / "worker-node-A.yaml"))
    pod = demo_pod("x" * 1000)
    pod["metadata"]["name"] = "n" * 1000
    answer = client.post("/k8s/v1/filter", json={"Pod": pod, "NodeNames": ["worker-node-a"]})
    assert answer.json()["NodeNames"] == ["worker-node-a"]
    (assumed,) = client.get("/k8s/v1/assumptions").json()["pods"]
    assert (len(assumed["uid"]), len(assumed["pod"])) == (64, 512)
