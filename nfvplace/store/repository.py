"""The placement store: hosts, placements and their claims, with compare-and-swap commits.

Every method is one database transaction. A placement is computed outside the database (each worker
keeps an index of the hosts' availability, refreshed from the change feed: `changes_since`), then
`commit_placement` bumps each touched host's generation only if it is still the one the placement was
computed on (UPDATE ... WHERE generation = :seen), writes the host as the engine claimed it, and inserts
one unique row per exclusively held resource; either step failing rolls everything back and raises
`StaleSnapshot`, and the caller refreshes and recomputes.

Every write that changes a host takes the next number of the one-row change counter just before it
commits and stamps it on the host (`hosts.change_seq`, or `deleted_hosts` for a deletion). The counter
row is held from that moment to the commit, so numbers become visible in order: a reader that has seen
number k has seen every change up to k.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Connection,
    Engine,
    Table,
    delete,
    insert,
    null,
    select,
    union_all,
    update,
)
from sqlalchemy import (
    cast as sql_cast,
)
from sqlalchemy.exc import IntegrityError

from ..claims import claim
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from . import db
from .availability import derive
from .resources import held_resources, hugepage_capacity, hugepages_held
from .tables import (
    ChangeCounterRow,
    ClaimRow,
    DeletedHostRow,
    HostRow,
    HugepageClaimRow,
    HugepagePoolRow,
    PlacementHostRow,
    PlacementInstanceRow,
    PlacementRow,
)

HOSTS = cast(Table, HostRow.__table__)
PLACEMENTS = cast(Table, PlacementRow.__table__)
PLACEMENT_HOSTS = cast(Table, PlacementHostRow.__table__)
INSTANCES = cast(Table, PlacementInstanceRow.__table__)
CLAIMS = cast(Table, ClaimRow.__table__)
POOLS = cast(Table, HugepagePoolRow.__table__)
PAGE_CLAIMS = cast(Table, HugepageClaimRow.__table__)
COUNTER = cast(Table, ChangeCounterRow.__table__)
DELETED = cast(Table, DeletedHostRow.__table__)
CHUNK = 500


class StaleSnapshot(Exception):  # noqa: N818 - a signal to recompute, not an error for users
    """A host changed (or a resource was taken) since the snapshot: recompute and retry."""


@dataclass(eq=False)
class HostInUseError(Exception):
    host: str
    placements: tuple[str, ...]


@dataclass(eq=False)
class IdempotentReplayError(Exception):
    """Another request with the same Idempotency-Key committed first."""

    placement: PlacementRecord


@dataclass(frozen=True)
class HostRecord:
    id: str
    generation: int
    chd: Mapping[str, Any]  # what the host reported
    available: Mapping[str, Any]  # the CHD with every live claim applied


@dataclass(frozen=True)
class HostPut:
    host: HostRecord
    created: bool
    conflicts: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True)
class PlacementRecord:
    id: str
    idempotency_key: str | None
    request_hash: str
    response: Mapping[str, Any]
    configurations: tuple[Mapping[str, Any], ...]
    released: bool
    descriptor: Mapping[str, Any] | None = None  # the VM Descriptor or VNF template placed


@dataclass(frozen=True)
class Snapshot:
    """Hosts' availability and the generation each was read at."""

    hosts: Mapping[str, ComputeHostDescriptor]
    generations: Mapping[str, int]


@dataclass(frozen=True)
class Changes:
    """Hosts changed after a change number: id -> generation (None: deleted), and the newest number."""

    seq: int
    hosts: Mapping[str, int | None]


@dataclass(frozen=True)
class PlacementPage:
    placements: tuple[PlacementRecord, ...]
    next_after: str | None  # pass as `after` for the next page (None: this was the last)


def _now() -> datetime:
    return datetime.now(UTC)


def _dump(chd: ComputeHostDescriptor) -> dict[str, Any]:
    return chd.model_dump(mode="json", by_alias=True)


def _stamp(conn: Connection, host_ids: Iterable[str]) -> int:
    """Take the next change number and stamp it on `host_ids`; call last in a transaction."""
    seq = int(
        conn.execute(
            update(COUNTER)
            .where(COUNTER.c.id == 1)
            .values(seq=COUNTER.c.seq + 1)
            .returning(COUNTER.c.seq)
        ).scalar_one()
    )
    ids = sorted(host_ids)
    if ids:
        conn.execute(update(HOSTS).where(HOSTS.c.id.in_(ids)).values(change_seq=seq))
    return seq


class Store:
    """Repository over one database (SQLite or PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> Store:
        engine = db.make_engine(url)
        if migrate:
            db.migrate(engine)
        return cls(engine)

    def close(self) -> None:
        self.engine.dispose()

    def ping(self) -> None:
        db.ping(self.engine)

    # --- hosts --------------------------------------------------------------------------------

    def list_hosts(self) -> list[HostRecord]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(HOSTS).order_by(HOSTS.c.id)).mappings().all()
        return [HostRecord(r["id"], r["generation"], r["chd"], r["available"]) for r in rows]

    def get_host(self, host_id: str) -> HostRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(HOSTS).where(HOSTS.c.id == host_id)).mappings().first()
        if row is None:
            return None
        return HostRecord(row["id"], row["generation"], row["chd"], row["available"])

    def put_host(self, chd: ComputeHostDescriptor) -> HostPut:
        """Store what a host reports; live claims are kept and re-applied, conflicts reported."""
        for _attempt in range(3):
            try:
                return self._put_host(chd)
            except IntegrityError:  # two agents created the same host at once: now it exists
                continue
        return self._put_host(chd)

    def _put_host(self, chd: ComputeHostDescriptor) -> HostPut:
        reported = _dump(chd)
        now = _now()
        with self.engine.begin() as conn:
            result = conn.execute(
                update(HOSTS)
                .where(HOSTS.c.id == chd.id)
                .values(generation=HOSTS.c.generation + 1, chd=reported, updated_at=now)
                .returning(HOSTS.c.generation)
            )
            bumped = result.scalar_one_or_none()
            created = bumped is None
            generation = 1 if bumped is None else int(bumped)
            if created:
                conn.execute(
                    insert(HOSTS).values(
                        id=chd.id,
                        chd=reported,
                        available=reported,
                        generation=generation,
                        created_at=now,
                        updated_at=now,
                        change_seq=0,
                    )
                )
                conn.execute(delete(DELETED).where(DELETED.c.host_id == chd.id))
            live = self._live_on(conn, chd.id)
            derived = derive(chd, [config for _, config in live])
            placement_of = {config.owner: placement_id for placement_id, config in live}
            conflicts = tuple(
                {
                    "placement": placement_of[config.owner],
                    "instance": config.owner,
                    "path": issue.path,
                    "message": issue.message,
                }
                for config, issue in derived.conflicts
            )
            available = _dump(derived.available)
            self._sync_pools(conn, derived.base, [config for _, config in live])
            seq = _stamp(conn, ())
            conn.execute(
                update(HOSTS)
                .where(HOSTS.c.id == chd.id)
                .values(available=available, change_seq=seq)
            )
        record = HostRecord(chd.id, generation, reported, available)
        return HostPut(record, created, conflicts)

    def _live_on(self, conn: Connection, host_id: str) -> list[tuple[str, VmConfiguration]]:
        """(placement id, configuration) of every live placement on the host, oldest first."""
        rows = conn.execute(
            select(PLACEMENTS.c.id, PLACEMENTS.c.configurations)
            .join(PLACEMENT_HOSTS, PLACEMENT_HOSTS.c.placement_id == PLACEMENTS.c.id)
            .where(PLACEMENT_HOSTS.c.host_id == host_id, PLACEMENTS.c.released_at.is_(None))
            .order_by(PLACEMENTS.c.created_at, PLACEMENTS.c.id)
        ).all()
        return [
            (placement_id, config)
            for placement_id, configurations in rows
            for config in map(VmConfiguration.model_validate, configurations)
            if config.host == host_id
        ]

    def _sync_pools(
        self, conn: Connection, base: ComputeHostDescriptor, live: Sequence[VmConfiguration]
    ) -> None:
        capacity = hugepage_capacity(base)
        claimed = {(n, s): c for (_h, n, s), c in hugepages_held(live).items()}
        existing = {
            (row[0], row[1])
            for row in conn.execute(
                select(POOLS.c.numa_node, POOLS.c.size_kib).where(POOLS.c.host_id == base.id)
            )
        }
        for key in sorted(set(capacity) | set(claimed) | existing):
            node, size = key
            values = {"capacity": capacity.get(key, 0), "claimed": claimed.get(key, 0)}
            if key in existing:
                conn.execute(
                    update(POOLS)
                    .where(
                        POOLS.c.host_id == base.id,
                        POOLS.c.numa_node == node,
                        POOLS.c.size_kib == size,
                    )
                    .values(**values)
                )
            else:
                conn.execute(
                    insert(POOLS).values(host_id=base.id, numa_node=node, size_kib=size, **values)
                )

    def delete_host(self, host_id: str) -> bool:
        """Forget a host; False if unknown; HostInUseError while placements hold resources on it."""
        with self.engine.begin() as conn:
            locked = conn.execute(
                update(HOSTS)
                .where(HOSTS.c.id == host_id)
                .values(generation=HOSTS.c.generation + 1, updated_at=_now())
            )
            if locked.rowcount == 0:
                return False
            live = sorted({placement_id for placement_id, _ in self._live_on(conn, host_id)})
            if live:
                raise HostInUseError(host_id, tuple(live))
            for table in (PAGE_CLAIMS, POOLS, CLAIMS, PLACEMENT_HOSTS):
                conn.execute(delete(table).where(table.c.host_id == host_id))
            conn.execute(delete(HOSTS).where(HOSTS.c.id == host_id))
            seq = _stamp(conn, ())
            conn.execute(delete(DELETED).where(DELETED.c.host_id == host_id))
            conn.execute(insert(DELETED).values(host_id=host_id, change_seq=seq))
        return True

    # --- what changed -----------------------------------------------------------------------------

    def changes_since(self, seq: int) -> Changes:
        """Hosts changed (or deleted) after change number `seq` (-1: every host)."""
        query = union_all(
            select(HOSTS.c.id, HOSTS.c.generation, HOSTS.c.change_seq).where(
                HOSTS.c.change_seq > seq
            ),
            select(DELETED.c.host_id, sql_cast(null(), BigInteger), DELETED.c.change_seq).where(
                DELETED.c.change_seq > seq
            ),
        )
        newest: dict[str, tuple[int, int | None]] = {}
        top = seq
        with self.engine.connect() as conn:
            for host_id, generation, change in conn.execute(query):
                top = max(top, int(change))
                if host_id not in newest or newest[host_id][0] < change:
                    newest[host_id] = (int(change), None if generation is None else int(generation))
        return Changes(top, {h: g for h, (_c, g) in newest.items()})

    def availability(self, host_ids: Iterable[str]) -> dict[str, tuple[int, ComputeHostDescriptor]]:
        """Generation and availability of each host that still exists (parsed)."""
        ids = sorted(set(host_ids))
        out: dict[str, tuple[int, ComputeHostDescriptor]] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(ids), CHUNK):
                for host_id, generation, available in conn.execute(
                    select(HOSTS.c.id, HOSTS.c.generation, HOSTS.c.available).where(
                        HOSTS.c.id.in_(ids[start : start + CHUNK])
                    )
                ):
                    out[host_id] = (
                        int(generation),
                        ComputeHostDescriptor.model_validate(available),
                    )
        return out

    def snapshot(self) -> Snapshot:
        """Every host's availability with its generation (a full read: tools and tests)."""
        with self.engine.connect() as conn:
            ids = list(conn.execute(select(HOSTS.c.id)).scalars())
        read = self.availability(ids)
        return Snapshot(
            hosts={h: chd for h, (_g, chd) in sorted(read.items())},
            generations={h: g for h, (g, _c) in sorted(read.items())},
        )

    # --- placements -----------------------------------------------------------------------------

    def find_by_key(self, key: str) -> PlacementRecord | None:
        """The placement stored under an Idempotency-Key, live or released."""
        with self.engine.connect() as conn:
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
        response: Mapping[str, Any],
        configurations: Sequence[VmConfiguration],
        snapshot: Snapshot,
        claimed: Mapping[str, ComputeHostDescriptor] | None = None,
        name: str | None = None,
        descriptor: Mapping[str, Any] | None = None,
    ) -> PlacementRecord:
        """Store `configurations`, computed on hosts at `snapshot.generations`, atomically.

        `claimed` holds each touched host with the configurations claimed (what the engine hands
        back); without it they are claimed here on `snapshot.hosts` (ClaimConflictError if they do
        not fit). Raises StaleSnapshot when a touched host changed since (or a resource is held
        already), IdempotentReplayError when another request with the same key committed first.
        """
        by_host: dict[str, list[VmConfiguration]] = defaultdict(list)
        for config in configurations:
            by_host[config.host].append(config)
        if any(h not in snapshot.generations for h in by_host):
            raise StaleSnapshot(sorted(set(by_host) - set(snapshot.generations))[0])
        updated = dict(claimed) if claimed is not None else {}
        for host_id, configs in by_host.items():
            if host_id not in updated:
                chd = snapshot.hosts[host_id]
                for config in configs:
                    chd = claim(chd, config)
                updated[host_id] = chd
        stored = [c.model_dump(mode="json", by_alias=True) for c in configurations]
        now = _now()
        try:
            with self.engine.begin() as conn:
                for host_id in sorted(by_host):
                    swapped = conn.execute(
                        update(HOSTS)
                        .where(
                            HOSTS.c.id == host_id,
                            HOSTS.c.generation == snapshot.generations[host_id],
                        )
                        .values(
                            generation=snapshot.generations[host_id] + 1,
                            available=_dump(updated[host_id]),
                            updated_at=now,
                        )
                    )
                    if swapped.rowcount != 1:
                        raise StaleSnapshot(host_id)
                conn.execute(
                    insert(PLACEMENTS).values(
                        id=placement_id,
                        idempotency_key=idempotency_key,
                        request_hash=request_hash,
                        response=dict(response),
                        configurations=stored,
                        name=name,
                        descriptor=None if descriptor is None else dict(descriptor),
                        created_at=now,
                        released_at=None,
                    )
                )
                self._insert_holdings(conn, placement_id, configurations)
                _stamp(conn, by_host)
        except IntegrityError as exc:
            if idempotency_key is not None:
                first = self.find_by_key(idempotency_key)
                if first is not None:
                    raise IdempotentReplayError(first) from exc
            raise StaleSnapshot("a resource was claimed concurrently") from exc
        return PlacementRecord(
            placement_id,
            idempotency_key,
            request_hash,
            dict(response),
            tuple(stored),
            False,
            descriptor,
        )

    @staticmethod
    def _insert_holdings(
        conn: Connection, placement_id: str, configurations: Sequence[VmConfiguration]
    ) -> None:
        """The placement's rows: hosts, instances, unique claims and guarded hugepage counters."""
        conn.execute(
            insert(PLACEMENT_HOSTS),
            [
                {"placement_id": placement_id, "host_id": h}
                for h in sorted({c.host for c in configurations})
            ],
        )
        conn.execute(
            insert(INSTANCES),
            [
                {"placement_id": placement_id, "owner": c.owner, "host_id": c.host, "vm": c.vm}
                for c in configurations
            ],
        )
        held = sorted({h for config in configurations for h in held_resources(config)})
        if held:
            conn.execute(
                insert(CLAIMS),
                [
                    {
                        "placement_id": placement_id,
                        "host_id": h.host,
                        "kind": h.kind,
                        "resource": h.resource,
                    }
                    for h in held
                ],
            )
        for (host_id, node, size), count in sorted(hugepages_held(configurations).items()):
            raised = conn.execute(
                update(POOLS)
                .where(
                    POOLS.c.host_id == host_id,
                    POOLS.c.numa_node == node,
                    POOLS.c.size_kib == size,
                    POOLS.c.claimed + count <= POOLS.c.capacity,
                )
                .values(claimed=POOLS.c.claimed + count)
            )
            if raised.rowcount != 1:
                raise StaleSnapshot(host_id)
            conn.execute(
                insert(PAGE_CLAIMS).values(
                    placement_id=placement_id,
                    host_id=host_id,
                    numa_node=node,
                    size_kib=size,
                    count=count,
                )
            )

    def release_placement(self, placement_id: str) -> bool:
        """Free what a placement holds; False when it is unknown or released already."""
        now = _now()
        with self.engine.begin() as conn:
            marked = conn.execute(
                update(PLACEMENTS)
                .where(PLACEMENTS.c.id == placement_id, PLACEMENTS.c.released_at.is_(None))
                .values(released_at=now)
                .returning(PLACEMENTS.c.configurations)
            )
            stored = marked.scalar_one_or_none()
            if stored is None:
                return False
            host_ids = sorted({str(c["host"]) for c in stored})
            for host_id in host_ids:
                reported = conn.execute(
                    update(HOSTS)
                    .where(HOSTS.c.id == host_id)
                    .values(generation=HOSTS.c.generation + 1, updated_at=now)
                    .returning(HOSTS.c.chd)
                ).scalar_one()
                # what is left: the host's own report with the other live placements claimed (a VM
                # the report still shows stays as reported until the agent reports again)
                remaining = [config for _, config in self._live_on(conn, host_id)]
                derived = derive(ComputeHostDescriptor.model_validate(reported), remaining)
                conn.execute(
                    update(HOSTS)
                    .where(HOSTS.c.id == host_id)
                    .values(available=_dump(derived.available))
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
            _stamp(conn, host_ids)
        return True

    # --- checks ---------------------------------------------------------------------------------

    def audit(self) -> list[str]:
        """Every inconsistency between live placements, claim rows, counters and availability."""
        from .audit import audit

        return audit(self.engine)


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
