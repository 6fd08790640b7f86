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
    NUMA nodes, so its kubelet (single-numa-node) would refuse the pod: unresolvable. A node with
    no NRT is refused too (the default of --unregistered-nodes), and says why."""
    for name in ("worker-node-A.yaml", "worker-node-B.yaml"):
        put_nrt(client, load(DATA / name))
    args = {"Pod": demo_pod(), "NodeNames": ["worker-node-a", "worker-node-b", "no-nrt"]}
    answer = client.post("/k8s/v1/filter", json=args)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["NodeNames"] == ["worker-node-a"]
    assert result["Error"] == ""
    assert result["FailedNodes"] == {}
    reason = result["FailedAndUnresolvableNodes"]["worker-node-b"]
    assert "Topology Affinity Error" in reason
    assert "1 example.com/deviceA, 1 example.com/deviceB" in reason
    assert "no NodeResourceTopology known" in result["FailedAndUnresolvableNodes"]["no-nrt"]
    assert client.get("/k8s/v1/assumptions").json() == {
        "pods": [],
        "departed": [],
    }  # filter assumes nothing


def test_node_objects_are_given_back(client: TestClient) -> None:
    """nodeCacheCapable false: Node objects in, the ones that fit out; filtering the same pod
    again and again assumes nothing (a pod is assumed only where it is bound)."""
    put_nrt(client, load(DATA / "worker-node-A.yaml"))
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-node-a"}}
    for uid in ("p1", "p2", "p3"):
        answer = client.post(
            "/k8s/v1/filter", json={"Pod": demo_pod(uid), "Nodes": {"items": [node]}}
        ).json()
        assert (answer["Nodes"]["items"], answer["NodeNames"]) == ([node], None)
    assert client.get("/k8s/v1/assumptions").json() == {"pods": [], "departed": []}


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


def test_prioritize_scores_from_the_filters_decision(client: TestClient) -> None:
    """A node filter keeps scores 1 to 10, a node it refuses 0 (an unknown node too)."""
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
    kept = client.post("/k8s/v1/filter", json=args).json()["NodeNames"]
    assert kept == ["worker-1", "worker-2"]
    packed = {h["Host"]: h["Score"] for h in client.post("/k8s/v1/prioritize", json=args).json()}
    assert packed["unknown"] == 0
    assert 1 <= packed["worker-2"] < packed["worker-1"] <= 10  # pack: the fuller node
    spread = client.post("/k8s/v1/prioritize?policy=spread", json=args).json()
    spread_scores = {h["Host"]: h["Score"] for h in spread}
    assert 1 <= spread_scores["worker-1"] < spread_scores["worker-2"] <= 10
    assert spread_scores["unknown"] == 0


def test_assumptions_are_listed_and_dropped_by_role(client: TestClient) -> None:
    missing = client.delete("/k8s/v1/assumptions/gone", headers=auth("placer"))
    assert missing.status_code == 404
    assert missing.json()["code"] == "nfvplace.kubernetes.not_assumed"
    assert client.delete("/k8s/v1/assumptions/gone", headers=auth("reader")).status_code == 403
    assert client.get("/k8s/v1/assumptions", headers=auth("reader")).json() == {
        "pods": [],
        "departed": [],
    }
    refused = client.post("/k8s/v1/filter", json={}, headers=auth("reader"))
    assert refused.status_code == 403
    assert client.post("/k8s/v1/bind", json={}, headers=auth("reader")).status_code == 403


def test_bind_reads_the_upstream_args_and_needs_a_cluster(client: TestClient) -> None:
    bad = client.post("/k8s/v1/bind", json={"PodName": "p"}).json()
    assert bad["Error"].startswith("nfvplace.service.invalid_request: ExtenderBindingArgs.")
    body = {"PodName": "p", "PodNamespace": "ns", "PodUID": "u", "Node": "n"}
    answer = client.post("/k8s/v1/bind", json=body).json()
    assert answer["Error"].startswith("nfvplace.kubernetes.no_cluster:")


def test_what_lint_refuses_is_placed_nowhere(client: TestClient) -> None:
    """The pod goes through the reader and the lint gate: a pod `nfvplace lint` refuses (more
    vCPUs than a VM Descriptor takes) is refused on every node, unresolvable, with the rule, in a
    bounded message, and scores 0."""
    put_nrt(client, load(DATA / "worker-node-A.yaml"))
    pod = demo_pod("huge")
    pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "5000", "memory": "1Gi"}}
    args = {"Pod": pod, "NodeNames": ["worker-node-a"]}
    result = client.post("/k8s/v1/filter", json=args).json()
    assert (result["NodeNames"], result["Error"]) == ([], "")
    reason = result["FailedAndUnresolvableNodes"]["worker-node-a"]
    assert reason.startswith("nfvplace: lint refuses the pod (")
    assert "NFV001" in reason
    assert len(reason) <= 2000
    scores = client.post("/k8s/v1/prioritize", json=args).json()
    assert scores == [{"Host": "worker-node-a", "Score": 0}]
