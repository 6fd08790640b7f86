"""An assumed pod's NUMA node is placed again on each signed object, by the kubelet's rule
(`again.py`): the lowest NUMA node that holds it, oldest first; and stored so (`Shows.place` in
`AssumedPods.reconcile`, and `rematch` for an object matched late), on SQLite and PostgreSQL.
These fail at main (no `again` module, no `Shows.place`)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from nfvplace.integrations.kubernetes.again import kubelet_order, lowest
from nfvplace.integrations.kubernetes.hints import NumaInfo
from nfvplace.integrations.kubernetes.state import NodeState, Pool
from nfvplace.models.chd import TopologyManager
from nfvplace.store import Store
from nfvplace.store.assumed import AssumedPod, AssumedPods, Counts, Shows
from nfvplace.store.records import utc_now
from tests.integrations.test_kubernetes_nrt_race import store

__all__ = ["store"]  # the fixture, SQLite and PostgreSQL
NODE = "worker-a"
VF = "intel.com/sriov_dp"
SINGLE = TopologyManager(policy="single-numa-node", scope="container")


def counts(cpus: tuple[int, int], vfs: tuple[int, int] = (4, 4)) -> NodeState:
    return NodeState(
        NumaInfo((0, 1), None),
        {0: 18, 1: 18},
        {n: Pool(16, cpus[n]) for n in (0, 1)},
        {},
        {VF: {n: Pool(4, vfs[n]) for n in (0, 1)}},
    )


def assumed(uid: str, takes: Counts, age: int = 0) -> AssumedPod:
    now = utc_now() - timedelta(seconds=age)
    return AssumedPod(uid, f"cnf/{uid}", NODE, takes, now, now + timedelta(minutes=5), 1)


def test_the_lowest_numa_node_that_holds_all_of_it() -> None:
    assert lowest(counts((2, 6)), {"cpu": 3, VF: 1}) == 1
    assert lowest(counts((16, 6)), {"cpu": 3, VF: 1}) == 0
    assert lowest(counts((16, 6), vfs=(0, 2)), {"cpu": 3, VF: 1}) == 1  # no VF on node 0
    assert lowest(counts((2, 2)), {"cpu": 3}) is None
    assert lowest(counts((2, 6)), {"cpu": 3, "memory": 2**30}) == 1  # memory not counted here


def test_pending_pods_are_placed_again_in_order() -> None:
    """On 16 | 6 free: p2 (3 CPUs, decided for node 1) goes to node 0, p3 (14, node 0 as
    decided) no longer fits there after p2 and keeps its prediction, p4 (2 CPUs on both nodes)
    keeps its; under another policy nothing moves."""
    place = kubelet_order(counts((16, 6)), SINGLE)
    pending = [
        assumed("p2", {"cpu": {1: 3}, VF: {1: 1}}, age=3),
        assumed("p3", {"cpu": {0: 14}}, age=2),
        assumed("p4", {"cpu": {0: 1, 1: 1}}, age=1),
    ]
    assert place(pending) == {"p2": {"cpu": {0: 3}, VF: {0: 1}}}
    assert place(pending[1:]) == {}  # p3 on node 0 already
    best = TopologyManager(policy="best-effort", scope="container")
    assert kubelet_order(counts((16, 6)), best)(pending) == {}


def test_a_signed_object_stores_the_pods_it_does_not_show_placed_again(store: Store) -> None:
    pods, now = AssumedPods(store.engine), utc_now()
    p1, p2 = assumed("p1", {"cpu": {0: 4}}, age=2), assumed("p2", {"cpu": {1: 3}}, age=1)
    for pod in (p1, p2):
        pods.assume(NODE, now, lambda known, conn, pod=pod: (None, pod, (1, {"cpu": 32})))
    before = pods.live(now, [NODE])  # a worker's parsed copy, read before the object
    assert [p.consumption for p in before] == [{"cpu": {0: 4}}, {"cpu": {1: 3}}]
    names_p1 = Shows(
        "pfp0v001", lambda signed, pending: ["p1"], kubelet_order(counts((12, 6)), SINGLE)
    )
    assert pods.reconcile(NODE, 2, {"cpu": 18}, utc_now(), names_p1) == ["p1"]
    assert [(p.uid, p.consumption) for p in pods.live(utc_now(), [NODE])] == [
        ("p2", {"cpu": {0: 3}})
    ]


@pytest.mark.parametrize(
    ("stored", "after"),
    [
        (2, {"cpu": {0: 3}}),  # the object matched late is the one stored: placed again
        (3, {"cpu": {1: 3}}),  # another object is stored now: its own reconcile places it
    ],
)
def test_an_object_matched_late_places_the_pods_it_does_not_show_again(
    store: Store, stored: int, after: Counts
) -> None:
    """The object (16 | 6 free) matched no pod set when read (the pod watch behind it); the late
    pod event matches it (`rematch`): p2, which it does not show, is placed again on its counts,
    as when an object matches at once. At main `rematch` placed nothing: p2 stayed on node 1."""
    pods, now = AssumedPods(store.engine), utc_now()
    p2 = assumed("p2", {"cpu": {1: 3}})
    pods.assume(NODE, now, lambda known, conn: (None, p2, (1, {"cpu": 32})))
    behind = Shows("pfp0v001", lambda signed, pending: None)
    assert pods.reconcile(NODE, 2, {"cpu": 32}, utc_now(), behind) == []  # totals as before
    assert pods.unmatched() == [NODE]
    again = (stored, kubelet_order(counts((16, 6)), SINGLE))
    assert pods.rematch(NODE, utc_now(), lambda signed, pending: [], again) == []
    assert [p.consumption for p in pods.live(utc_now(), [NODE])] == [after]
    assert pods.unmatched() == []
