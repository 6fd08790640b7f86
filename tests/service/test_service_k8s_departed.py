"""Churn under a lagging exporter ("churn pack" in kube-scheduler's loop with
LOOP_EXPORTER_LAG_S=2: 20 pods Pending beside room): pods are deleted and others created at once,
kube-scheduler asks about the new ones before the node's NodeResourceTopology shows the departures,
and nfvplace answered from counts that still held the departed pods. Every node refused the pod
as unresolvable, and kube-scheduler parked it waiting for a cluster event that the object's
update is not.

Now a departure the pod watch saw and no object shows yet makes filter answer `Error`
(`nfvplace.kubernetes.retry`, the backoff queue) where the departed pods' room would take the pod,
and only there; the object that shows it gone ends that. Through a real `nfvplace serve
--kubeconfig --workers 2` over HTTP against tests/service/kube_api.py (the departure is recorded
by the watching worker, filter may be answered by the other), on SQLite and PostgreSQL; the
fingerprints were computed by the upstream Go module (podfingerprint v0.2.2), as in
test_service_k8s_bind_gap.py.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from kube_api import KubeApi, nrt, wait_until
from test_service_k8s_bind_gap import NODE, bound_pod, door, signed
from test_service_k8s_cluster import bind, pod

__all__ = ["door"]  # the fixture, SQLite and PostgreSQL


def departed(client: httpx.Client) -> list[str]:
    return [p["pod"] for p in client.get("/k8s/v1/assumptions").json().get("departed", [])]


def filtered(client: httpx.Client, name: str, cpus: int) -> dict[str, Any]:
    args = {"Pod": pod(name, cpus=cpus), "NodeNames": [NODE]}
    answer = client.post("/k8s/v1/filter", json=args)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


def full_node(client: httpx.Client, api: KubeApi) -> None:
    """p0 and p1 (14 CPUs and a VF each) run, one on each NUMA node, shown by the node's object
    (2 CPUs and 3 VFs free on each)."""
    api.put("pods", bound_pod("p0", cpus=14))
    api.put("pods", bound_pod("p1", cpus=14))
    api.put("nrt", signed(nrt(NODE, free=(2, 2), vfs=(3, 3)), "cnf/p0,cnf/p1"))
    wait_until(lambda: client.get(f"/v1/hosts/{NODE}").json()["generation"] == 2, "p0, p1 shown")


def test_a_departure_not_shown_yet_makes_filter_answer_retry(
    door: httpx.Client, api: KubeApi
) -> None:
    """p0 is deleted; the exporter's object that shows it gone is late. p2 (14 CPUs) fits once
    p0's room is free: retry (at main: unresolvable, kube-scheduler parked it). A 17-CPU pod
    fits on no NUMA node even then: unresolvable still. The object without p0 ends it: p2 is
    passed."""
    client = door
    full_node(client, api)
    assert filtered(client, "p2", 14)["FailedAndUnresolvableNodes"]  # full, nothing left
    api.delete("pods", "cnf/p0")
    answers: list[dict[str, Any]] = []

    def retried() -> bool:
        answers.append(filtered(client, "p2", 14))
        return bool(answers[-1]["Error"].startswith("nfvplace.kubernetes.retry:"))

    try:  # the watching worker records the departure; either worker may answer
        wait_until(retried, "retry once p0 is seen leaving", timeout=10.0)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: last answer {answers[-1]}") from None
    answer = answers[-1]
    assert departed(client) == ["cnf/p0"]
    assert "cnf/p0 (14 CPUs" in answer["Error"], answer["Error"]
    assert not answer["NodeNames"], answer
    too_big = filtered(client, "p3", 17)
    assert too_big["Error"] == "", too_big  # p0's room does not hold it: no retry
    assert NODE in too_big["FailedAndUnresolvableNodes"], too_big
    api.put("nrt", signed(nrt(NODE, free=(16, 2), vfs=(4, 3)), "cnf/p1"))
    wait_until(lambda: departed(client) == [], "p0 shown gone by the fingerprint", timeout=10.0)
    assert filtered(client, "p2", 14)["NodeNames"] == [NODE]


def test_an_object_read_before_the_departure_keeps_it(door: httpx.Client, api: KubeApi) -> None:
    """The exporter's next object was read before p0 left (its fingerprint names p0 and p1):
    p0 stays departed and filter still answers retry; the one read after ends it."""
    client = door
    full_node(client, api)
    api.delete("pods", "cnf/p0")
    wait_until(lambda: departed(client) == ["cnf/p0"], "p0 seen leaving", timeout=10.0)
    api.put("nrt", signed(nrt(NODE, free=(2, 2), vfs=(3, 3)), "cnf/p0,cnf/p1"))
    wait_until(lambda: client.get(f"/v1/hosts/{NODE}").json()["generation"] == 3, "stale object")
    assert departed(client) == ["cnf/p0"]
    assert filtered(client, "p2", 14)["Error"].startswith("nfvplace.kubernetes.retry:")
    api.put("nrt", signed(nrt(NODE, free=(16, 2), vfs=(4, 3)), "cnf/p1"))
    wait_until(lambda: departed(client) == [], "p0 shown gone", timeout=10.0)


@pytest.mark.parametrize("object_first", [False, True], ids=["pod-event-first", "object-first"])
def test_an_assumed_pod_is_placed_again_where_the_kubelet_will_put_it(
    door: httpx.Client, api: KubeApi, object_first: bool
) -> None:
    """p0 (14 CPUs, NUMA node 0) and p1 (10 CPUs, node 1) run; p2 (3 CPUs) is bound: node 0 has
    2 CPUs free, so nfvplace decides node 1. p0 leaves before the kubelet admits p2: the kubelet
    puts p2 on the lowest NUMA node that holds it, node 0. The next object (read after p0 left,
    before p2 was admitted: its fingerprint names p1 alone) shows 16 | 6 free: p2 is placed again
    on node 0, and p3 (14 CPUs), which the kubelet would refuse (13 | 6 free), is not passed. At
    main p2 stayed on node 1 (16 | 3 counted) and p3 was passed.

    `object-first`: the object (the kubelet let p0 go before its API object was deleted) is read
    before the pod watch sees p0 leave: no pod set matches it, it is kept, and p0's deletion
    matches it (`AssumedPods.rematch`): p2 is placed again then. Before 2026-12-01 `rematch`
    placed nothing and p2 stayed on node 1: `pod-event-first` failed so whenever the pod watch
    ran behind the NodeResourceTopology watch (2 runs in 8 on a loaded machine)."""
    client = door
    api.put("pods", bound_pod("p0", cpus=14))
    api.put("pods", bound_pod("p1", cpus=10))
    api.put("nrt", signed(nrt(NODE, free=(2, 6), vfs=(3, 3)), "cnf/p0,cnf/p1"))
    wait_until(lambda: client.get(f"/v1/hosts/{NODE}").json()["generation"] == 2, "p0, p1 shown")
    api.put("pods", pod("p2", cpus=3))
    assert bind(client, "p2", NODE) == ""
    assert numa_of(client, "uid-p2") == {"1"}
    if not object_first:
        api.delete("pods", "cnf/p0")
    api.put("nrt", signed(nrt(NODE, free=(16, 6), vfs=(4, 3)), "cnf/p1"))
    wait_until(lambda: client.get(f"/v1/hosts/{NODE}").json()["generation"] == 3, "p0 gone")
    if object_first:
        assert numa_of(client, "uid-p2") == {"1"}  # p0 still known there: no pod set matches
        api.delete("pods", "cnf/p0")
    wait_until(lambda: numa_of(client, "uid-p2") == {"0"}, "p2 placed again on NUMA node 0")
    answer = filtered(client, "p3", 14)
    assert not answer["NodeNames"], answer
    assert answer["Error"].startswith("nfvplace.kubernetes.retry:"), answer  # until p2 shows


def numa_of(client: httpx.Client, uid: str) -> set[str]:
    """The NUMA nodes the assumed pod `uid` is counted on."""
    for assumed in client.get("/k8s/v1/assumptions").json()["pods"]:
        if assumed["uid"] == uid:
            return {n for per in assumed["takes"].values() for n in per}
    return set()
