"""The pods the pod watch knows on each node, for matching an exporter's pod fingerprint.

The pod watch (`service/k8s_cluster.py`) tells this what it sees: a pod bound to a node, a pod
seen running there (its kubelet admitted it), a pod gone (deleted or finished). A node's
NodeResourceTopology that carries a fingerprint (`fingerprint.py`) is then matched against what
its counts can have been read with: the pods seen running there, some of those bound there and
not yet seen running, and some of those seen leaving it since the last object that matched
(the exporter may have read its counts before the kubelet released them). Once an object
matches, the departures it no longer shows are forgotten.

An object read before the pod watch saw what its counts were read with (a pod that left, or
arrived) matches no set: the store keeps it with the node's baseline (`AssumedPods.reconcile`),
and each change the pod watch records on that node matches it again (`settle`), so the late pod
event resolves it. The NRT watch settles its node too once it has stored the object: a change the
pod watch recorded while the object was being matched is not missed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...store import Store
from ...store.assumed import AssumedPod, AssumedPods, Match, Shows
from ...store.records import utc_now
from . import fingerprint
from .again import placed_again
from .departed import Departures

log = logging.getLogger("nfvplace.kubernetes")

DEPARTED_KEPT = 16
"""How many departures a node keeps until an object shows them (the oldest go first)."""
DEPARTED_KEPT_S = 600.0
"""How long a departure is kept when no object matches meanwhile."""


@dataclass
class _Node:
    running: dict[str, str] = field(default_factory=dict)  # uid -> namespace/name
    bound: dict[str, str] = field(default_factory=dict)  # not seen running yet, in bind order
    departed: dict[str, tuple[str, float]] = field(default_factory=dict)  # uid -> (name, when)


@dataclass(frozen=True)
class Known:
    """What the pod watch knows on one node when an object comes (`fingerprint.shown`)."""

    certain: frozenset[str]
    arrivals: tuple[str, ...]
    departures: tuple[str, ...]

    def shown(self, signed: str, assumed: Sequence[str]) -> frozenset[str] | None:
        """The pods `signed` shows, when a set matches; `assumed` (the pods assumed on the node,
        oldest first) are arrivals too, first, whatever the watch saw of them."""
        first = set(assumed)
        arrivals = [*assumed, *(p for p in self.arrivals if p not in first)]
        return fingerprint.shown(signed, self.certain, arrivals, self.departures)


class NodePods:
    """Each node's pods as the pod watch saw them (thread-safe: the pod watch writes, the NRT
    watch reads)."""

    def __init__(self, departures: Departures | None = None) -> None:
        self.departures = departures  # told what each matched object shows
        self._nodes: dict[str, _Node] = {}
        self._where: dict[str, str] = {}  # uid -> node
        self._lock = threading.Lock()

    def seen(self, uid: str, name: str, node: str, running: bool) -> set[str]:
        """The pod `uid` (`namespace/name`) is bound to `node` (running there or not); the nodes
        where that changed what is known."""
        with self._lock:
            changed: set[str] = set()
            before = self._where.get(uid)
            if before is not None and before != node and self._leave(uid, time.monotonic()):
                changed.add(before)
            self._where[uid] = node
            known = self._nodes.setdefault(node, _Node())
            if running and uid not in known.running:
                known.bound.pop(uid, None)
                known.running[uid] = name
                changed.add(node)
            elif not running and uid not in known.running and uid not in known.bound:
                known.bound[uid] = name
                changed.add(node)
            return changed

    def saw(self, uid: str, data: Mapping[str, Any], gone: bool = False) -> set[str]:
        """What the pod watch saw of the pod `uid` (its JSON): bound, running, or `gone`; the
        nodes where that changed what is known."""
        meta, node = data.get("metadata") or {}, (data.get("spec") or {}).get("nodeName")
        if gone:
            return self.gone(uid)
        if not node:
            return set()
        running = (data.get("status") or {}).get("phase") == "Running"
        name = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        return self.seen(uid, name, node, running)

    def gone(self, uid: str) -> set[str]:
        """The pod was deleted or finished: a departure from its node (returned, if known)."""
        with self._lock:
            node = self._where.get(uid)
            return {node} if node is not None and self._leave(uid, time.monotonic()) else set()

    def _leave(self, uid: str, now: float) -> bool:
        """The pod left its node: True when it was known there."""
        node = self._where.pop(uid, None)
        known = self._nodes.get(node or "")
        if known is None:
            return False
        name = known.running.pop(uid, None) or known.bound.pop(uid, None)
        if name is not None:
            known.departed[uid] = (name, now)
        while len(known.departed) > DEPARTED_KEPT:
            known.departed.pop(next(iter(known.departed)))
        return name is not None

    def listed(self, uids: set[str]) -> None:
        """The pod watch listed again: the pods it no longer lists left while it was away."""
        with self._lock:
            now = time.monotonic()
            for uid in [u for u in self._where if u not in uids]:
                self._leave(uid, now)

    def known(self, node: str) -> Known:
        with self._lock:
            known = self._nodes.get(node) or _Node()
            limit = time.monotonic() - DEPARTED_KEPT_S
            for uid in [u for u, (_, when) in known.departed.items() if when < limit]:
                del known.departed[uid]
            return Known(
                frozenset(known.running.values()),
                tuple(known.bound.values()),
                tuple(name for name, _ in known.departed.values()),
            )

    def matched(self, node: str, pods: frozenset[str]) -> None:
        """An object of `node` showed exactly `pods`: the departures it does not show are over."""
        with self._lock:
            known = self._nodes.get(node)
            if known is not None:
                for uid in [u for u, (name, _) in known.departed.items() if name not in pods]:
                    del known.departed[uid]
        if self.departures is not None:
            self.departures.shown(node, pods)


def matcher(pods: NodePods, node: str) -> Match:
    """Which assumed pods an object of `node` with a given fingerprint shows, as
    `AssumedPods.reconcile` and `rematch` ask, from what the pod watch knows there when asked:
    None when no set of the pods known there matches it."""

    def named(signed: str, assumed: list[AssumedPod]) -> list[str] | None:
        known = pods.known(node)
        if not assumed and not known.departures:
            return []  # nothing to tell, nothing to learn
        found = known.shown(signed, [p.pod for p in assumed])
        log.debug(
            "node %s fingerprint %s: %s", node, signed, "no match" if found is None else "matched"
        )
        if found is None:
            return None
        pods.matched(node, found)
        return [p.uid for p in assumed if p.pod in found]

    return named


def shows(pods: NodePods | None, node: str, nrt: Mapping[str, Any]) -> Shows | None:
    """The pod fingerprint of the object `nrt` of `node` and its matcher (`matcher`), for
    `AssumedPods.reconcile`: None when it carries no fingerprint nfvplace reads (or no pod watch
    runs)."""
    signed = fingerprint.read(nrt)
    if pods is None or signed is None:
        return None
    return Shows(signed, matcher(pods, node))


def settle(store: Store, pods: NodePods, nodes: Collection[str] | None) -> list[str]:
    """The pod watch recorded a change on `nodes` (None: it listed again): the objects kept there
    because they matched no pod set are matched again (`AssumedPods.rematch`), the pods one that
    matches does not show placed again on its counts (`placed_again`); the UIDs of the assumed
    pods they now show."""
    if nodes is not None and not nodes:
        if pods.departures is not None:
            pods.departures.flush()
        return []
    assumed, shown = AssumedPods(store.engine), []
    for node in assumed.unmatched(nodes):
        again = placed_again(store, node)
        found = assumed.rematch(node, utc_now(), matcher(pods, node), again)
        log.debug("node %s: kept object matched again: %s", node, found)
        shown += found or []
    if pods.departures is not None:
        pods.departures.flush()  # the departures the objects matched show gone
    return shown
