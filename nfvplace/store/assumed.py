"""The Kubernetes extender's assumed pods, shared by every worker and replica through the database.

The scheduler calls an extender's filter without telling it the node it then picks, and the nodes'
NodeResourceTopology objects show a pod only some seconds after its kubelet admitted it. So the
extender keeps, per pod UID, what the pod would take on each node it admitted it on, and counts
that in its next answers, until the pod shows in the node's NodeResourceTopology, the pod is gone
(`drop`), or the assumption expires.

`decide` runs one filter call as one transaction that first updates the one-row `k8s_lock`: the
decisions of every worker and replica are taken one after the other, each on the assumptions every
earlier one recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Engine, Table, delete, insert, select, update

from .tables import K8sAssumedPodRow, K8sLockRow, K8sNodeViewRow

ASSUMED = cast(Table, K8sAssumedPodRow.__table__)
VIEWS = cast(Table, K8sNodeViewRow.__table__)
LOCK = cast(Table, K8sLockRow.__table__)

Counts = dict[str, dict[int, int]]
"""Resource -> NUMA node -> amount (CPUs, bytes, devices)."""


def _counts(data: Mapping[str, Any]) -> Counts:
    """Counts read back from JSON, whose keys are strings."""
    return {str(r): {int(n): int(v) for n, v in per.items()} for r, per in data.items()}


@dataclass(frozen=True)
class AssumedPod:
    """A pod the extender admitted: what it would take on each node it was admitted on."""

    uid: str
    pod: str
    nodes: Mapping[str, Counts]
    created_at: datetime
    expires_at: datetime

    def as_json(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "pod": self.pod,
            "nodes": {
                node: {r: {str(n): a for n, a in per.items()} for r, per in counts.items()}
                for node, counts in self.nodes.items()
            },
            "created_at": self.created_at.isoformat(),
            "expires_at": self.expires_at.isoformat(),
        }


@dataclass(frozen=True)
class SeenNode:
    """A node as the extender last saw it: its host generation and free counts."""

    generation: int
    free: Counts


@dataclass(frozen=True)
class Outcome[T]:
    """What one filter decision writes: the views seen, the pods now shown, the pod assumed."""

    answer: T
    views: Mapping[str, SeenNode] = field(default_factory=dict)
    shown: Collection[str] = ()
    assume: AssumedPod | None = None


class AssumedPods:
    """Repository of the assumed pods, over the store's engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def decide[T](
        self,
        uid: str,
        nodes: Collection[str],
        now: datetime,
        compute: Callable[[list[AssumedPod], dict[str, SeenNode]], Outcome[T]],
    ) -> T:
        """One filter decision: under the lock, `compute` gets the live assumed pods (but the
        pod `uid`'s own, which its new answer replaces) and the views of `nodes`; what it returns
        is written before the lock is released."""
        with self.engine.begin() as conn:
            conn.execute(update(LOCK).where(LOCK.c.id == 1).values(seq=LOCK.c.seq + 1))
            conn.execute(delete(ASSUMED).where(ASSUMED.c.expires_at <= now))
            pods = [p for p in self._live(conn) if p.uid != uid]
            rows = conn.execute(select(VIEWS).where(VIEWS.c.node.in_(sorted(nodes)))).mappings()
            views = {r["node"]: SeenNode(int(r["generation"]), _counts(r["free"])) for r in rows}
            outcome = compute(pods, views)
            for node, view in outcome.views.items():
                values = {"generation": view.generation, "free": view.free}
                if node in views:
                    conn.execute(update(VIEWS).where(VIEWS.c.node == node).values(**values))
                else:
                    conn.execute(insert(VIEWS).values(node=node, **values))
            drop = {*outcome.shown, uid}
            conn.execute(delete(ASSUMED).where(ASSUMED.c.uid.in_(sorted(drop))))
            if outcome.assume is not None:
                conn.execute(insert(ASSUMED).values(**vars(outcome.assume)))
        return outcome.answer

    def _live(self, conn: Any) -> list[AssumedPod]:
        rows = conn.execute(select(ASSUMED).order_by(ASSUMED.c.created_at, ASSUMED.c.uid))
        return [
            AssumedPod(
                r["uid"],
                r["pod"],
                {node: _counts(c) for node, c in r["nodes"].items()},
                _aware(r["created_at"]),
                _aware(r["expires_at"]),
            )
            for r in rows.mappings()
        ]

    def live(self, now: datetime) -> list[AssumedPod]:
        """The assumed pods that have not expired, oldest first (no lock: for reading)."""
        with self.engine.connect() as conn:
            return [p for p in self._live(conn) if p.expires_at > now]

    def drop(self, uid: str) -> bool:
        """Forget a pod's assumption (the pod is gone); False when there was none."""
        with self.engine.begin() as conn:
            return bool(conn.execute(delete(ASSUMED).where(ASSUMED.c.uid == uid)).rowcount)


def _aware(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes: they were written in UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
