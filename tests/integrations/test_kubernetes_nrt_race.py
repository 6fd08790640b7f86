"""An exporter's object read before the pod watch saw what its counts were read with: its pod
fingerprint matches no set of the pods known on the node. The store keeps it, and the pod event
that comes late matches it again (`node_pods.settle`), with the real fingerprint (`sign`, checked
against the Go module in test_kubernetes_fingerprint.py), the pod watch's `NodePods` and the
store's `AssumedPods` on SQLite and PostgreSQL.

These fail at k8s-gap2r: nothing was kept, nothing matched the object again, the pod stayed
assumed until the timer (once seen running) or its expiry.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from nfvplace.integrations.kubernetes.fingerprint import sign
from nfvplace.integrations.kubernetes.node_pods import NodePods, settle, shows
from nfvplace.store import Store
from nfvplace.store.assumed import AssumedPod, AssumedPods
from nfvplace.store.records import utc_now

NODE = "worker-a"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    yield opened
    opened.close()


def nrt(*pods: str) -> dict[str, Any]:
    """An exporter's object whose counts were read with `pods` running."""
    return {
        "attributes": [
            {"name": "nodeTopologyPodsFingerprint", "value": sign(pods)},
            {"name": "nodeTopologyPodsFingerprintMethod", "value": "all"},
        ]
    }


def assume(store: Store, name: str) -> None:
    """The bind verb assumed `cnf/name` (uid `name`, 4 CPUs) on the node, on generation 1."""
    now = utc_now()
    pod = AssumedPod(name, f"cnf/{name}", NODE, {"cpu": {0: 4}}, now, now + timedelta(minutes=5), 1)
    AssumedPods(store.engine).assume(NODE, now, lambda known, conn: (None, pod, (1, {"cpu": 32})))


def counted(store: Store) -> list[str]:
    return [p.uid for p in AssumedPods(store.engine).live(utc_now(), [NODE])]


def read(store: Store, pods: NodePods, generation: int, obj: dict[str, Any]) -> list[str]:
    """The NRT watch reads `obj` (free totals unchanged: a pod left as another arrived)."""
    signed = shows(pods, NODE, obj)
    return AssumedPods(store.engine).reconcile(NODE, generation, {"cpu": 32}, utc_now(), signed)


def test_a_departure_seen_after_the_object_ends_the_arrival_it_names(store: Store) -> None:
    pods = NodePods()
    pods.seen("u0", "cnf/p0", NODE, running=True)
    assume(store, "p1")
    pods.seen("p1", "cnf/p1", NODE, running=False)
    assert read(store, pods, 2, nrt("cnf/p1")) == []  # p0 still known running: no set matches
    assert counted(store) == ["p1"]
    assert settle(store, pods, pods.gone("nobody")) == []  # nothing changed
    assert settle(store, pods, {"worker-b"}) == []  # nothing kept there
    assert counted(store) == ["p1"]
    assert pods.gone("u0") == {NODE}  # the pod watch sees p0 leave, late
    assert settle(store, pods, {NODE}) == ["p1"]
    assert counted(store) == []
    assert AssumedPods(store.engine).unmatched() == []


def test_an_arrival_seen_after_the_object_resolves_it(store: Store) -> None:
    """q, bound by another scheduler, is in the object before the pod watch sees it bound."""
    pods = NodePods()
    pods.seen("u0", "cnf/p0", NODE, running=True)
    assume(store, "p1")
    assert read(store, pods, 2, nrt("cnf/p0", "cnf/p1", "cnf/q")) == []
    assert counted(store) == ["p1"]
    assert pods.seen("uq", "cnf/q", NODE, running=False) == {NODE}
    assert pods.seen("uq", "cnf/q", NODE, running=False) == set()  # told once
    assert settle(store, pods, {NODE}) == ["p1"]
    assert counted(store) == []


def test_a_change_that_does_not_resolve_it_keeps_it_until_a_newer_object(store: Store) -> None:
    pods = NodePods()
    pods.seen("u0", "cnf/p0", NODE, running=True)
    assume(store, "p1")
    assert read(store, pods, 2, nrt("cnf/p1", "cnf/x")) == []  # x never seen
    assert pods.seen("u2", "cnf/p2", NODE, running=True) == {NODE}
    assert settle(store, pods, {NODE}) == []  # still no set
    assert AssumedPods(store.engine).unmatched() == [NODE]
    assert read(store, pods, 3, nrt("cnf/p0", "cnf/p1", "cnf/p2")) == ["p1"]  # a newer one
    assert AssumedPods(store.engine).unmatched() == []
    assert settle(store, pods, None) == []
