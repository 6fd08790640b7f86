"""The Kubernetes door's assumed pods, shared by every worker and replica through the database.

A pod is assumed on the ONE node it is bound to (by nfvplace's bind verb, or seen bound by the pod
watch) from the moment it is bound until that node's NodeResourceTopology accounts for it, the pod
is gone or finished, or the assumption expires. Filter and prioritize only read them.

Which assumed pods a node's new NodeResourceTopology accounts for is read from its pod fingerprint
where the exporter publishes one that matches the pods known there (`reconcile`'s `shows`: the
pods it names are accounted, no other, and no timer ends a pod on that node); otherwise from the
node's totals, not from a predicted NUMA node (the kubelet may align a pod elsewhere than predicted): each node
keeps a baseline, its free counts from before the oldest pod still assumed there. When the object
changes, its free totals fell below the baseline by some amount; the oldest assumed pods whose
totals fit within that fall are accounted, in order, and the baseline moves past them. A pod
leaving the node raises the free counts: the baseline is raised with them, so that a departure is
never taken for nothing arriving. A pod leaving as another arrives leaves the totals unchanged, so
the pod watch ends the arrival's assumption too: once the kubelet has admitted it (the pod runs),
the exporter shows it within its interval (`admitted`), so on a node whose last object was not
signed the assumption ends once that interval has passed and the node's counts were reconciled at
a newer generation than the one the pod was decided on (counts read late would otherwise count the
pod nowhere for a while; counts read before the kubelet admitted it and written late still do,
which only the fingerprint tells).

A pod the node's counts account for counts no more, but its row stays (`accounted_at`) for
`ACCOUNTED_KEPT_S` (or until it expires, if sooner): the pod watch may see a pod nfvplace's bind
bound only after the node's next object accounted for it (a watch behind, or listing again), and
must not assume it again. Filter and prioritize do not read those rows.

Writes (`assume`, `reconcile`, `admitted`, `drop`, `drop_node`) run as one transaction that first
updates the one-row `k8s_lock`: every worker's and replica's binds are decided one after the other,
each on what the earlier ones assumed. The update numbers the write (`k8s_lock.seq`), which stamps
what it wrote, and leaves a row in `k8s_assumed_gone` for each pod it forgot: filter and prioritize
read the pods through each worker's parsed copy (`assumed_cache.py`), which reads only what those
numbers say changed. A bind's Binding is created after its decision is committed, under its
node's own lock (`node_locks`), so that a node's Bindings land in the order they were decided
without one API call holding up the binds to every other node.
"""

from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, delete, insert, null, select, update

from .assumed_cache import kept
from .assumed_rows import (
    ACCOUNTED_KEPT_S,
    ASSUMED,
    GONE,
    LOCK,
    VIEWS,
    AssumedPod,
    Counts,
    Match,
    Place,
    Shows,
    bump,
    forget,
    pod_of,
    readings,
    row_of,
    totals,
)
from .node_locks import node_lock

__all__ = ["ACCOUNTED_KEPT_S", "ASSUMED", "LOCK", "AssumedPod", "AssumedPods", "Counts", "Match"]
__all__ += ["Shows", "totals"]

NODES_NAMED = 500
"""Up to this many nodes, a read of their pods names them to the database; beyond, it reads every
pod (a filter call over the whole cluster)."""
Baseline = tuple[int, Mapping[str, int]]
"""A node's generation and its free totals (resource -> amount over its NUMA nodes)."""


def accounted(
    baseline: Mapping[str, int], free: Mapping[str, int], pending: list[AssumedPod]
) -> tuple[list[str], dict[str, int]]:
    """Which of `pending` (oldest first) a node's free totals `free` account for, and the node's
    baseline after them (module docstring). Totals: resource -> amount over the node."""
    fall = {r: total - free.get(r, 0) for r, total in baseline.items()}
    shown: list[str] = []
    need: dict[str, int] = {}
    for pod in pending:
        for resource, amount in totals(pod.consumption).items():
            need[resource] = need.get(resource, 0) + amount
        if any(amount > fall.get(r, 0) for r, amount in need.items()):
            break
        shown.append(pod.uid)
    taken = totals_of(p.consumption for p in pending if p.uid in shown)
    moved = {r: total - taken.get(r, 0) for r, total in baseline.items()}
    for resource, amount in free.items():  # a pod that left raised the free counts
        moved[resource] = max(moved.get(resource, amount), amount)
    return shown, moved


def totals_of(consumptions: Iterable[Mapping[str, Mapping[int, int]]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for consumption in consumptions:
        for resource, amount in totals(consumption).items():
            out[resource] = out.get(resource, 0) + amount
    return out


def _totals_read(data: Mapping[str, Any]) -> dict[str, int]:
    """A baseline read back (resource -> total; per NUMA node in databases written before)."""
    return {
        str(r): int(sum(v.values())) if isinstance(v, Mapping) else int(v) for r, v in data.items()
    }


class AssumedPods:
    """Repository of the assumed pods, over the store's engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _locked(self, conn: Any, now: datetime, node: str) -> tuple[list[AssumedPod], int]:
        """Take the lock and forget `node`'s pods that have ended (and any pod that expired);
        its others (accounted for or not), oldest first, and the write's change number."""
        seq = bump(conn)
        known, ended = self._known(conn, now, nodes=(node,))
        expired = select(ASSUMED.c.uid).where(ASSUMED.c.expires_at <= now)
        forget(conn, [*ended, *(str(u) for u in conn.execute(expired).scalars())], seq)
        return known, seq

    def _known(
        self,
        conn: Any,
        now: datetime,
        counting: bool = False,
        nodes: Collection[str] | None = None,
        uid: str | None = None,
    ) -> tuple[list[AssumedPod], list[str]]:
        """The stored pods that have not ended (`AssumedPod.ended`; accounted for or not, or
        only those that still count; on `nodes`, or the pod `uid`, when given), oldest first,
        and the UIDs of those that have ended (their nodes' views read once)."""
        pods = self._rows(conn, counting, nodes, uid)
        due = {p.node for p in pods if p.running_until is not None and p.running_until <= now}
        views = readings(conn, nodes=due) if due else {}
        ended = [p.uid for p in pods if p.ended(now, views)]
        gone = set(ended)
        return [p for p in pods if p.uid not in gone], ended

    def assume[T](
        self,
        node: str,
        now: datetime,
        decide: Callable[[list[AssumedPod], Connection], tuple[T, AssumedPod | None, Baseline]],
        land: Callable[[T], None] | None = None,
    ) -> T:
        """Under the lock: `decide` gets the pods known on `node` (oldest first: those assumed,
        and those its counts accounted for, `AssumedPod.counts`), and the connection to read
        through (the transaction's: a second connection per bind could leave the pool's
        connections all held by binds waiting for one more), and answers, with the pod to
        assume there or None, and the node's generation and free totals it decided on. When the
        pod is the node's first assumed, those become the node's baseline. When `decide` raises,
        nothing is written.

        `decide` reads the node under the lock: a NodeResourceTopology reconciled between a read
        before it and the lock would have dropped pods that the older counts do not show.

        `land` (the pod's Binding) gets the answer once it is committed, still under `node`'s own
        lock (`node_locks`), taken before the decision: the Bindings to one node land in the
        order they were decided, while binds to other nodes decide meanwhile. When `land`
        raises, the pod assumed is forgotten again."""
        with node_lock(self.engine, node) as conn:
            with conn.begin():
                known, seq = self._locked(conn, now, node)
                answer, pod, baseline = decide(known, conn)
                if pod is not None:
                    conn.execute(delete(ASSUMED).where(ASSUMED.c.uid == pod.uid))
                    conn.execute(insert(ASSUMED).values(**row_of(pod), change_seq=seq))
                    if not any(p.counts for p in known):
                        self._set_view(conn, node, *baseline, seq)
            if land is not None:
                try:
                    land(answer)
                except BaseException:
                    if pod is not None:
                        with conn.begin():
                            forget(conn, [pod.uid], bump(conn))
                    raise
        return answer

    def reconcile(
        self,
        node: str,
        generation: int,
        free: Mapping[str, int],
        now: datetime,
        shows: Shows | None = None,
    ) -> list[str]:
        """The node's NodeResourceTopology changed (its generation, its free totals): drop the
        assumed pods it accounts for; returns their UIDs. `shows` (an object with a pod
        fingerprint) names the pods it shows among those assumed there, oldest first (None when
        it cannot tell): those are accounted, and the node's baseline is its free totals; else
        the totals tell (`accounted`), and the object's fingerprint and free totals are kept with
        the node's baseline when no set matched (`rematch` tries again). Nothing is written when
        no pod is assumed there (the node's baseline is written when its first pod is assumed)."""
        with self.engine.connect() as conn:
            if not self._rows(conn, counting=True, nodes=(node,)):
                if shows is not None:
                    shows([])  # its matcher learns which departures the object shows over
                return []
        with self.engine.begin() as conn:
            known, seq = self._locked(conn, now, node)
            pending = [p for p in known if p.counts]
            if not pending:
                self._set_view(conn, node, generation, free, seq)
                return []
            row = conn.execute(select(VIEWS).where(VIEWS.c.node == node)).mappings().first()
            if row is not None and int(row["generation"]) >= generation:
                return []  # seen already (another worker or replica got there first)
            signed, place = (shows(pending), shows.place) if shows is not None else (None, None)
            if signed is not None:
                shown, after = signed, dict(free)
                _placed(conn, node, place, [p for p in pending if p.uid not in shown], seq)
            else:
                baseline = _totals_read(row["free"]) if row is not None else dict(free)
                shown, moved = accounted(baseline, free, pending)
                after = dict(free) if len(shown) == len(pending) else moved
            _accounted(conn, shown, now, seq)
            kept = None
            if shows is not None and signed is None:
                kept = {"print": shows.signed, "free": dict(free)}
            self._set_view(conn, node, generation, after, seq, signed is not None, kept)
            return shown

    def unmatched(self, nodes: Collection[str] | None = None) -> list[str]:
        """The nodes (of `nodes`, when given) whose last object matched no pod set (`reconcile`)."""
        query = select(VIEWS.c.node).where(VIEWS.c.unmatched.is_not(None))
        if nodes is not None:
            query = query.where(VIEWS.c.node.in_(list(nodes)))
        with self.engine.connect() as conn:
            return [str(n) for n in conn.execute(query).scalars()]

    def rematch(
        self, node: str, now: datetime, match: Match, again: tuple[int, Place] | None = None
    ) -> list[str] | None:
        """The pod watch saw more on `node`, one of the nodes `unmatched` listed: its last object,
        kept when it matched no pod set (`reconcile`), is matched again (`match`, with what the
        watch knows now). When a set matches, the assumed pods it shows are accounted, those it
        does not show are placed again (`again`: the generation of the object it places on, and
        how; not when another object is stored now), the node's baseline becomes that object's
        free totals and the node is signed, as if it had matched when read; returns their UIDs.
        None when it still does not match, or no object is kept (a newer one came since
        `unmatched` listed it)."""
        with self.engine.begin() as conn:
            known, seq = self._locked(conn, now, node)
            query = select(VIEWS.c.generation, VIEWS.c.unmatched).where(VIEWS.c.node == node)
            row = conn.execute(query).first()
            if row is None or not isinstance(row.unmatched, Mapping):
                return None
            pending = [p for p in known if p.counts]
            shown = match(str(row.unmatched["print"]), pending)
            if shown is None:
                return None
            if again is not None and again[0] == int(row.generation):
                _placed(conn, node, again[1], [p for p in pending if p.uid not in shown], seq)
            _accounted(conn, shown, now, seq)
            free = _totals_read(row.unmatched["free"])
            self._set_view(conn, node, int(row.generation), free, seq, signed=True)
            return shown

    def _set_view(
        self,
        conn: Any,
        node: str,
        generation: int,
        free: Mapping[str, int],
        seq: int,
        signed: bool = False,
        unmatched: Mapping[str, Any] | None = None,
    ) -> None:
        values = {"generation": generation, "free": dict(free), "change_seq": seq, "signed": signed}
        values["unmatched"] = null() if unmatched is None else dict(unmatched)
        if conn.execute(update(VIEWS).where(VIEWS.c.node == node).values(**values)).rowcount:
            return
        conn.execute(insert(VIEWS).values(node=node, **values))

    def _rows(
        self,
        conn: Any,
        counting: bool = False,
        nodes: Collection[str] | None = None,
        uid: str | None = None,
    ) -> list[AssumedPod]:
        """The assumed pods stored (only those that still count; on `nodes`, or the pod `uid`,
        when given), oldest first."""
        query = select(ASSUMED).order_by(ASSUMED.c.created_at, ASSUMED.c.uid)
        if counting:
            query = query.where(ASSUMED.c.accounted_at.is_(None))
        if uid is not None:
            query = query.where(ASSUMED.c.uid == uid)
        named = nodes is not None and len(nodes) <= NODES_NAMED
        if named:
            query = query.where(ASSUMED.c.node.in_(list(nodes or ())))
        pods = [pod_of(r) for r in conn.execute(query).mappings()]
        if nodes is not None and not named:
            pods = [p for p in pods if p.node in nodes]
        return pods

    def live(
        self, now: datetime, nodes: Collection[str] | None = None, uid: str | None = None
    ) -> list[AssumedPod]:
        """The assumed pods that have not ended and still count (on `nodes`, or the pod `uid`,
        when given), oldest first: read through this process's parsed copy, as the database
        has them now (`assumed_cache.py`); one pod by its `uid` is one indexed query (a bind's first
        check: in a burst the change number has moved at every bind)."""
        if uid is not None:
            with self.engine.connect() as conn:
                return self._known(conn, now, counting=True, nodes=nodes, uid=uid)[0]
        return kept(self.engine).live(now, nodes)

    def on_nodes(self, now: datetime, nodes: Collection[str]) -> dict[str, tuple[AssumedPod, ...]]:
        """`live` on `nodes`, by node (oldest first on each)."""
        return kept(self.engine).on_nodes(now, nodes)

    def released(self, uid: str, now: datetime, unbound: Callable[[], bool]) -> bool:
        """Forget the pod `uid` if it is assumed and `unbound` (the API server says so, read
        under its node's lock: no bind to that node is in flight, and a bind holds the lock from
        its decision until its Binding has landed, so the bind that assumed it created no
        Binding: its process died between the two). True when the pod is no longer assumed."""
        found = self.live(now, uid=uid)
        if not found:
            return True
        with node_lock(self.engine, found[0].node):
            if not unbound():
                return False
            self.drop(uid, counting=True)
        return True

    def admitted(self, uid: str, until: datetime) -> bool:
        """The pod's kubelet admitted it: its assumption ends at `until` at the earliest, once its
        node's counts are reconciled at a newer generation than it was decided on (when its
        node's NodeResourceTopology shows it, it ends then). False when it is not assumed, was
        seen running before, or expires sooner."""
        first = (
            ASSUMED.c.uid == uid,
            ASSUMED.c.running_until.is_(None),
            ASSUMED.c.accounted_at.is_(None),
            ASSUMED.c.expires_at > until,
        )
        if not _any(self.engine, *first):  # most pods the watch sees running were never assumed
            return False
        with self.engine.begin() as conn:
            ends = update(ASSUMED).where(*first).values(running_until=until)
            return bool(conn.execute(ends.values(change_seq=bump(conn))).rowcount)

    def drop(self, uid: str, counting: bool = False) -> bool:
        """Forget a pod (the pod is gone or finished; `counting`: only while it still counts, as
        `live` lists it); False when there was none."""
        which = [ASSUMED.c.uid == uid]
        if counting:
            which.append(ASSUMED.c.accounted_at.is_(None))
        if not _any(self.engine, *which):  # most pods the watch sees go were never assumed
            return False
        with self.engine.begin() as conn:
            seq = bump(conn)
            if not conn.execute(delete(ASSUMED).where(*which)).rowcount:
                return False
            conn.execute(insert(GONE).values(change_seq=seq, uid=uid))
            return True

    def drop_node(self, node: str) -> None:
        """Forget a node's assumed pods and baseline (its NodeResourceTopology was deleted). A
        worker may keep the node's baseline parsed: it is written again, stamped, before a pod
        is assumed there again."""
        with self.engine.begin() as conn:
            seq = bump(conn)
            uids = conn.execute(select(ASSUMED.c.uid).where(ASSUMED.c.node == node)).scalars()
            forget(conn, [str(u) for u in uids], seq)
            conn.execute(delete(VIEWS).where(VIEWS.c.node == node))


def _accounted(conn: Any, uids: list[str], now: datetime, seq: int) -> None:
    """Mark the pods `uids` accounted for by their node's counts (kept `ACCOUNTED_KEPT_S`)."""
    if uids:
        marked = update(ASSUMED).where(ASSUMED.c.uid.in_(uids))
        conn.execute(marked.values(accounted_at=now, change_seq=seq))


def _placed(conn: Any, node: str, place: Place | None, pending: list[AssumedPod], seq: int) -> None:
    """The pods a signed object does not show, placed again on its counts (`place`)."""
    if place is None or not pending:
        return
    for uid, counts in place(pending).items():
        nodes = {node: {r: dict(per) for r, per in counts.items()}}
        moved = update(ASSUMED).where(ASSUMED.c.uid == uid)
        conn.execute(moved.values(nodes=nodes, change_seq=seq))


def _any(engine: Engine, *which: Any) -> bool:
    """Whether a stored pod matches `which` (read before a write takes the lock for nothing)."""
    with engine.connect() as conn:
        return conn.execute(select(ASSUMED.c.uid).where(*which).limit(1)).first() is not None
