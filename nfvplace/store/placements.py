"""The placement half of the store: find, list, commit (compare-and-swap) and release placements.
`Store` (repository.py) inherits it; see there for how commits work, and `changes` for the change
feed."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Engine,
    delete,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError, OperationalError

from .. import errors
from ..claims import claim
from ..models.configuration import VmConfiguration
from . import db
from .availability import fold
from .changes import stamp
from .commit import PageClaim, PlacedInstance, PlacementWrite, Swap, commit
from .db import JsonText
from .faults import classify
from .lane import Lane
from .records import (
    CLAIMS,
    CONFIGURATIONS,
    HOSTS,
    INSTANCES,
    KEY_USED,
    PAGE_CLAIMS,
    PLACEMENT_HOSTS,
    PLACEMENTS,
    POOLS,
    SLIM_RELEASED,
    IdempotentReplayError,
    PlacementPage,
    PlacementRecord,
    Snapshot,
    StaleSnapshot,
    WriteLockBusyError,
    json_text,
    utc_now,
)
from .resources import held_order, held_resources, shares_held


class PlacementStore:
    """Placements over the store's database (`engine`)."""

    engine: Engine
    lanes: dict[float, Lane]  # SQLite: by lock timeout (`lane`)

    # --- placements -----------------------------------------------------------------------------

    def find_by_key(self, key: str) -> PlacementRecord | None:
        """The placement stored under an Idempotency-Key, live or released."""
        with self.engine.connect() as conn:
            if not db.read_alone(conn, KEY_USED, {"b_key": key}):
                return None
            row = (
                conn.execute(select(PLACEMENTS).where(PLACEMENTS.c.idempotency_key == key))
                .mappings()
                .first()
            )
        return None if row is None else _placement(row)

    def get_placement(self, placement_id: str) -> PlacementRecord | None:
        """A live placement (None once released or if unknown)."""
        with self.engine.connect() as conn:
            row = (
                conn.execute(
                    select(PLACEMENTS).where(
                        PLACEMENTS.c.id == placement_id, PLACEMENTS.c.released_at.is_(None)
                    )
                )
                .mappings()
                .first()
            )
        return None if row is None else _placement(row)

    def list_placements(
        self,
        *,
        host: str | None = None,
        vm: str | None = None,
        owner: str | None = None,
        after: str | None = None,
        limit: int = 100,
    ) -> PlacementPage:
        """Live placements in id order, filtered by host, VM name and owner (instance id)."""
        query = select(PLACEMENTS).where(PLACEMENTS.c.released_at.is_(None))
        if host is not None or vm is not None or owner is not None:
            matching = select(INSTANCES.c.placement_id)
            if host is not None:
                matching = matching.where(INSTANCES.c.host_id == host)
            if vm is not None:
                matching = matching.where(INSTANCES.c.vm == vm)
            if owner is not None:
                matching = matching.where(INSTANCES.c.owner == owner)
            query = query.where(PLACEMENTS.c.id.in_(matching))
        if after is not None:
            query = query.where(PLACEMENTS.c.id > after)
        query = query.order_by(PLACEMENTS.c.id).limit(limit + 1)
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        page = tuple(_placement(row) for row in rows[:limit])
        return PlacementPage(page, page[-1].id if len(rows) > limit else None)

    def commit_placement(
        self,
        *,
        placement_id: str,
        idempotency_key: str | None,
        request_hash: str,
        response: Mapping[str, Any] | JsonText,
        configurations: Sequence[VmConfiguration],
        snapshot: Snapshot,
        name: str | None = None,
        descriptor: Mapping[str, Any] | JsonText | None = None,
        configurations_json: JsonText | None = None,
        lock_timeout_s: float | None = None,
    ) -> None:
        """Store `configurations`, computed on hosts at `snapshot.generations`, atomically.

        The hosts' availability documents are not written: their generations move on, and readers
        claim the placements committed since on the stored document (`availability.py`). The claim
        rows and hugepage counters refuse a resource held already. With `snapshot.hosts` given,
        the configurations are first claimed on them (ClaimConflictError if they do not fit); the
        service gives only generations (its index claimed them already). Documents may come
        serialised already (`JsonText`; `configurations_json` is `configurations` as JSON).
        Raises StaleSnapshot when a touched host changed since (or a resource is held already),
        IdempotentReplayError when another request with the same key committed first, and
        (with `lock_timeout_s`, on SQLite) WriteLockBusyError when another connection held the
        write lock that long (rather than SQLite's 30 s busy timeout).
        """
        touched = _touched_hosts(configurations, snapshot)
        if configurations_json is None:
            dumped = CONFIGURATIONS.dump_json(
                list(configurations), by_alias=True, exclude_none=True
            )
            configurations_json = JsonText(dumped.decode())
        row = {
            "id": placement_id,
            "idempotency_key": idempotency_key,
            "request_hash": request_hash,
            "response": _text(response),
            "configurations": configurations_json,
            "name": name,
            "descriptor": None if descriptor is None else _text(descriptor),
            "created_at": utc_now(),
        }
        write = placement_write(row, configurations, touched, snapshot)
        try:
            if not self._committed_on_lane(write, lock_timeout_s):
                with db.transaction(self.engine) as conn, db.lock_wait(conn, lock_timeout_s):
                    commit(conn, write)
        except IntegrityError as exc:
            if idempotency_key is not None:
                first = self.find_by_key(idempotency_key)
                if first is not None:
                    raise IdempotentReplayError(first) from exc
            raise StaleSnapshot("a resource was claimed concurrently") from exc
        except OperationalError as exc:
            fault = classify(exc)
            if lock_timeout_s is None or fault is None or fault.code != errors.STORE_BUSY:
                raise
            raise WriteLockBusyError(fault.reason) from exc

    def lane(self, timeout_s: float) -> Lane | None:
        """SQLite: the connection kept for commits and reads that wait at most `timeout_s` for
        the write lock (`lane.py`); None on PostgreSQL."""
        if self.engine.dialect.name != "sqlite":
            return None
        found = self.lanes.get(timeout_s)
        if found is None:
            found = self.lanes.setdefault(timeout_s, Lane(self.engine, timeout_s))
        return found

    def close_lanes(self) -> None:
        for lane in self.lanes.values():
            lane.close()

    def _committed_on_lane(self, write: PlacementWrite, timeout_s: float | None) -> bool:
        """`write` committed on SQLite's lane for `timeout_s` (False: not tried, no lane or
        another thread on it)."""
        lane = None if timeout_s is None else self.lane(timeout_s)
        if lane is None:
            return False
        with lane.taken() as raw:
            if raw is None:
                return False
            lane.commit(raw, write)
            return True

    def release_placement(self, placement_id: str) -> bool:
        """Free what a placement holds; False when it is unknown or released already."""
        now = utc_now()
        with db.transaction(self.engine) as conn:
            marked = conn.execute(
                update(PLACEMENTS)
                .where(PLACEMENTS.c.id == placement_id, PLACEMENTS.c.released_at.is_(None))
                .values(released_at=now)
                .returning(PLACEMENTS.c.configurations)
            )
            stored = marked.scalar_one_or_none()
            if stored is None:
                return False
            # what a released placement keeps until it is pruned: its id, key and request hash
            # (a replay of the key is told it was released), not its documents
            conn.execute(SLIM_RELEASED, {"b_id": placement_id})
            host_ids = sorted({str(c["host"]) for c in stored})
            for host_id in host_ids:  # in sorted order: the lock order
                conn.execute(
                    update(HOSTS)
                    .where(HOSTS.c.id == host_id)
                    .values(generation=HOSTS.c.generation + 1, updated_at=now)
                )
            for host_id, node, size, count in conn.execute(
                select(
                    PAGE_CLAIMS.c.host_id,
                    PAGE_CLAIMS.c.numa_node,
                    PAGE_CLAIMS.c.size_kib,
                    PAGE_CLAIMS.c.count,
                ).where(PAGE_CLAIMS.c.placement_id == placement_id)
            ):
                conn.execute(
                    update(POOLS)
                    .where(
                        POOLS.c.host_id == host_id,
                        POOLS.c.numa_node == node,
                        POOLS.c.size_kib == size,
                    )
                    .values(claimed=POOLS.c.claimed - count)
                )
            for table in (PAGE_CLAIMS, CLAIMS, PLACEMENT_HOSTS, INSTANCES):
                conn.execute(delete(table).where(table.c.placement_id == placement_id))
            stamp(conn, host_ids)
        # what is left on each host (its report with the other live placements claimed; a VM the
        # report still shows stays as reported until the agent reports again) is folded into its
        # document; readers derive it so until then (see `availability.py`)
        fold(self.engine, host_ids)
        return True

    def prune_released(self, before: datetime, limit: int) -> int:
        """Forget up to `limit` placements released before `before` (one short transaction, so
        that commits wait little on it); how many were forgotten. Their Idempotency-Keys are
        forgotten with them: a request sent again with one is a new request."""
        with db.transaction(self.engine) as conn:
            ids = list(
                conn.execute(
                    select(PLACEMENTS.c.id)
                    .where(PLACEMENTS.c.released_at < before)
                    .order_by(PLACEMENTS.c.released_at)
                    .limit(limit)
                ).scalars()
            )
            if ids:
                conn.execute(delete(PLACEMENTS).where(PLACEMENTS.c.id.in_(ids)))
        return len(ids)


def _text(document: Mapping[str, Any] | JsonText) -> JsonText:
    return document if isinstance(document, JsonText) else json_text(document)


def placement_write(
    row: Mapping[str, Any],
    configurations: Sequence[VmConfiguration],
    host_ids: Sequence[str],
    snapshot: Snapshot,
) -> PlacementWrite:
    """The rows one placement (`row` of the placements table) writes on `host_ids` (sorted, the
    lock order). Each host's generation moves on; its availability document stays as it was (see
    `availability.py`): the placement's host rows say which generation it made."""
    pages = sorted(shares_held(configurations).items())
    return PlacementWrite(
        placement=row,
        swaps=[Swap(h, snapshot.generations[h], snapshot.generations[h] + 1) for h in host_ids],
        instances=[PlacedInstance(c.owner, c.host, c.vm) for c in configurations],
        claims=sorted(
            {h for config in configurations for h in held_resources(config)}, key=held_order
        ),
        pages=[PageClaim(host, node, size, count) for (host, node, size), count in pages],
    )


def _placement(row: Any) -> PlacementRecord:
    return PlacementRecord(
        id=row["id"],
        idempotency_key=row["idempotency_key"],
        request_hash=row["request_hash"],
        response=row["response"],
        configurations=tuple(row["configurations"]),
        released=row["released_at"] is not None,
        descriptor=row["descriptor"],
    )


def _touched_hosts(configurations: Sequence[VmConfiguration], snapshot: Snapshot) -> list[str]:
    """The hosts the configurations are on, sorted; StaleSnapshot if the snapshot lacks one, and
    ClaimConflictError if they do not fit on a host the snapshot gives (tools and tests)."""
    by_host: dict[str, list[VmConfiguration]] = defaultdict(list)
    for config in configurations:
        by_host[config.host].append(config)
    if any(h not in snapshot.generations for h in by_host):
        raise StaleSnapshot(sorted(set(by_host) - set(snapshot.generations))[0])
    for host_id, configs in by_host.items():
        if host_id in snapshot.hosts:
            chd = snapshot.hosts[host_id]
            for config in configs:
                chd = claim(chd, config)
    return sorted(by_host)
