"""The pod watch's bookkeeping (`k8s_cluster.Watch` lists and watches, this reads what it saw): a
pod that becomes bound is assumed on its node (whoever bound it: pods outside the extender's
`managedResources` pin CPUs too), one seen running is told once (`pod_admitted`), one deleted or
finished is dropped; each node's pods are known for the exporters' pod fingerprints
(`NodePods`), and a pod that leaves a node is kept until an object of the node shows it gone
(`Departures`: filter answers "retry" where its room would take a pod).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from ..integrations.kubernetes.calls import Door, pod_admitted, pod_bound, pod_gone
from ..integrations.kubernetes.departed import Departures
from ..integrations.kubernetes.node_pods import NodePods, settle
from ..store.assumed import AssumedPods
from ..store.records import utc_now

log = logging.getLogger("nfvplace.kubernetes")

FINISHED = ("Succeeded", "Failed")
WATCH_ASSUME_S = 300.0
"""How long a pod the watch saw bound stays assumed at most (the bind verb's default)."""


class PodBook:
    """What the pod watch saw, and what it tells the store (one per watch; its thread only, but
    `pods` and `departures`, which the NRT watch reads too)."""

    def __init__(self, door: Door) -> None:
        self.door = door
        self.running: set[str] = set()  # pods seen running (each admission is told once)
        self.departures = Departures(door.store.engine)
        self.pods = NodePods(self.departures)  # each node's pods, for the pod fingerprints
        self.seen: dict[str, str] = {}  # uid -> node name ("" unbound)

    def listed(self, items: Iterable[Mapping[str, Any]]) -> int:
        """The pod watch listed every pod: what changed while it was away is read as the list
        says (a pod no longer listed is gone); how many pods are known."""
        seen: dict[str, str] = {}
        for data in items:
            uid = _uid(data)
            changed = self.pods.saw(uid, data, gone=_finished(data))
            if _finished(data):
                self._left(uid, data, changed)
                pod_gone(self.door, uid)
            else:
                seen[uid] = _node(data)
                if _node(data) and (data.get("status") or {}).get("phase") == "Running":
                    self.running.add(uid)
                    pod_admitted(self.door, uid)
        self.pods.listed(set(seen))
        settle(self.door.store, self.pods, None)  # objects kept unmatched, anywhere
        for pod in AssumedPods(self.door.store.engine).live(utc_now()):  # gone while unwatched
            if pod.uid not in seen and "/" not in pod.uid:
                pod_gone(self.door, pod.uid)
        self.seen = seen
        return len(seen)

    def event(self, kind: str, data: Mapping[str, Any]) -> int:
        """A watch event of the pod `data`; how many pods are known."""
        uid, seen = _uid(data), self.seen
        gone = kind == "DELETED" or _finished(data)
        changed = self.pods.saw(uid, data, gone=gone)
        if gone:
            self._left(uid, data, changed)
            seen.pop(uid, None)
            self.running.discard(uid)
            pod_gone(self.door, uid)
        else:
            node, before = _node(data), seen.get(uid, "")
            seen[uid] = node
            phase = (data.get("status") or {}).get("phase")
            if node and not before and phase in (None, "Pending"):
                try:
                    pod_bound(self.door, data, WATCH_ASSUME_S)
                except Exception as exc:  # an unreadable pod: the scheduler reports it already
                    log.warning("pod %s/%s not counted: %s", _ns(data), name_of(data), exc)
            if node and phase == "Running" and uid not in self.running:
                self.running.add(uid)
                pod_admitted(self.door, uid)
        settle(self.door.store, self.pods, changed)  # an object kept unmatched there
        return len(seen)

    def _left(self, uid: str, data: Mapping[str, Any], nodes: set[str]) -> None:
        """The pod left `nodes` (where the pod watch knew it; read before its assumption, if
        any, is dropped): kept until an object there shows it gone."""
        for node in nodes:
            try:
                self.departures.left(node, uid, data)
            except Exception as exc:  # the database away: the next object tells anyway
                log.warning(
                    "pod %s/%s leaving %s not kept: %s", _ns(data), name_of(data), node, exc
                )

    def node_gone(self, node: str) -> None:
        self.departures.node_gone(node)


def _uid(data: Mapping[str, Any]) -> str:
    return str((data.get("metadata") or {}).get("uid") or f"{_ns(data)}/{name_of(data)}")


def _ns(data: Mapping[str, Any]) -> str:
    return str((data.get("metadata") or {}).get("namespace") or "")


def name_of(data: Mapping[str, Any]) -> str:
    return str((data.get("metadata") or {}).get("name") or "")


def _node(data: Mapping[str, Any]) -> str:
    return str((data.get("spec") or {}).get("nodeName") or "")


def _finished(data: Mapping[str, Any]) -> bool:
    return (data.get("status") or {}).get("phase") in FINISHED
