"""The pods the Kubernetes door's pod watch saw leave a node that no NodeResourceTopology of the
node has shown gone yet (`k8s_departed_pods`, migration 0018), shared by every worker and replica
through the database: the pod watch runs in one worker, filter is answered by all of them.

The pod watch records a departure (`left`); an object of the node that shows it gone ends it
(`shown`: its pod fingerprint matched a set without it; `clear`: an object without one, read
after it was recorded); a departure older than the reader's bound counts no more (`on_nodes`'
`since`) and is pruned at the next write. Filter reads them only when no node takes a pod.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Engine, Table, delete, insert, select

from .records import as_utc
from .tables import K8sDepartedRow

DEPARTED = cast(Table, K8sDepartedRow.__table__)
PRUNED_S = 3600.0
"""A departure no object showed in this long is deleted at the next write."""
NODES_NAMED = 500
"""Up to this many nodes, a read names them to the database; beyond, it reads every row."""


@dataclass(frozen=True)
class DepartedPod:
    """A pod that left `node` at `left_at`, and what it took there (resource -> amount over the
    node's NUMA nodes: on which NUMA node is not known)."""

    uid: str
    node: str
    pod: str
    takes: Mapping[str, int]
    left_at: datetime

    def as_json(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "pod": self.pod,
            "node": self.node,
            "takes": dict(self.takes),
            "left_at": self.left_at.isoformat(),
        }


class DepartedPods:
    """Repository of the departures not shown yet, over the store's engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def left(self, pod: DepartedPod) -> None:
        """Record a departure (replacing one of the same UID), and prune the old ones."""
        stale = pod.left_at - timedelta(seconds=PRUNED_S)
        with self.engine.begin() as conn:
            conn.execute(delete(DEPARTED).where(DEPARTED.c.left_at < stale))
            conn.execute(delete(DEPARTED).where(DEPARTED.c.uid == pod.uid))
            row = {"uid": pod.uid, "node": pod.node, "pod": pod.pod[:512]}
            conn.execute(insert(DEPARTED).values(**row, takes=dict(pod.takes), left_at=pod.left_at))

    def shown(self, node: str, uids: Collection[str]) -> int:
        """An object of `node` showed the pods `uids` gone: they are over; how many were kept."""
        if not uids:
            return 0
        which = (DEPARTED.c.node == node, DEPARTED.c.uid.in_(list(uids)))
        with self.engine.begin() as conn:
            return int(conn.execute(delete(DEPARTED).where(*which)).rowcount or 0)

    def clear(self, node: str, before: datetime) -> int:
        """An object of `node` that does not tell which pods it shows came at `before`: the
        departures recorded before it are over; how many there were."""
        which = (DEPARTED.c.node == node, DEPARTED.c.left_at <= before)
        with self.engine.begin() as conn:
            return int(conn.execute(delete(DEPARTED).where(*which)).rowcount or 0)

    def on_nodes(
        self, since: datetime, nodes: Collection[str] | None = None
    ) -> dict[str, list[DepartedPod]]:
        """The departures recorded after `since` (on `nodes`, when given), by node, oldest
        first."""
        query = select(DEPARTED).where(DEPARTED.c.left_at > since)
        named = nodes is not None and len(nodes) <= NODES_NAMED
        if named:
            query = query.where(DEPARTED.c.node.in_(list(nodes or ())))
        out: dict[str, list[DepartedPod]] = {}
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(DEPARTED.c.left_at, DEPARTED.c.uid)).mappings()
            for row in rows:
                if nodes is not None and not named and row["node"] not in nodes:
                    continue
                takes = {str(r): int(v) for r, v in dict(row["takes"]).items()}
                left_at = as_utc(row["left_at"])
                pod = DepartedPod(
                    str(row["uid"]), str(row["node"]), str(row["pod"]), takes, left_at
                )
                out.setdefault(pod.node, []).append(pod)
        return out

    def drop_node(self, node: str) -> None:
        """The node's NodeResourceTopology was deleted: its departures go."""
        with self.engine.begin() as conn:
            conn.execute(delete(DEPARTED).where(DEPARTED.c.node == node))
