"""The Kubernetes door's assumed pods as stored: their tables, a pod read back, and the numbering
of their writes (`assumed.py` writes them, `assumed_cache.py` keeps them parsed per worker).

Every write of the assumed pods takes the door's one-row lock first (`bump`), which numbers it
(`k8s_lock.seq`): what it writes is stamped with that number, and each pod it forgets leaves a row
in `k8s_assumed_gone` at that number (`forget`). The writes take the lock one after the other and
hold it until they commit, so the numbers commit in order: a reader that saw number n has every
write numbered n or lower, and learns what changed since from the rows stamped above n.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, delete, insert, select, update

from .records import as_utc
from .tables import K8sAssumedGoneRow, K8sAssumedPodRow, K8sLockRow, K8sNodeViewRow

ASSUMED = cast(Table, K8sAssumedPodRow.__table__)
VIEWS = cast(Table, K8sNodeViewRow.__table__)
LOCK = cast(Table, K8sLockRow.__table__)
GONE = cast(Table, K8sAssumedGoneRow.__table__)
Counts = dict[str, dict[int, int]]
"""Resource -> NUMA node -> amount (CPUs, bytes, devices)."""
Reading = tuple[int, bool]
"""A node's view as `AssumedPod.ended` reads it: the generation its counts were last reconciled
at, and whether that object's pod fingerprint told which pods it shows."""
ACCOUNTED_KEPT_S = 60.0
"""How long an accounted pod stays known: a pod watch that far behind the NRT watch would assume
it again."""
GONE_KEPT = 8192
"""How many writes back the rows of `k8s_assumed_gone` are kept (pruned every `GONE_PRUNED`
writes): a worker whose parsed copy is further behind reads every pod again."""
GONE_PRUNED = 1024


def _counts(data: Mapping[str, Any]) -> Counts:
    """Counts read back from JSON, whose keys are strings."""
    return {str(r): {int(n): int(v) for n, v in per.items()} for r, per in data.items()}


def totals(counts: Mapping[str, Mapping[int, int]]) -> dict[str, int]:
    """Resource -> amount over the node's NUMA nodes."""
    return {r: sum(per.values()) for r, per in counts.items()}


@dataclass(frozen=True)
class AssumedPod:
    """A pod bound to `node` that the node's NodeResourceTopology does not show yet, and what it
    takes there per NUMA node."""

    uid: str
    pod: str
    node: str
    consumption: Counts
    created_at: datetime
    expires_at: datetime
    generation: int | None = None  # the node's generation it was decided on
    running_until: datetime | None = None  # seen running: ends then, once its node moved on
    accounted_at: datetime | None = None  # its node's counts show it: it counts no more

    @property
    def counts(self) -> bool:
        """Still taken from its node's counts (not accounted for by them yet)."""
        return self.accounted_at is None

    def ended(self, now: datetime, views: Mapping[str, Reading]) -> bool:
        """Expired, accounted for `ACCOUNTED_KEPT_S` ago, or seen running long enough with its
        node's counts reconciled at a newer generation than it was decided on (`views`), where
        that object did not tell which pods it shows.

        Where it did (its pod fingerprint matched the pods known there: `fingerprint.py`), only
        an object that shows the pod ends it: a newer object alone may have been read by the
        exporter before the kubelet admitted the pod, and the one that shows it may come late;
        counted nowhere meanwhile, the pod's NUMA node would be offered again."""
        if self.expires_at <= now:
            return True
        if self.accounted_at is not None:
            return self.accounted_at + timedelta(seconds=ACCOUNTED_KEPT_S) <= now
        if self.running_until is None or self.running_until > now:
            return False
        view = views.get(self.node)
        if view is None:
            return True
        return view[0] > (self.generation or 0) and not view[1]

    def as_json(self) -> dict[str, Any]:
        running = self.running_until
        return {
            "uid": self.uid,
            "pod": self.pod,
            "node": self.node,
            "takes": {
                r: {str(n): a for n, a in per.items()} for r, per in self.consumption.items()
            },
            "created_at": self.created_at.isoformat(),
            "expires_at": self.expires_at.isoformat(),
            "running_until": running.isoformat() if running is not None else None,
        }


Match = Callable[[str, list[AssumedPod]], list[str] | None]
"""Which of a node's assumed pods (oldest first) an object with the pod fingerprint given shows,
by their UIDs, when a set of the pods known there matches it; None when none does."""


Place = Callable[[list[AssumedPod]], dict[str, Counts]]
"""Where the kubelet will put a node's assumed pods that its new object does not show (oldest
first) on that object's counts: the new counts of those whose NUMA nodes move, by UID."""


@dataclass(frozen=True)
class Shows:
    """A new object's pod fingerprint and how to match it (`reconcile`, `rematch`), and where the
    pods it does not show will go on its counts (`place`, when known)."""

    signed: str
    match: Match
    place: Place | None = None

    def __call__(self, assumed: list[AssumedPod]) -> list[str] | None:
        return self.match(self.signed, assumed)


def readings(
    conn: Any, nodes: Collection[str] | None = None, above: int | None = None
) -> dict[str, Reading]:
    """The nodes' views as `AssumedPod.ended` reads them (of `nodes`, or stamped above `above`,
    when given)."""
    query = select(VIEWS.c.node, VIEWS.c.generation, VIEWS.c.signed)
    if nodes is not None:
        query = query.where(VIEWS.c.node.in_(list(nodes)))
    if above is not None:
        query = query.where(VIEWS.c.change_seq > above)
    return {str(node): (int(g), bool(signed)) for node, g, signed in conn.execute(query)}


def bump(conn: Any) -> int:
    """Take the door's lock for this transaction and number its write (the module docstring);
    every `GONE_PRUNED` writes, prune the pods forgotten more than `GONE_KEPT` writes back."""
    conn.execute(update(LOCK).where(LOCK.c.id == 1).values(seq=LOCK.c.seq + 1))
    seq = int(conn.execute(select(LOCK.c.seq).where(LOCK.c.id == 1)).scalar_one())
    if seq % GONE_PRUNED == 0 and seq > GONE_KEPT:
        conn.execute(delete(GONE).where(GONE.c.change_seq <= seq - GONE_KEPT))
        conn.execute(update(LOCK).where(LOCK.c.id == 1).values(gone_below=seq - GONE_KEPT))
    return seq


def forget(conn: Any, uids: Collection[str], seq: int) -> None:
    """Delete the pods `uids`, leaving each a row in `k8s_assumed_gone` at `seq`."""
    gone = sorted(set(uids))
    if not gone:
        return
    conn.execute(delete(ASSUMED).where(ASSUMED.c.uid.in_(gone)))
    conn.execute(insert(GONE), [{"change_seq": seq, "uid": u} for u in gone])


def row_of(pod: AssumedPod) -> dict[str, Any]:
    return {
        "uid": pod.uid,
        "pod": pod.pod,
        "nodes": {pod.node: {r: dict(per) for r, per in pod.consumption.items()}},
        "node": pod.node,
        "created_at": pod.created_at,
        "expires_at": pod.expires_at,
        "assumed_generation": pod.generation,
    }


def pod_of(r: Mapping[str, Any]) -> AssumedPod:
    ((node, counts),) = r["nodes"].items()
    running, accounted = r["running_until"], r["accounted_at"]
    return AssumedPod(
        r["uid"],
        r["pod"],
        node,
        _counts(counts),
        as_utc(r["created_at"]),
        as_utc(r["expires_at"]),
        r["assumed_generation"],
        as_utc(running) if running is not None else None,
        as_utc(accounted) if accounted is not None else None,
    )
