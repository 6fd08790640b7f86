"""A burst of pods scheduled faster than the NodeResourceTopology objects change does not overcommit
a NUMA node: real HTTP against a real `nfvplace serve --kubeconfig` (two workers) and a small API
server (tests/service/kube_api.py), on SQLite and PostgreSQL.

A small scheduler runs here, as kube-scheduler's loop does: for each pod it calls filter, then
prioritize, then nfvplace's bind to the best-scored node, from eight threads at once; a retriable
`Error` (filter) or a refused bind puts the pod back for the next round. nfvplace creates the
Binding in the API server; the nodes' kubelets, simulated by nfvplace's port of the kubelet
(`admission.admit`) on what each node really holds, admit the bound pods in binding order. The NRT
objects are only updated between rounds, in the API server, as an exporter would after the kubelet
admitted the pods; nfvplace's watch reads them. Without bind and watch (the fallback feed) the
same burst overcommits: the kubelets refuse pods (Topology Affinity Error), which is the race the
assumptions close. In one thread (kube-scheduler's scheduling cycles are one at a time), `pack` puts a burst on
fewer nodes than `spread`.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from kube_api import VF, KubeApi, nrt, wait_until
from service_support import Server, auth

from nfvplace.dialects.k8s_pod import read_pod
from nfvplace.integrations.kubernetes.admission import admit
from nfvplace.integrations.kubernetes.state import NodeState, node_state, topology_manager
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.loading import SourceDocument
from nfvplace.reader import load_document

NODES = ("worker-a", "worker-b", "worker-c")
PODS = 30  # each node takes 8 (two NUMA nodes of 16 free CPUs and 4 VFs; 4 CPUs and 1 VF a pod)


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

    def export(self, api: KubeApi, client: httpx.Client) -> None:
        """What the exporter reports once the kubelets admitted the bound pods (then waits until
        nfvplace's watch stored it)."""
        for name, state in self.states.items():
            updated = copy.deepcopy(self.objects[name])
            for zone, node_id in zip(updated["zones"], (0, 1), strict=True):
                zone["resources"][0]["available"] = str(state.cpus[node_id].free)
                zone["resources"][1]["available"] = str(state.devices[VF][node_id].free)
            before = client.get(f"/v1/hosts/{name}").json()["generation"]
            api.put("nrt", updated)
            wait_until(
                lambda n=name, b=before: client.get(f"/v1/hosts/{n}").json()["generation"] > b,
                f"{name}'s NRT stored",
            )


def schedule(
    client: httpx.Client, cluster: Cluster, raw: dict[str, Any], assume_s: float, policy: str
) -> str:
    args = {"Pod": raw, "NodeNames": list(NODES)}
    result = client.post("/k8s/v1/filter", json=args).json()
    if result["Error"]:
        assert result["Error"].startswith("nfvplace.kubernetes.retry:"), result["Error"]
        return "wait"  # kube-scheduler's backoff queue
    if not result["NodeNames"]:
        return "unresolvable"
    args["NodeNames"] = result["NodeNames"]
    scores = client.post(f"/k8s/v1/prioritize?policy={policy}", json=args).json()
    assert all(1 <= h["Score"] <= 10 for h in scores), scores  # filter kept them all
    best = max(scores, key=lambda h: (h["Score"], h["Host"]))["Host"]
    if assume_s < 0:  # the fallback: nfvplace neither binds nor watches; the scheduler binds
        cluster.bind(best, raw)
        return "bound"
    meta = raw["metadata"]
    binding = {"PodName": meta["name"], "PodNamespace": meta["namespace"], "PodUID": meta["uid"]}
    answer = client.post(f"/k8s/v1/bind?assume_s={assume_s}", json={**binding, "Node": best})
    if answer.json()["Error"]:
        assert answer.json()["Error"].startswith("nfvplace.kubernetes.bind_refused"), answer.text
        return "wait"  # the binding cycle failed: the backoff queue
    cluster.bind(best, raw)
    return "bound"


def burst(
    server: Server,
    cluster: Cluster,
    pods: list[dict[str, Any]],
    assume_s: float,
    threads: int = 8,
    policy: str = "pack",
) -> dict[str, str]:
    local = threading.local()  # one connection per thread, as kube-scheduler keeps one

    def one(raw: dict[str, Any]) -> str:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=server.url, headers=auth("placer"), timeout=60)
        return schedule(local.client, cluster, raw, assume_s, policy)

    with ThreadPoolExecutor(threads) as pool:
        outcomes = list(pool.map(one, pods))
    return {p["metadata"]["name"]: o for p, o in zip(pods, outcomes, strict=True)}


def start(
    url: str, serve: Callable[..., Server], api: KubeApi, cluster: Cluster, folder: Path
) -> Server:
    for obj in cluster.objects.values():
        api.put("nrt", obj)
    for index in range(PODS):
        api.put("pods", pod(index))
    server = serve(url, workers=2, **{"--kubeconfig": str(api.kubeconfig(folder))})
    with httpx.Client(base_url=server.url, headers=auth("admin"), timeout=60) as client:
        wait_until(
            lambda: all(
                (client.get("/k8s/v1/status").json()["watch"] or {"synced": {"x": 0}})[
                    "synced"
                ].values()
            ),
            "the watch's lists",
        )
        wait_until(lambda: len(client.get("/v1/hosts").json()["hosts"]) == len(NODES), "nodes")
    return server


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
def test_a_burst_does_not_overcommit(
    database: str,
    request: pytest.FixtureRequest,
    serve: Callable[..., Server],
    api: KubeApi,
    tmp_path: Path,
) -> None:
    cluster = Cluster()
    server = start(request.getfixturevalue(f"{database}_url"), serve, api, cluster, tmp_path)
    with httpx.Client(base_url=server.url, headers=auth("admin"), timeout=60) as client:
        waiting = [pod(i) for i in range(PODS)]
        per_round = []
        while waiting and len(per_round) < 6:
            outcome = burst(server, cluster, waiting, assume_s=300)
            assert cluster.refused == []  # no kubelet ever refuses a pod the extender bound
            cluster.export(api, client)  # the exporter catches up between bursts
            waiting = [p for p in waiting if outcome[p["metadata"]["name"]] == "wait"]
            per_round.append(sum(o == "bound" for o in outcome.values()))
        assert set(outcome.values()) <= {"bound", "unresolvable"}, per_round
        assert sum(per_round) == sum(len(b) for b in cluster.bound.values()) == 24  # all full
        assert sorted(api.bindings) == sorted(
            (f"burst/{name}", node) for node, names in cluster.bound.items() for name in names
        )
        wait_until(
            lambda: client.get("/k8s/v1/assumptions").json() == {"pods": [], "departed": []},
            "all shown",
        )
    for state in cluster.states.values():
        for node_id in (0, 1):
            assert state.cpus[node_id].free >= 0
            assert state.devices[VF][node_id].free >= 0


def test_without_bind_and_watch_the_same_burst_overcommits(
    sqlite_url: str, serve: Callable[..., Server]
) -> None:
    """The fallback feed (NRTs PUT, no --kubeconfig, no bindVerb): nfvplace never learns where
    pods go, and the burst overcommits until the NRTs catch up, which is what bind closes."""
    cluster = Cluster()
    server = serve(sqlite_url, workers=2)
    with httpx.Client(base_url=server.url, headers=auth("admin"), timeout=60) as client:
        for name, obj in cluster.objects.items():
            assert client.put(f"/v1/hosts/{name}", json=obj).status_code == 201
    outcome = burst(server, cluster, [pod(i) for i in range(PODS)], assume_s=-1)
    assert set(outcome.values()) == {"bound"}  # every pod passes on the stale NRTs
    assert len(cluster.refused) >= PODS - 24  # and the kubelets refuse the ones that overcommit


@pytest.mark.parametrize(("policy", "most_nodes"), [("pack", 1), ("spread", 3)])
def test_pack_packs_within_a_burst(
    policy: str,
    most_nodes: int,
    sqlite_url: str,
    serve: Callable[..., Server],
    api: KubeApi,
    tmp_path: Path,
) -> None:
    """Six pods of 4 CPUs fit one node; scheduled one at a time with no NRT update in between,
    pack puts them on one node (the pods bound there count), spread on all three."""
    cluster = Cluster()
    server = start(sqlite_url, serve, api, cluster, tmp_path)
    outcome = burst(server, cluster, [pod(i) for i in range(6)], 300, threads=1, policy=policy)
    assert set(outcome.values()) == {"bound"}
    assert cluster.refused == []
    assert sum(bool(names) for names in cluster.bound.values()) == most_nodes, cluster.bound
