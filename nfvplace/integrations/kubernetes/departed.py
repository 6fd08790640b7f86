"""Pods that left a node before its NodeResourceTopology shows them gone: kube-scheduler is told
to try again where their room would take the pod, instead of "unresolvable".

Churn deletes pods and creates others at once: kube-scheduler asks about the new pods at once,
and the exporter's object that shows the room free comes later (its interval, and a loaded API
server). Answered from counts that still hold the departed pods, the node looked full, and a pod
refused by every node as "unresolvable" waits in kube-scheduler's unschedulable queue for a
cluster event that the object's update is not (or for its 5-minute flush).

The pod watch (one worker) records each departure of a pod that takes something the kubelet
counts per NUMA node (`Departures.left`) in the database (`store/departed.py`), where every worker
and replica reads it; an object of the node that shows it gone ends it: its pod fingerprint
matched a set without the pod (`Departures.shown`, called by `NodePods.matched`), or it carries no
fingerprint and came after the departure was recorded (`Departures.unsigned`). Filter, when no
node takes the pod (`retry_where_departed`), gives each refused node's departed pods back (each on
one of its NUMA nodes, every way, since which one is not known) and decides again: where that
takes the pod, the node is "resolvable" and the answer is the filter's `Error`
(`nfvplace.kubernetes.retry`), which sends the pod to kube-scheduler's backoff queue. A departure
counts for `retry_s` at most (`DEPARTED_RETRY_MIN_S`, or twice the exporter's interval): a
departure no object shows never makes a pod wait longer.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ...dialects.base import DialectError
from ...dialects.k8s_pod import read_pod
from ...dialects.kubernetes import Pod
from ...models.chd import TopologyManager
from ...store.assumed import AssumedPods
from ...store.departed import DepartedPod, DepartedPods
from ...store.records import utc_now
from .admission import admit, amount, pod_demand
from .extender import key_of
from .hints import UndecidedError
from .state import Consumption, NodeState, node_state, topology_manager
from .verdicts import Assumed, Verdicts

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from ...store import Store
    from ...store.parsed import ParsedHosts

log = logging.getLogger("nfvplace.kubernetes")

DEPARTED_RETRY_MIN_S = 60.0
"""A departure no object has shown makes filter answer "retry" this long at least after it was
seen (`retry_s`: twice the exporter's interval, when longer)."""
PLACINGS = 256
"""How many ways of putting the departed pods on NUMA nodes filter tries at most; beyond, all of
them on one NUMA node, each in turn."""


def retry_s(nrt_interval_s: float) -> float:
    return max(DEPARTED_RETRY_MIN_S, 2 * nrt_interval_s)


def takes_of(data: Mapping[str, Any]) -> dict[str, int]:
    """What a pod (its JSON) holds that the kubelet counts per NUMA node (resource -> amount:
    exclusive CPUs, memory and hugepages, devices); empty when nothing, or unreadable."""
    try:
        pod = read_pod({"apiVersion": "v1", "kind": "Pod", **data})[0]
        demand = pod_demand(pod)
    except (DialectError, ValueError, TypeError, KeyError):
        return {}
    out = {"cpu": demand.cpus} if demand.cpus else {}
    for held in (demand.memory, demand.devices):
        out.update({resource: int(v) for resource, v in held.items() if v})
    return out


class Departures:
    """The pod watch's record of the departures not shown yet (thread-safe: the pod watch
    records them, the NRT watch ends them); each node's kept in memory too, to write only where
    there is something to end."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.store = DepartedPods(engine)
        self._lock = threading.Lock()
        self._kept: dict[str, dict[str, str]] = {}  # node -> uid -> namespace/name
        self._over: dict[str, set[str]] = {}  # node -> uids shown gone, to delete (`flush`)
        for node, pods in self.store.on_nodes(utc_now() - timedelta(days=1)).items():
            self._kept[node] = {p.uid: p.pod for p in pods}  # recorded before a restart

    def left(self, node: str, uid: str, data: Mapping[str, Any]) -> bool:
        """The pod watch saw the pod `uid` (its JSON `data`) leave `node`, where it knew it:
        recorded when the pod holds something the kubelet counts per NUMA node and is not an
        assumed pod still counted (nfvplace stops counting those itself). True when recorded."""
        takes = takes_of(data)
        key = key_of(uid)
        if not takes or AssumedPods(self.engine).live(utc_now(), uid=key):
            return False
        meta = data.get("metadata") or {}
        name = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        self.store.left(DepartedPod(key, node, name, takes, utc_now()))
        with self._lock:
            self._kept.setdefault(node, {})[key] = name
        log.debug("pod %s left %s (takes %s): kept until an object shows it", name, node, takes)
        return True

    def shown(self, node: str, pods: Collection[str]) -> None:
        """An object of `node` showed exactly the pods `pods` (namespace/name): the departures
        it does not show are over (written at the next `flush`)."""
        with self._lock:
            kept = self._kept.get(node) or {}
            over = [uid for uid, name in kept.items() if name not in pods]
            for uid in over:
                del kept[uid]
            if over:
                self._over.setdefault(node, set()).update(over)

    def flush(self) -> None:
        """Write what `shown` learnt (it is told inside the transaction that matches the object,
        which holds the door's lock: a write of its own there would wait for it)."""
        with self._lock:
            over, self._over = self._over, {}
        for node, uids in over.items():
            self.store.shown(node, uids)
            log.debug("node %s: an object shows %d departure(s)", node, len(uids))

    def unsigned(self, node: str) -> None:
        """An object of `node` without a pod fingerprint came: it cannot tell which pods it
        shows, so the departures recorded before it count as shown (the older rule's guess)."""
        with self._lock:
            kept = self._kept.pop(node, None)
        if kept:
            self.store.clear(node, utc_now())

    def node_gone(self, node: str) -> None:
        with self._lock:
            self._kept.pop(node, None)
        self.store.drop_node(node)


def placings(pods: int, numa: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Each way of putting `pods` departed pods on the NUMA nodes `numa` (all of them on one NUMA
    node, each in turn, when there are more than `PLACINGS`)."""
    if len(numa) ** pods <= PLACINGS:
        yield from itertools.product(numa, repeat=pods)
    else:
        yield from ((n,) * pods for n in numa)


def room_for(
    pod: Pod,
    reported: NodeState,
    manager: TopologyManager,
    assumed: Sequence[tuple[str, Consumption]],
    departed: Sequence[DepartedPod],
) -> tuple[int, ...] | None:
    """The NUMA nodes the departed pods' room would have to be on for the node to take `pod`
    (its counts given them back, the assumed pods taken), or None when no way does."""
    for placed in placings(len(departed), reported.numa.nodes):
        state = reported.copy()
        for gone, node in zip(departed, placed, strict=True):
            state.give(node, gone.takes)
        for _uid, consumption in assumed:
            state.take(consumption)
        try:
            if admit(pod, state, manager).admit:
                return placed
        except UndecidedError:
            return None
    return None


def why(departed: Sequence[DepartedPod], placed: tuple[int, ...]) -> str:
    named = ", ".join(
        f"{p.pod} ({', '.join(amount(r, v) for r, v in sorted(p.takes.items()))}) on NUMA node {n}"
        for p, n in zip(departed, placed, strict=True)
    )
    return (
        f" (the pod watch saw {len(departed)} pod(s) leave this node that its "
        f"NodeResourceTopology does not show gone yet; with their room it takes the pod: {named})"
    )


def retry_where_departed(
    store: Store,
    hosts: ParsedHosts,
    nrt_interval_s: float,
    pod: Pod,
    found: Verdicts,
    assumed: Assumed,
) -> int:
    """When no node takes `pod`: each refused node where pods left that its object does not
    show gone yet, and whose room would take it (`room_for`), is marked resolvable in `found`
    (with why, in numbers), so that filter answers "retry". How many were."""
    if found.fits.any() or found.resolvable.any() or not len(found.names):
        return 0  # a node takes it, or the answer is "retry" already
    since = utc_now() - timedelta(seconds=retry_s(nrt_interval_s))
    departed = DepartedPods(store.engine).on_nodes(since, found.names)
    if not departed:
        return 0
    read, marked = hosts.read(list(departed)), 0
    for i, name in enumerate(found.names):
        if name not in departed or name not in read:
            continue
        host = read[name][1]
        gone = departed[name]
        placed = room_for(
            pod, node_state(host), topology_manager(host), assumed.get(name, ()), gone
        )
        log.debug(
            "pod %s/%s on %s, %d departed: %s", pod.namespace, pod.name, name, len(gone), placed
        )
        if placed is not None:
            found.resolvable[i] = True
            found.reasons[i] += why(gone, placed)
            marked += 1
    return marked
