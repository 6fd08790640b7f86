"""calls.py: the bind verb decides on the node as the assumed pods see it, under the door's lock,
and creates the Binding under the node's own lock (a node's Bindings in the order they were
decided, another node's meanwhile); a pod seen running stays assumed until its node's counts
were read again; on SQLite and PostgreSQL.

The first race it closes (kube-scheduler's loop on two loaded cores, one kubelet refusal in a CI run): a
bind read the node's NodeResourceTopology, then the watch stored the node's next one and dropped
the pods it shows from the assumptions, then the bind took the lock and counted neither: the
older counts did not show those pods, and the assumptions no longer held them. The second (the
same CI failure, again, with nfvplace's log): two binds to one node decided A then B, and B's
Binding landed first; the kubelet admitted B on the NUMA node nfvplace had counted A on, and A fit
no NUMA node.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from nfvplace.dialects.k8s_pod import read_pod
from nfvplace.integrations.kubernetes.calls import (
    Door,
    assumed_there,
    bind_call,
    filter_call,
    pod_admitted,
    pod_bound,
    reconcile,
)
from nfvplace.integrations.kubernetes.extender import BindingArgs, read_args
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.loading import SourceDocument
from nfvplace.reader import load_document
from nfvplace.store import Store
from nfvplace.store.assumed import ACCOUNTED_KEPT_S, AssumedPod, AssumedPods
from nfvplace.store.parsed import Kept, ParsedHosts
from nfvplace.store.records import utc_now
from tests.service import kube_api

NODE = "worker-a"


def nrt(free: tuple[int, int]) -> ComputeHostDescriptor:
    host = load_document(SourceDocument(data=kube_api.nrt(NODE, free), source=NODE))
    assert isinstance(host, ComputeHostDescriptor)
    return host


def raw_pod(name: str, cpus: int) -> dict[str, Any]:
    limits = {"cpu": str(cpus), "memory": "1Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "cnf", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "dp", "resources": {"limits": limits}}]},
    }


def bound_pod(name: str, cpus: int) -> dict[str, Any]:
    """The pod as the pod watch sees it once bound to NODE."""
    raw = raw_pod(name, cpus)
    return {**raw, "spec": {**raw["spec"], "nodeName": NODE}}


def pod(name: str, cpus: int) -> Any:
    return read_pod(raw_pod(name, cpus))[0]


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

    def read(self, host_ids: Any, through: Any = None) -> dict[str, Kept]:
        found = super().read(host_ids, through)
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


class Kubelet:
    """The node's kubelet as tests/k8s_loop simulates it (`single-numa-node`, container scope):
    each Binding, as it lands, admits its pod on the lowest NUMA node that holds it, or refuses
    it. `slow` Bindings take 0.3 s to land (the API server, a loaded machine)."""

    def __init__(self, free: tuple[int, int], cpus: dict[str, int], slow: set[str]) -> None:
        self.free = list(free)
        self.cpus = cpus
        self.slow = slow
        self.landed: list[str] = []
        self.refused: list[str] = []
        self.binding = threading.Event()  # a slow Binding is on its way
        self.lock = threading.Lock()

    def bind(self, args: BindingArgs) -> None:
        if args.name in self.slow:
            self.binding.set()
            time.sleep(0.3)
        with self.lock:
            self.landed.append(args.name)
            wants = self.cpus[args.name]
            numa = next((n for n, free in enumerate(self.free) if free >= wants), None)
            if numa is None:
                self.refused.append(args.name)
            else:
                self.free[numa] -= wants

    def read(self, namespace: str, name: str) -> dict[str, Any]:
        return raw_pod(name, self.cpus[name])


def test_a_nodes_bindings_land_in_the_order_its_pods_were_decided(store: Store) -> None:
    """A (5 CPUs) is decided on NUMA node 0, B (4) then on node 1. Were B's Binding to land while
    A's is on its way, its kubelet would admit B on node 0 (the lowest that holds it) and A on
    none: B's bind waits for A's Binding."""
    door = Door(store, ParsedHosts(store))
    report(store, (5, 4))
    kubelet = Kubelet((5, 4), {"a": 5, "b": 4}, slow={"a"})

    def bind(name: str, answers: dict[str, dict[str, str]]) -> None:
        args = BindingArgs(name, "cnf", f"uid-{name}", NODE)
        answers[name] = bind_call(door, args, kubelet.read, kubelet.bind, 300.0)

    answers: dict[str, dict[str, str]] = {}
    first = threading.Thread(target=bind, args=("a", answers))
    first.start()
    assert kubelet.binding.wait(timeout=5.0)
    bind("b", answers)
    first.join()
    assert answers == {"a": {"Error": ""}, "b": {"Error": ""}}
    assert (kubelet.landed, kubelet.refused) == (["a", "b"], [])
    assert live(store) == {"uid-a", "uid-b"}


def test_a_slow_binding_to_one_node_holds_up_no_bind_to_another(store: Store) -> None:
    """The Binding is created under its node's own lock, after the decision is committed: while
    A's Binding is on its way to worker-a, B is decided, bound and assumed on worker-b."""
    door = Door(store, ParsedHosts(store))
    report(store, (16, 16))
    other = load_document(SourceDocument(data=kube_api.nrt("worker-b", (16, 16)), source="b"))
    assert isinstance(other, ComputeHostDescriptor)
    put = store.put_host(other)
    reconcile(store, put.id, put.generation, put.availability)
    kubelet = Kubelet((16, 16), {"a": 4, "b": 4}, slow={"a"})
    answers: dict[str, dict[str, str]] = {}

    def bind(name: str, node: str) -> None:
        args = BindingArgs(name, "cnf", f"uid-{name}", node)
        answers[name] = bind_call(door, args, kubelet.read, kubelet.bind, 300.0)

    first = threading.Thread(target=bind, args=("a", NODE))
    first.start()
    assert kubelet.binding.wait(timeout=5.0)
    bind("b", "worker-b")
    assert kubelet.landed == ["b"]  # A's Binding is still on its way
    assert live(store) == {"uid-a", "uid-b"}  # A was assumed when it was decided
    first.join()
    assert answers == {"a": {"Error": ""}, "b": {"Error": ""}}
    assert kubelet.landed == ["b", "a"]


def test_a_refused_binding_leaves_nothing_behind(store: Store) -> None:
    door = Door(store, ParsedHosts(store))
    report(store, (16, 16))

    def refuse(args: BindingArgs) -> None:
        raise RuntimeError("409 Conflict: pod cnf/a is being deleted")

    def read(namespace: str, name: str) -> dict[str, Any]:
        return raw_pod(name, 16)  # unbound

    answer = bind_call(door, BindingArgs("a", "cnf", "uid-a", NODE), read, refuse, 300.0)
    assert answer["Error"].startswith(
        "nfvplace.kubernetes.bind_failed: the API server refused: 409"
    )
    assert live(store) == set()
    decision, _ = assumed_there(door, pod("b", 16), "uid-b", NODE, 300.0)
    assert decision.consumption == {"cpu": {0: 16}}  # NUMA node 0 is still free


def test_the_watch_leaves_a_pod_its_bind_is_assuming_as_the_bind_decided(store: Store) -> None:
    """The pod watch sees the Binding before the bind's transaction ends: it waits for the lock,
    then finds the pod assumed, and decides nothing again (a second decision would count the pods
    decided after it, and move it to the end of the node's queue)."""
    door = Door(store, ParsedHosts(store))
    report(store, (16, 16))
    watched: list[bool] = []

    def bind(args: BindingArgs) -> None:
        raw = bound_pod(args.name, 8)
        watch = threading.Thread(target=lambda: watched.append(pod_bound(door, raw, 300.0)))
        watch.start()
        watch.join(timeout=0.3)  # it waits for the lock the bind holds
        threads.append(watch)

    threads: list[threading.Thread] = []
    args = BindingArgs("a", "cnf", "uid-a", NODE)
    assert bind_call(door, args, lambda ns, name: raw_pod(name, 8), bind, 300.0) == {"Error": ""}
    threads[0].join()
    assert watched == [False]
    (assumed,) = AssumedPods(store.engine).live(utc_now())
    assert (assumed.uid, assumed.consumption) == ("uid-a", {"cpu": {0: 8}})


def test_the_watch_does_not_assume_again_a_pod_its_node_accounted_for(store: Store) -> None:
    """The Binding lands before the bind's transaction ends: the watch can see the pod bound only
    after the node's next object accounted for it. The pod is remembered for a minute."""
    door = Door(store, ParsedHosts(store))
    report(store, (16, 16))
    args = BindingArgs("a", "cnf", "uid-a", NODE)
    assert bind_call(door, args, lambda ns, name: raw_pod(name, 8), lambda a: None, 300.0) == {
        "Error": ""
    }
    report(store, (8, 16))  # the kubelet admitted it, and the exporter says so
    assert live(store) == set()
    assert not pod_bound(door, bound_pod("a", 8), 300.0)
    assert live(store) == set()
    assert not AssumedPods(store.engine).drop("uid-a", counting=True)  # DELETE: 404, as GET
    assert not pod_bound(door, bound_pod("a", 8), 300.0)  # still known
    decision, _ = assumed_there(door, pod("b", 16), "uid-b", NODE, 0.0)
    assert decision.consumption == {"cpu": {1: 16}}  # a counted once, by the counts


@pytest.mark.parametrize(
    ("accounted_ago_s", "expires_in_s", "ended"),
    [(1.0, 300.0, False), (ACCOUNTED_KEPT_S + 1, 300.0, True), (1.0, -1.0, True)],
)
def test_an_accounted_pod_is_known_a_minute(
    accounted_ago_s: float, expires_in_s: float, ended: bool
) -> None:
    now = utc_now()
    accounted = now - timedelta(seconds=accounted_ago_s)
    expires = now + timedelta(seconds=expires_in_s)
    known = AssumedPod("u", "cnf/a", NODE, {"cpu": {0: 1}}, now, expires, 1, None, accounted)
    assert known.ended(now, {}) is ended
    assert not known.counts


def second_node(store: Store) -> None:
    other = load_document(SourceDocument(data=kube_api.nrt("worker-b", (16, 16)), source="b"))
    assert isinstance(other, ComputeHostDescriptor)
    put = store.put_host(other)
    reconcile(store, put.id, put.generation, put.availability)


def test_a_pod_a_dead_bind_left_assumed_is_decided_again_when_bound_again(store: Store) -> None:
    """A bind's process died after committing the pod's assumption, before its Binding: the pod
    is still Pending, and kube-scheduler binds it again (here to another node). The assumption
    is forgotten and the pod decided again; its first node's room is free again."""
    door = Door(store, ParsedHosts(store))
    report(store, (16, 16))
    second_node(store)
    decision, assumed = assumed_there(door, pod("a", 16), "uid-a", NODE, 300.0)  # no Binding
    assert (decision.consumption, assumed) == ({"cpu": {0: 16}}, True)
    landed: list[tuple[str, str]] = []
    args = BindingArgs("a", "cnf", "uid-a", "worker-b")
    read = lambda ns, name: raw_pod(name, 16)  # noqa: E731 - unbound, as the API server says
    assert bind_call(door, args, read, lambda a: landed.append((a.name, a.node)), 300.0) == {
        "Error": ""
    }
    assert landed == [("a", "worker-b")]
    (again,) = AssumedPods(store.engine).live(utc_now())
    assert (again.uid, again.node) == ("uid-a", "worker-b")
    decision, _ = assumed_there(door, pod("b", 16), "uid-b", NODE, 300.0)
    assert decision.consumption == {"cpu": {0: 16}}


@pytest.mark.parametrize("read_again", ["bound", "unreadable"])
def test_a_pod_assumed_and_bound_or_unreadable_stays_assumed(store: Store, read_again: str) -> None:
    """The pod watch assumed a pod it saw bound (or the API server cannot say): a bind of it
    decides nothing again, and the API server says where it is."""
    door = Door(store, ParsedHosts(store))
    report(store, (16, 16))
    assert pod_bound(door, bound_pod("a", 8), 300.0)
    reads = [0]

    def read(namespace: str, name: str) -> dict[str, Any]:
        reads[0] += 1
        if reads[0] > 1 and read_again == "unreadable":
            raise RuntimeError("503 Service Unavailable")
        return bound_pod(name, 8)

    landed: list[str] = []
    args = BindingArgs("a", "cnf", "uid-a", NODE)
    assert bind_call(door, args, read, lambda a: landed.append(a.name), 300.0) == {"Error": ""}
    assert landed == ["a"]
    (kept,) = AssumedPods(store.engine).live(utc_now())
    assert (kept.uid, kept.node, kept.consumption) == ("uid-a", NODE, {"cpu": {0: 8}})


def test_a_bind_again_waits_for_the_binding_in_flight_and_keeps_what_it_assumed(
    store: Store,
) -> None:
    """kube-scheduler gave up waiting on a bind and binds the pod again while the first one's
    Binding is on its way: the second waits for the node's lock, then finds the pod bound."""
    door = Door(store, ParsedHosts(store))
    report(store, (16, 16))
    landed: list[str] = []
    on_its_way = threading.Event()

    def slow(args: BindingArgs) -> None:
        on_its_way.set()
        time.sleep(0.3)
        landed.append(args.name)

    def read(namespace: str, name: str) -> dict[str, Any]:
        return bound_pod(name, 8) if landed else raw_pod(name, 8)

    args = BindingArgs("a", "cnf", "uid-a", NODE)
    first = threading.Thread(target=bind_call, args=(door, args, read, slow, 300.0))
    first.start()
    assert on_its_way.wait(timeout=5.0)
    (assumed,) = AssumedPods(store.engine).live(utc_now())
    assert bind_call(door, args, read, lambda a: landed.append("again"), 300.0) == {"Error": ""}
    first.join()
    assert landed == ["a", "again"]
    assert AssumedPods(store.engine).live(utc_now()) == [assumed]  # not forgotten and redone


def test_filter_does_not_count_the_pods_own_assumption_a_dead_bind_left(store: Store) -> None:
    """Only its own assumption fills the node: kube-scheduler's next try finds the node for it
    (its bind decides again), and for no other pod."""
    door = Door(store, ParsedHosts(store))
    report(store, (16, 0))
    assumed_there(door, pod("a", 16), "uid-a", NODE, 300.0)  # no Binding
    for name, passed in (("a", [NODE]), ("b", [])):
        args = read_args({"Pod": raw_pod(name, 16), "NodeNames": [NODE]})
        assert (filter_call(door, args)["NodeNames"] or []) == passed
