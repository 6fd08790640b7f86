"""calls.py: the bind verb decides on the node as the assumed pods see it, under the door's lock;
a pod seen running stays assumed until its node's counts were read again; on SQLite and PostgreSQL.

The race it closes (kube-scheduler's loop on two loaded cores, one kubelet refusal in a CI run): a
bind read the node's NodeResourceTopology, then the watch stored the node's next one and dropped
the pods it shows from the assumptions, then the bind took the lock and counted neither: the
older counts did not show those pods, and the assumptions no longer held them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from nfvplace.dialects.k8s_pod import read_pod
from nfvplace.integrations.kubernetes.calls import Door, assumed_there, pod_admitted, reconcile
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.loading import SourceDocument
from nfvplace.reader import load_document
from nfvplace.store import Store
from nfvplace.store.assumed import AssumedPods
from nfvplace.store.parsed import Kept, ParsedHosts
from nfvplace.store.records import utc_now
from tests.service import kube_api

NODE = "worker-a"


def nrt(free: tuple[int, int]) -> ComputeHostDescriptor:
    host = load_document(SourceDocument(data=kube_api.nrt(NODE, free), source=NODE))
    assert isinstance(host, ComputeHostDescriptor)
    return host


def pod(name: str, cpus: int) -> Any:
    limits = {"cpu": str(cpus), "memory": "1Gi"}
    raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "cnf", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "dp", "resources": {"limits": limits}}]},
    }
    return read_pod(raw)[0]


def report(store: Store, free: tuple[int, int]) -> None:
    """What the watch does with a NodeResourceTopology (routers.hosts.report)."""
    put = store.put_host(nrt(free))
    reconcile(store, put.id, put.generation, put.availability)


class RacedHosts(ParsedHosts):
    """Nodes read as the bind reads them; once armed, the next NodeResourceTopology is reported
    right after a read, before the reader goes on (or as soon as the door's lock lets it)."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.next_report: tuple[int, int] | None = None
        self.reporter: threading.Thread | None = None

    def read(self, host_ids: Any) -> dict[str, Kept]:
        found = super().read(host_ids)
        free, self.next_report = self.next_report, None
        if free is not None:
            self.reporter = threading.Thread(target=report, args=(self.store, free))
            self.reporter.start()
            self.reporter.join(timeout=2.0)  # blocked on the lock when the read holds it
        return found


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    yield opened
    opened.close()


def test_a_bind_counts_the_pods_an_nrt_shows_while_it_decides(store: Store) -> None:
    hosts = RacedHosts(store)
    door = Door(store, hosts)
    report(store, (16, 16))
    for name in ("p1", "p2"):  # one whole NUMA node each
        decision, assumed = assumed_there(door, pod(name, 16), f"uid-{name}", NODE, 300.0)
        assert (decision.fits, assumed) == (True, True)
    hosts.next_report = (0, 0)  # the kubelet admitted both, and the exporter says so
    decision, assumed = assumed_there(door, pod("p3", 16), "uid-p3", NODE, 300.0)
    assert hosts.reporter is not None
    hosts.reporter.join()
    assert (decision.fits, assumed) == (False, False), decision
    assert "16" in decision.reason
    live = {p.uid for p in AssumedPods(store.engine).live(utc_now())}
    assert live <= {"uid-p1", "uid-p2"}  # whatever the NRT accounted for, p3 is not there


def live(store: Store) -> set[str]:
    return {p.uid for p in AssumedPods(store.engine).live(utc_now())}


def test_a_running_pod_stays_assumed_until_its_node_is_read_again(store: Store) -> None:
    """Seen running, a pod is no longer assumed once `--nrt-interval` has passed AND its node's
    NodeResourceTopology was read at a newer generation than the pod was decided on: read late,
    the counts would otherwise show the pod nowhere while another pod is bound there."""
    door = Door(store, ParsedHosts(store), nrt_interval_s=0.2)
    report(store, (16, 16))
    decision, assumed = assumed_there(door, pod("p1", 16), "uid-p1", NODE, 300.0)
    assert (decision.fits, assumed) == (True, True)
    assert pod_admitted(door, "uid-p1")
    assert not pod_admitted(door, "uid-p1")  # seen running once
    time.sleep(0.3)
    assert live(store) == {"uid-p1"}  # the interval passed, the node was not read again
    p2, _ = assumed_there(door, pod("p2", 16), "uid-p2", NODE, 0.0)  # decided, not assumed
    assert p2.consumption == {"cpu": {1: 16}}  # p1 counted on NUMA node 0
    # p1 arrived as another pod left: the node's totals did not move, and account for nothing
    report(store, (16, 16))
    assert live(store) == set()  # the newer object ends p1's assumption
