"""`nfvplace serve --kubeconfig FILE`: the built-in watch of NodeResourceTopology objects and pods,
and the bind verb, against a small API server on 127.0.0.1 (tests/service/kube_api.py), through a
real `nfvplace serve` over HTTP, on SQLite and PostgreSQL.

The pod is assumed only on the node it is bound to, and only once the Binding is created; the
node's next NodeResourceTopology accounts for it by its totals, wherever the kubelet put it; a
refused or failed bind leaves nothing behind; a pod bound by another binder is counted from the
pod watch; a deleted pod or NodeResourceTopology takes its assumption with it.
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kube_api import VF, KubeApi, nrt, wait_until, watched_nodes
from service_support import Server, auth


def pod(name: str, cpus: int = 6, node: str | None = None) -> dict[str, Any]:
    limits = {"cpu": str(cpus), "memory": "1Gi", VF: "1"}
    spec: dict[str, Any] = {"containers": [{"name": "dp", "resources": {"limits": limits}}]}
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "cnf", "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"phase": "Pending"},
    }


@pytest.fixture(params=["sqlite", "postgres"])
def door(
    request: pytest.FixtureRequest, api: KubeApi, serve: Callable[..., Server], tmp_path: Path
) -> Iterator[tuple[httpx.Client, Server]]:
    for name in ("worker-a", "worker-b"):
        api.put("nrt", nrt(name))
    url = request.getfixturevalue(f"{request.param}_url")
    server = serve(url, workers=2, **{"--kubeconfig": str(api.kubeconfig(tmp_path))})
    with httpx.Client(base_url=server.url, headers=auth("admin"), timeout=30) as client:
        wait_until(lambda: synced(client), "the watch's lists")
        yield client, server


def synced(client: httpx.Client) -> bool:
    watch = client.get("/k8s/v1/status").json()["watch"]
    return bool(watch and all(watch["synced"].values()) and watch["nodes"] == 2)


def assumed(client: httpx.Client) -> dict[str, str]:
    return {p["uid"]: p["node"] for p in client.get("/k8s/v1/assumptions").json()["pods"]}


def bind(client: httpx.Client, name: str, node: str) -> str:
    body = {"PodName": name, "PodNamespace": "cnf", "PodUID": f"uid-{name}", "Node": node}
    answer = client.post("/k8s/v1/bind", json=body)
    assert answer.status_code == 200, answer.text
    error: str = answer.json()["Error"]
    return error


def test_the_watch_stores_nrts_as_hosts(door: tuple[httpx.Client, Server], api: KubeApi) -> None:
    client, server = door
    assert client.get("/v1/hosts/worker-a").status_code == 200
    api.put("nrt", nrt("worker-c", free=(10, 16)))
    wait_until(lambda: client.get("/v1/hosts/worker-c").status_code == 200, "worker-c stored")
    api.delete("nrt", "worker-c")
    wait_until(lambda: client.get("/v1/hosts/worker-c").status_code == 404, "worker-c gone")
    wait_until(lambda: synced(client), "the count published (at most once a second)")
    assert client.get("/k8s/v1/status").json()["binding"] is True
    assert "secret-token-never-logged" not in server.log(None)


def test_bind_assumes_only_on_the_bound_node_until_its_nrt_accounts(
    door: tuple[httpx.Client, Server], api: KubeApi
) -> None:
    client, _server = door
    api.put("pods", pod("p1"))
    args = {"Pod": pod("p1"), "NodeNames": ["worker-a", "worker-b"]}
    filtered = client.post("/k8s/v1/filter", json=args).json()
    assert filtered["NodeNames"] == ["worker-a", "worker-b"]
    assert assumed(client) == {}  # filter assumes nothing
    assert bind(client, "p1", "worker-a") == ""
    assert api.bindings == [("cnf/p1", "worker-a")]
    assert assumed(client) == {"uid-p1": "worker-a"}
    # the kubelet put p1 on NUMA node 1 (nfvplace predicted 0): the totals account for it
    api.put("nrt", nrt("worker-a", free=(16, 10), vfs=(4, 3)))
    wait_until(lambda: assumed(client) == {}, "p1 accounted by worker-a's totals")


def test_a_refusal_resting_on_assumptions_asks_for_a_retry(
    door: tuple[httpx.Client, Server], api: KubeApi
) -> None:
    """Two 16-CPU NUMA nodes per worker; 14-CPU pods: one per NUMA node. Four bound: a fifth
    gets the retriable Error (backoff queue), and passes once the NRTs show them and one goes."""
    client, _server = door
    for i in range(4):
        api.put("pods", pod(f"big-{i}", cpus=14))
        assert bind(client, f"big-{i}", ("worker-a", "worker-b")[i % 2]) == ""
    api.put("pods", pod("big-4", cpus=14))
    args = {"Pod": pod("big-4", cpus=14), "NodeNames": ["worker-a", "worker-b"]}
    answer = client.post("/k8s/v1/filter", json=args).json()
    assert answer["Error"].startswith("nfvplace.kubernetes.retry:")
    scores = client.post("/k8s/v1/prioritize", json=args).json()
    assert scores == [{"Host": "worker-a", "Score": 0}, {"Host": "worker-b", "Score": 0}]
    refused = bind(client, "big-4", "worker-a")  # bind decides again: refused, nothing left
    assert refused.startswith("nfvplace.kubernetes.bind_refused:")
    assert ("cnf/big-4", "worker-a") not in api.bindings
    assert "uid-big-4" not in assumed(client)
    for name in ("worker-a", "worker-b"):  # the NRTs show the four pods: full, unresolvable
        api.put("nrt", nrt(name, free=(2, 2), vfs=(3, 3)))
    wait_until(lambda: assumed(client) == {}, "the four accounted")
    full = client.post("/k8s/v1/filter", json=args).json()
    assert (full["Error"], full["NodeNames"]) == ("", [])
    assert set(full["FailedAndUnresolvableNodes"]) == {"worker-a", "worker-b"}
    api.put("nrt", nrt("worker-b", free=(16, 2), vfs=(4, 3)))  # big-1 finished
    wait_until(
        lambda: client.post("/k8s/v1/filter", json=args).json()["NodeNames"] == ["worker-b"],
        "room on worker-b",
    )


def test_a_failed_bind_leaves_nothing(door: tuple[httpx.Client, Server], api: KubeApi) -> None:
    client, _server = door
    api.put("pods", pod("p1"))
    api.refuse_bindings = True
    error = bind(client, "p1", "worker-a")
    assert error.startswith("nfvplace.kubernetes.bind_failed: the API server refused: 500")
    assert assumed(client) == {}
    api.refuse_bindings = False
    assert bind(client, "missing", "worker-a").startswith("nfvplace.kubernetes.bind_failed")
    assert assumed(client) == {}
    api.put("pods", pod("early", node="worker-a"))  # bound by a call that timed out
    wait_until(lambda: assumed(client) == {"uid-early": "worker-a"}, "early seen bound")
    assert bind(client, "early", "worker-a") == ""  # bound there already: done
    conflict = bind(client, "early", "worker-b")
    assert conflict.startswith("nfvplace.kubernetes.bind_failed: the API server refused: 409")
    assert assumed(client) == {"uid-early": "worker-a"}  # where it is, as it was


def test_pods_bound_elsewhere_are_counted_and_gone_pods_dropped(
    door: tuple[httpx.Client, Server], api: KubeApi
) -> None:
    """A pod outside the extender's managedResources, bound by the default binder, pins CPUs too:
    the pod watch assumes it on its node; deleting it (or its finishing) drops it."""
    client, _server = door
    api.put("pods", pod("outside", cpus=16))
    bound = copy.deepcopy(api.pod("cnf", "outside"))
    bound["spec"]["nodeName"] = "worker-a"
    api.put("pods", bound)
    wait_until(lambda: assumed(client) == {"uid-outside": "worker-a"}, "outside counted")
    api.put("pods", pod("p1"))
    assert bind(client, "p1", "worker-a") == ""
    assert assumed(client) == {"uid-outside": "worker-a", "uid-p1": "worker-a"}
    finished = copy.deepcopy(api.pod("cnf", "p1"))
    finished["status"] = {"phase": "Succeeded"}
    api.put("pods", finished)
    api.delete("pods", "cnf/outside")
    wait_until(lambda: assumed(client) == {}, "both dropped")


def test_bind_without_a_cluster_says_so(client_without_cluster: httpx.Client) -> None:
    body = {"PodName": "p", "PodNamespace": "ns", "PodUID": "u", "Node": "n"}
    answer = client_without_cluster.post("/k8s/v1/bind", json=body).json()
    assert answer["Error"].startswith("nfvplace.kubernetes.no_cluster:")
    assert client_without_cluster.get("/k8s/v1/status").json() == {
        "binding": False,
        "watch": None,
        "unregistered_nodes": "refuse",
    }


@pytest.fixture
def client_without_cluster(sqlite_url: str, serve: Callable[..., Server]) -> Iterator[httpx.Client]:
    server = serve(sqlite_url)
    with httpx.Client(base_url=server.url, headers=auth("admin"), timeout=30) as client:
        yield client


@contextlib.contextmanager
def one_node(
    api: KubeApi,
    serve: Callable[..., Server],
    tmp_path: Path,
    sqlite_url: str,
    flag: str,
    value: str,
) -> Iterator[tuple[httpx.Client, Server]]:
    """A door on SQLite (one worker, `flag value`) once its watch knows worker-a."""
    options = {"--kubeconfig": str(api.kubeconfig(tmp_path)), flag: value}
    server = serve(sqlite_url, workers=1, **options)
    with httpx.Client(base_url=server.url, headers=auth("admin"), timeout=30) as client:
        wait_until(lambda: watched_nodes(client) == 1, "worker-a")
        yield client, server


def test_a_pod_arriving_as_another_leaves_is_accounted_once_it_runs(
    api: KubeApi, serve: Callable[..., Server], tmp_path: Path, sqlite_url: str
) -> None:
    """The churn that stranded pods in kube-scheduler's loop: a pod shown in worker-a's counts
    leaves as p1 arrives, so the node's totals do not move and never account for p1. Once the pod
    watch sees p1 running (the kubelet admitted it), its assumption ends --nrt-interval later (the
    node's object was read again since p1 was decided on)."""
    api.put("nrt", nrt("worker-a", free=(10, 16), vfs=(3, 4)))  # a pod of 6 CPUs and a VF shown
    with one_node(api, serve, tmp_path, sqlite_url, "--nrt-interval", "1") as (client, _server):
        api.put("pods", pod("p1"))
        assert bind(client, "p1", "worker-a") == ""
        # the shown pod left and p1 took its place: the same counts again
        api.put("nrt", nrt("worker-a", free=(10, 16), vfs=(3, 4)))
        time.sleep(2.0)
        assert assumed(client) == {"uid-p1": "worker-a"}  # its totals never fell
        running = copy.deepcopy(api.pod("cnf", "p1"))
        running["status"] = {"phase": "Running"}
        api.put("pods", running)
        wait_until(lambda: assumed(client) == {}, "p1 accounted once running", timeout=10.0)


def test_debug_logs_say_what_the_door_assumed_and_what_each_nrt_showed(
    api: KubeApi, serve: Callable[..., Server], tmp_path: Path, sqlite_url: str
) -> None:
    """`--log-level debug`: each pod assumed (with what it takes where), each NodeResourceTopology
    reconciled (with the free totals and the pods it shows), each pod running or gone; the
    default level logs none of it."""
    api.put("nrt", nrt("worker-a"))
    with one_node(api, serve, tmp_path, sqlite_url, "--log-level", "debug") as (client, server):
        api.put("pods", pod("p1"))
        assert bind(client, "p1", "worker-a") == ""
        api.put("nrt", nrt("worker-a", free=(10, 16), vfs=(3, 4)))
        wait_until(lambda: assumed(client) == {}, "p1 accounted by worker-a's totals")
        api.delete("pods", "cnf/p1")
        wait_until(lambda: "pod uid-p1 gone" in server.log(None), "the pod's deletion logged")
    lines = server.log(None)
    assert (
        "pod uid-p1 on worker-a (generation 1, 0 pod(s) assumed there): takes {'cpu': {0: 6}"
        in lines
    )
    assert "node worker-a generation 2, free {'cpu': 26, " in lines
    assert ": shows assumed pods ['uid-p1']" in lines
    quiet = serve(sqlite_url, workers=1, **{"--kubeconfig": str(api.kubeconfig(tmp_path))})
    assert "assumed" not in quiet.log(None)
