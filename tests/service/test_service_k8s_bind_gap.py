"""The gap a burst opened under load in kube-scheduler's loop (one kubelet refusal, "5 nodes
burst-full spread", load 6-13 on two cores): a pod that runs stayed assumed only `--nrt-interval`
after it was seen running, once its node's NodeResourceTopology had been read at any newer
generation. That newer object may have been written from counts the exporter read before the
kubelet admitted the pod (an update for an earlier pod); when the update that shows the pod is
late, the pod was then counted nowhere, and the next bind to its node passed a NUMA node the
kubelet had already given it. The pod's assumption now ends on the timer only on a node some pod
has left since the counts it was decided on (an arrival a departure can hide from the totals);
elsewhere the totals alone account for it, however late they come.

Through a real `nfvplace serve --kubeconfig` over HTTP against tests/service/kube_api.py, on
SQLite and PostgreSQL.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kube_api import KubeApi, nrt, wait_until
from service_support import Server, auth
from test_service_k8s_cluster import assumed, bind, pod

NODE = "worker-a"


@pytest.fixture(params=["sqlite", "postgres"])
def door(
    request: pytest.FixtureRequest, api: KubeApi, serve: Callable[..., Server], tmp_path: Path
) -> Iterator[httpx.Client]:
    """One node, two 16-CPU NUMA nodes with 4 VFs each; the exporter's interval 1 s."""
    api.put("nrt", nrt(NODE))
    url = request.getfixturevalue(f"{request.param}_url")
    options = {"--kubeconfig": str(api.kubeconfig(tmp_path)), "--nrt-interval": "1"}
    server = serve(url, workers=2, **options)
    with httpx.Client(base_url=server.url, headers=auth("admin"), timeout=30) as client:
        wait_until(lambda: client.get("/k8s/v1/status").json()["watch"]["nodes"] == 1, NODE)
        yield client


def running(api: KubeApi, name: str) -> None:
    """The kubelet admitted the pod: its status says Running."""
    seen = copy.deepcopy(api.pod("cnf", name))
    seen["status"] = {"phase": "Running"}
    api.put("pods", seen)


def bound_pod(name: str, cpus: int) -> dict[str, Any]:
    out = pod(name, cpus=cpus, node=NODE)
    out["status"] = {"phase": "Running"}
    return out


def test_a_late_nrt_leaves_no_running_pod_counted_nowhere(door: httpx.Client, api: KubeApi) -> None:
    """p1 and p2 (14 CPUs and a VF each) fill the node's two NUMA nodes. The exporter's update
    for p1 read the counts before the kubelet admitted p2: it shows p1 alone. p2 runs, its
    interval passes, the update that shows it is late: p2 is still counted, so p3 is refused."""
    client = door
    for name in ("p1", "p2"):
        api.put("pods", pod(name, cpus=14))
        assert bind(client, name, NODE) == ""
    api.put("nrt", nrt(NODE, free=(2, 16), vfs=(3, 4)))  # shows p1, read before p2 was admitted
    wait_until(lambda: assumed(client) == {"uid-p2": NODE}, "p1 accounted by the totals")
    running(api, "p1")
    running(api, "p2")
    time.sleep(2.5)  # past --nrt-interval, and the node's object was read since p2 was decided
    assert assumed(client) == {"uid-p2": NODE}
    api.put("pods", pod("p3", cpus=14))
    args = {"Pod": pod("p3", cpus=14), "NodeNames": [NODE]}
    answer = client.post("/k8s/v1/filter", json=args).json()
    assert not answer["NodeNames"], answer  # no NUMA node holds p3 while p2 is counted
    assert answer["Error"].startswith("nfvplace.kubernetes.retry:")  # until the NRT shows p2
    assert bind(client, "p3", NODE).startswith("nfvplace.kubernetes.bind_refused:")
    assert ("cnf/p3", NODE) not in api.bindings
    api.put("nrt", nrt(NODE, free=(2, 2), vfs=(3, 3)))  # the late update shows p2
    wait_until(lambda: assumed(client) == {}, "p2 accounted by the totals")


def test_a_pod_arriving_as_another_leaves_still_ends_once_it_runs(
    door: httpx.Client, api: KubeApi
) -> None:
    """The churn the timer is for: p0 (shown in the counts) leaves as p1 arrives, so the totals
    do not move. The pod watch saw p0 leave the node: p1's assumption ends once it has run for
    the interval and the node's object was read again."""
    client = door
    api.put("pods", bound_pod("p0", cpus=14))
    api.put("nrt", nrt(NODE, free=(2, 16), vfs=(3, 4)))  # shows p0
    wait_until(lambda: client.get("/v1/hosts/worker-a").json()["generation"] == 2, "p0 shown")
    api.put("pods", pod("p1", cpus=14))
    assert bind(client, "p1", NODE) == ""
    api.delete("pods", "cnf/p0")
    api.put("nrt", nrt(NODE, free=(2, 16), vfs=(3, 4)))  # p0 left, p1 took its place
    time.sleep(1.5)
    assert assumed(client) == {"uid-p1": NODE}  # its totals never fell; not seen running yet
    running(api, "p1")
    wait_until(lambda: assumed(client) == {}, "p1's assumption ended once running", timeout=10.0)
