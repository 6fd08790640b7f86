"""A burst of pods filtered faster than the NodeResourceTopology objects change does not overcommit
a NUMA node: real HTTP against a real `nfvplace serve` (two workers), on SQLite and PostgreSQL.

A small scheduler runs here: for each pod it calls filter then prioritize, from eight threads at
once, and binds the pod to the best-scored node that passed. The nodes' kubelets are simulated by
nfvplace's port of the kubelet (`admission.admit`) on what each node really holds, pod after pod in
binding order. The NRT objects are only updated between rounds, as an exporter would after the
kubelet admitted the pods. Without assumed pods (`assume_s=0`) the same burst overcommits: the
kubelets refuse pods (Topology Affinity Error), which is the race the assumptions close.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from service_support import Server, auth

from nfvplace.dialects.k8s_pod import read_pod
from nfvplace.integrations.kubernetes.admission import admit
from nfvplace.integrations.kubernetes.state import NodeState, node_state, topology_manager
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.loading import SourceDocument
from nfvplace.reader import load_document

NODES = ("worker-a", "worker-b", "worker-c")
VF = "intel.com/sriov_dp"
PODS = 30  # each node takes 8 (two NUMA nodes of 16 free CPUs and 4 VFs; 4 CPUs and 1 VF a pod)


def nrt(name: str) -> dict[str, Any]:
    zone = [
        {"name": "cpu", "capacity": "18", "allocatable": "16", "available": "16"},
        {"name": VF, "capacity": "4", "allocatable": "4", "available": "4"},
    ]
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name},
        "attributes": [
            {"name": "topologyManagerPolicy", "value": "single-numa-node"},
            {"name": "topologyManagerScope", "value": "container"},
        ],
        "zones": [
            {"name": f"node-{n}", "type": "Node", "resources": copy.deepcopy(zone)} for n in (0, 1)
        ],
    }


def pod(index: int) -> dict[str, Any]:
    limits = {"cpu": "4", "memory": "1Gi", VF: "1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"cnf-{index}", "namespace": "burst", "uid": f"uid-{index}"},
        "spec": {"containers": [{"name": "dp", "resources": {"limits": limits}}]},
    }


class Cluster:
    """The nodes' kubelets: what each really holds, pod after pod as they are bound."""

    def __init__(self) -> None:
        self.objects = {name: nrt(name) for name in NODES}
        self.hosts = {name: self._host(name) for name in NODES}
        self.states: dict[str, NodeState] = {n: node_state(h) for n, h in self.hosts.items()}
        self.bound: dict[str, list[str]] = {name: [] for name in NODES}
        self.refused: list[str] = []  # pods a kubelet refused: the overcommit users see
        self.lock = threading.Lock()

    def _host(self, name: str) -> ComputeHostDescriptor:
        host = load_document(SourceDocument(data=self.objects[name], source=name))
        assert isinstance(host, ComputeHostDescriptor)
        return host

    def bind(self, node: str, raw: dict[str, Any]) -> None:
        with self.lock:
            answer = admit(read_pod(raw)[0], self.states[node], topology_manager(self.hosts[node]))
            if not answer.admit:
                self.refused.append(raw["metadata"]["name"])
                return
            self.states[node].take(answer.consumption or {})
            self.bound[node].append(raw["metadata"]["name"])

    def export(self, client: httpx.Client) -> None:
        """What the exporter reports once the kubelets admitted the bound pods."""
        for name, state in self.states.items():
            updated = copy.deepcopy(self.objects[name])
            for zone, node_id in zip(updated["zones"], (0, 1), strict=True):
                zone["resources"][0]["available"] = str(state.cpus[node_id].free)
                zone["resources"][1]["available"] = str(state.devices[VF][node_id].free)
            answer = client.put(f"/v1/hosts/{name}", json=updated)
            assert answer.status_code == 200, answer.text


def schedule(client: httpx.Client, cluster: Cluster, raw: dict[str, Any], assume_s: float) -> str:
    args = {"Pod": raw, "NodeNames": list(NODES)}
    result = client.post(f"/k8s/v1/filter?assume_s={assume_s}", json=args).json()
    if not result["NodeNames"]:
        return "unresolvable" if len(result["FailedAndUnresolvableNodes"]) == len(NODES) else "wait"
    args["NodeNames"] = result["NodeNames"]
    scores = client.post("/k8s/v1/prioritize", json=args).json()
    best = max(scores, key=lambda h: h["Score"])["Host"]
    cluster.bind(best, raw)
    return "bound"


def burst(
    server: Server, cluster: Cluster, pods: list[dict[str, Any]], assume_s: float
) -> dict[str, str]:
    with (
        httpx.Client(base_url=server.url, headers=auth("placer"), timeout=60) as client,
        ThreadPoolExecutor(8) as pool,
    ):
        outcomes = list(pool.map(lambda p: schedule(client, cluster, p, assume_s), pods))
    return {p["metadata"]["name"]: o for p, o in zip(pods, outcomes, strict=True)}


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
def test_a_burst_does_not_overcommit(
    database: str, request: pytest.FixtureRequest, serve: Callable[..., Server]
) -> None:
    server = serve(request.getfixturevalue(f"{database}_url"), workers=2)
    cluster = Cluster()
    with httpx.Client(base_url=server.url, headers=auth("admin"), timeout=60) as client:
        for name, obj in cluster.objects.items():
            assert client.put(f"/v1/hosts/{name}", json=obj).status_code == 201
        waiting = [pod(i) for i in range(PODS)]
        per_round = []
        while waiting and len(per_round) < 6:
            outcome = burst(server, cluster, waiting, assume_s=300)
            assert cluster.refused == []  # no kubelet ever refuses a pod the extender sent it
            cluster.export(client)  # the exporter catches up between bursts
            waiting = [p for p in waiting if outcome[p["metadata"]["name"]] == "wait"]
            per_round.append(sum(o == "bound" for o in outcome.values()))
        assert set(outcome.values()) <= {"bound", "unresolvable"}, per_round
        assert sum(per_round) == sum(len(b) for b in cluster.bound.values()) == 24  # all full
        assert client.get("/k8s/v1/assumptions").json() == {"pods": []}  # all shown by the NRTs
    for state in cluster.states.values():
        for node_id in (0, 1):
            assert state.cpus[node_id].free >= 0
            assert state.devices[VF][node_id].free >= 0


def test_without_assumptions_the_same_burst_overcommits(
    sqlite_url: str, serve: Callable[..., Server]
) -> None:
    server = serve(sqlite_url, workers=2)
    cluster = Cluster()
    with httpx.Client(base_url=server.url, headers=auth("admin"), timeout=60) as client:
        for name, obj in cluster.objects.items():
            assert client.put(f"/v1/hosts/{name}", json=obj).status_code == 201
    outcome = burst(server, cluster, [pod(i) for i in range(PODS)], assume_s=0)
    assert set(outcome.values()) == {"bound"}  # every pod passes on the stale NRTs
    assert len(cluster.refused) >= PODS - 24  # and the kubelets refuse the ones that overcommit
