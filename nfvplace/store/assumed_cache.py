"""The assumed pods kept parsed in each worker process, for filter and prioritize.

Filter and prioritize ask for the pods assumed on hundreds or thousands of nodes at every call; in a
burst thousands of pods are assumed at once, and parsing them all again (their JSON, their
datetimes) cost about 18 µs a pod per call. Each process keeps them parsed, per engine, with the
change number it read them at (`assumed_rows.py`: every write of the assumed pods numbers itself
and stamps what it wrote):

- each read first reads the number (one small query): unchanged, nothing else is read;
- moved, it reads only the pods and node baselines stamped above the number it kept and the pods
  forgotten since (`k8s_assumed_gone`), and applies them;
- the first read, or one kept further behind than the forgotten pods are kept (`gone_below`),
  reads every pod still counted.

The number is read before what changed, so what is read is at least as new as the number kept:
a write committed after the number was read is read again at the next call, and applying it twice
changes nothing (a pod is replaced whole by its row as it is, the forgotten ones read first, the
rows after them). No write escapes the numbering, on any worker or replica: nothing parsed here is
older than the database was when the call began. Whether a pod has ended (`AssumedPod.ended`:
expired, or seen running long enough) depends on the clock, and is decided at each read on the
`now` it is given, as a read of the database did.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, select

from .assumed_rows import ASSUMED, GONE, LOCK, AssumedPod, Reading, pod_of, readings

ByNode = dict[str, tuple[AssumedPod, ...]]
"""Node -> its pods, oldest first."""


def _oldest_first(pod: AssumedPod) -> tuple[datetime, str]:
    return pod.created_at, pod.uid


class ParsedPods:
    """One database's pods still counted (not accounted for), parsed, at change number `seq`,
    and its nodes' views (`Reading`, for `AssumedPod.ended`)."""

    def __init__(self) -> None:
        self.seq: int | None = None
        self.pods: dict[str, AssumedPod] = {}
        self.by_node: ByNode = {}
        self.views: dict[str, Reading] = {}
        self.lock = threading.Lock()

    def refresh(self, engine: Engine) -> None:
        """Bring the pods up to the database's change number (the module docstring). Called with
        `lock` held."""
        with engine.connect() as conn:
            now_at = select(LOCK.c.seq, LOCK.c.gone_below).where(LOCK.c.id == 1)
            seq, below = conn.execute(now_at).one()
            if seq == self.seq:
                return
            if self.seq is None or self.seq < below or not self._since(conn, self.seq):
                self._everything(conn)
            self.seq = int(seq)

    def _everything(self, conn: Any) -> None:
        counting = select(ASSUMED).where(ASSUMED.c.accounted_at.is_(None))
        self.pods = {p.uid: p for p in map(pod_of, conn.execute(counting).mappings())}
        self.views = readings(conn)
        self.by_node = {}
        self._index({p.node for p in self.pods.values()})

    def _since(self, conn: Any, seq: int) -> bool:
        """Apply what changed after `seq`; False (nothing applied) when some pods forgotten since
        may have been pruned meanwhile."""
        gone = list(conn.execute(select(GONE.c.uid).where(GONE.c.change_seq > seq)).scalars())
        rows = list(conn.execute(select(ASSUMED).where(ASSUMED.c.change_seq > seq)).mappings())
        views = readings(conn, above=seq)
        below = conn.execute(select(LOCK.c.gone_below).where(LOCK.c.id == 1)).scalar_one()
        if seq < below:
            return False
        touched: set[str] = set()
        for uid in gone:
            old = self.pods.pop(str(uid), None)
            if old is not None:
                touched.add(old.node)
        for pod in map(pod_of, rows):
            old = self.pods.pop(pod.uid, None)
            if old is not None:
                touched.add(old.node)
            if pod.counts:
                self.pods[pod.uid] = pod
                touched.add(pod.node)
        self.views.update(views)
        self._index(touched)
        return True

    def _index(self, nodes: Iterable[str]) -> None:
        """Rebuild `by_node` for `nodes`."""
        wanted = set(nodes)
        on: dict[str, list[AssumedPod]] = {node: [] for node in wanted}
        if wanted:
            for pod in self.pods.values():
                if pod.node in wanted:
                    on[pod.node].append(pod)
        for node, pods in on.items():
            if pods:
                self.by_node[node] = tuple(sorted(pods, key=_oldest_first))
            else:
                self.by_node.pop(node, None)

    def on_nodes(self, now: datetime, nodes: Collection[str] | None) -> ByNode:
        """The pods that have not ended on `nodes` (every node when None), by node. Called with
        `lock` held."""
        if nodes is None:
            pairs: Iterable[tuple[str, tuple[AssumedPod, ...]]] = self.by_node.items()
        elif len(nodes) <= len(self.by_node):
            pairs = ((n, self.by_node[n]) for n in nodes if n in self.by_node)
        else:
            pairs = ((n, pods) for n, pods in self.by_node.items() if n in nodes)
        out: ByNode = {}
        for node, pods in pairs:
            live = tuple(p for p in pods if not p.ended(now, self.views))
            if live:
                out[node] = live
        return out


_KEPT: weakref.WeakKeyDictionary[Engine, ParsedPods] = weakref.WeakKeyDictionary()
_KEPT_LOCK = threading.Lock()


@dataclass(frozen=True)
class Reader:
    """The assumed pods of `engine`'s database, through this process's parsed copy."""

    engine: Engine
    kept: ParsedPods

    def on_nodes(self, now: datetime, nodes: Collection[str]) -> ByNode:
        wanted = nodes if isinstance(nodes, set | frozenset | dict) else set(nodes)
        with self.kept.lock:
            self.kept.refresh(self.engine)
            return self.kept.on_nodes(now, wanted)

    def live(self, now: datetime, nodes: Collection[str] | None = None) -> list[AssumedPod]:
        """As `AssumedPods.live`: oldest first."""
        wanted = None if nodes is None else set(nodes)
        with self.kept.lock:
            self.kept.refresh(self.engine)
            by_node = self.kept.on_nodes(now, wanted)
        return sorted((p for pods in by_node.values() for p in pods), key=_oldest_first)


def kept(engine: Engine) -> Reader:
    """The reader of `engine`'s assumed pods (one parsed copy per engine and process)."""
    with _KEPT_LOCK:
        copy = _KEPT.get(engine)
        if copy is None:
            copy = _KEPT[engine] = ParsedPods()
    return Reader(engine, copy)
