"""Pods that left a node before its NodeResourceTopology shows them gone
(`integrations/kubernetes/departed.py`), with the pod watch's `NodePods`, the real fingerprint
(`sign`) and the store on SQLite and PostgreSQL; and which answer filter gives for them
(`room_for`, `retry_where_departed`'s rule), with the kubelet's admission on real counts.

These fail at main (no `departed` module, no `Departures`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from nfvplace.dialects.kubernetes import Pod
from nfvplace.integrations.kubernetes.departed import (
    PLACINGS,
    Departures,
    placings,
    room_for,
    takes_of,
)
from nfvplace.integrations.kubernetes.hints import NumaInfo
from nfvplace.integrations.kubernetes.node_pods import NodePods, settle, shows
from nfvplace.integrations.kubernetes.state import NodeState, Pool
from nfvplace.models.chd import TopologyManager
from nfvplace.store import Store
from nfvplace.store.assumed import AssumedPod, AssumedPods
from nfvplace.store.departed import DepartedPod, DepartedPods
from nfvplace.store.records import utc_now
from tests.integrations.test_kubernetes_nrt_race import nrt, store

__all__ = ["store"]  # the fixture, SQLite and PostgreSQL

NODE = "worker-a"
VF = "intel.com/sriov_dp"


def pod_json(name: str, cpus: int, node: str = NODE, guaranteed: bool = True) -> dict[str, Any]:
    resources = {"limits": {"cpu": str(cpus), "memory": "1Gi", VF: "1"}}
    if not guaranteed:
        resources = {"requests": {"cpu": str(cpus)}}
    return {
        "metadata": {"name": name, "namespace": "cnf", "uid": f"uid-{name}"},
        "spec": {"nodeName": node, "containers": [{"name": "dp", "resources": resources}]},
        "status": {"phase": "Running"},
    }


def kept(store: Store) -> list[str]:
    found = DepartedPods(store.engine).on_nodes(utc_now() - timedelta(hours=1), [NODE])
    return [p.pod for p in found.get(NODE, [])]


def test_what_a_pod_holds_per_numa_node() -> None:
    assert takes_of(pod_json("p", 6)) == {"cpu": 6, "memory": 2**30, VF: 1}
    assert takes_of(pod_json("p", 6, guaranteed=False)) == {}  # shared CPUs: nothing pinned
    assert takes_of({"spec": "not a spec"}) == {}


def test_a_departure_is_kept_until_a_matching_object_shows_it_gone(store: Store) -> None:
    """p0 and p1 run; p0 leaves. An object read before (naming both) keeps it; one naming p1
    alone ends it, written once the matching transaction is over (`flush`: on SQLite a write
    of its own inside it would wait for the lock the transaction holds)."""
    departures = Departures(store.engine)
    pods = NodePods(departures)
    for name in ("p0", "p1"):
        pods.saw(f"uid-{name}", pod_json(name, 14))
    now = utc_now()
    pending = AssumedPod("p9", "cnf/p9", NODE, {"cpu": {0: 1}}, now, now + timedelta(minutes=5), 1)
    assumed = AssumedPods(store.engine)
    assumed.assume(NODE, now, lambda known, conn: (None, pending, (1, {"cpu": 32})))
    assert pods.gone("uid-p0") == {NODE}
    assert departures.left(NODE, "uid-p0", pod_json("p0", 14))
    assert kept(store) == ["cnf/p0"]
    stale = shows(pods, NODE, nrt("cnf/p0", "cnf/p1"))
    assert assumed.reconcile(NODE, 2, {"cpu": 4}, utc_now(), stale) == []
    settle(store, pods, (NODE,))
    assert kept(store) == ["cnf/p0"]  # the object was read before p0 left
    fresh = shows(pods, NODE, nrt("cnf/p1"))
    assert assumed.reconcile(NODE, 3, {"cpu": 18}, utc_now(), fresh) == []  # inside: no write
    assert kept(store) == ["cnf/p0"]
    settle(store, pods, (NODE,))
    assert kept(store) == []


def test_what_is_not_kept_and_what_an_unsigned_object_ends(store: Store) -> None:
    """A pod that pins nothing, and an assumed pod still counted (dropped, it is counted no
    more), are not kept; an object without a fingerprint ends what was kept before it; a new
    watch (a restarted worker) knows what the one before kept."""
    departures = Departures(store.engine)
    assert not departures.left(NODE, "uid-s", pod_json("s", 2, guaranteed=False))
    now = utc_now()
    taken = AssumedPod("uid-a", "cnf/a", NODE, {"cpu": {0: 4}}, now, now + timedelta(minutes=5), 1)
    AssumedPods(store.engine).assume(NODE, now, lambda known, conn: (None, taken, (1, {"cpu": 32})))
    assert not departures.left(NODE, "uid-a", pod_json("a", 4))
    assert departures.left(NODE, "uid-p0", pod_json("p0", 14))
    again = Departures(store.engine)
    again.shown(NODE, frozenset({"cnf/p1"}))
    again.flush()
    assert kept(store) == []
    assert departures.left(NODE, "uid-p0", pod_json("p0", 14))
    departures.unsigned("worker-b")
    assert kept(store) == ["cnf/p0"]
    departures.unsigned(NODE)
    assert kept(store) == []


def full_node(free: tuple[int, int]) -> NodeState:
    """Two NUMA nodes of 16 allocatable CPUs and 4 VFs, `free` CPUs and 3 VFs free on each."""
    return NodeState(
        NumaInfo((0, 1), None),
        {0: 18, 1: 18},
        {n: Pool(16, free[n]) for n in (0, 1)},
        {},
        {VF: {n: Pool(4, 3) for n in (0, 1)}},
    )


def cnf(cpus: int) -> Pod:
    from nfvplace.dialects.k8s_pod import read_pod

    return read_pod({"apiVersion": "v1", "kind": "Pod", **pod_json("new", cpus)})[0]


def left(uid: str, cpus: int) -> DepartedPod:
    return DepartedPod(uid, NODE, f"cnf/{uid}", {"cpu": cpus, VF: 1}, datetime.now())


SINGLE = TopologyManager(policy="single-numa-node", scope="container")


def test_the_departed_room_must_take_the_pod() -> None:
    """2 CPUs free on each NUMA node: p0 (14 CPUs) left, on a NUMA node the counts do not say.
    A 14-CPU pod fits once its room shows (on either NUMA node), a 17-CPU pod never; with a pod
    assumed there taking 4 of them, a 14-CPU pod no longer fits."""
    state = full_node((2, 2))
    assert room_for(cnf(14), state, SINGLE, (), [left("p0", 14)]) == (0,)
    assert room_for(cnf(17), state, SINGLE, (), [left("p0", 14)]) is None
    assert (
        room_for(cnf(14), state, SINGLE, (("a", {"cpu": {0: 4, 1: 4}}),), [left("p0", 14)]) is None
    )
    two = [left("p0", 6), left("p1", 6)]  # 12 CPUs on one NUMA node only if both were there
    assert room_for(cnf(14), state, SINGLE, (), two) == (0, 0)
    assert room_for(cnf(15), state, SINGLE, (), two) is None
    assert state.cpus[0].free == 2  # the counts are not written


def test_how_the_departed_pods_are_put_on_numa_nodes() -> None:
    assert list(placings(2, (0, 1))) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    many = list(placings(9, (0, 1)))
    assert PLACINGS < 2**9
    assert many == [(0,) * 9, (1,) * 9]
