"""The placement store: hosts, placements and their claims, with compare-and-swap commits.

Every method is one database transaction. A placement is computed outside the database on a
`snapshot` (each host's availability at a generation), then `commit_placement` bumps each touched
host's generation only if it is still the one seen (UPDATE ... WHERE generation = :seen) and inserts
one unique row per exclusively held resource; either step failing rolls everything back and raises
`StaleSnapshot`, and the caller recomputes.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import Connection, Engine, Table, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from ..claims import claim, claim_what_fits
from ..errors import Issue
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from . import db
from .resources import (
    held_resources,
    hugepage_capacity,
    hugepages_held,
    without_owners,
)
from .tables import (
    ClaimRow,
    HostRow,
    HugepageClaimRow,
    HugepagePoolRow,
    PlacementHostRow,
    PlacementRow,
)

HOSTS = cast(Table, HostRow.__table__)
PLACEMENTS = cast(Table, PlacementRow.__table__)
PLACEMENT_HOSTS = cast(Table, PlacementHostRow.__table__)
CLAIMS = cast(Table, ClaimRow.__table__)
POOLS = cast(Table, HugepagePoolRow.__table__)
PAGE_CLAIMS = cast(Table, HugepageClaimRow.__table__)


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


@dataclass(frozen=True)
class Snapshot:
    """Each host's availability and the generation it was read at."""

    hosts: Mapping[str, ComputeHostDescriptor]
    generations: Mapping[str, int]


@dataclass
class _Cache:
    lock: threading.Lock = field(default_factory=threading.Lock)
    hosts: dict[str, tuple[int, ComputeHostDescriptor]] = field(default_factory=dict)


def _now() -> datetime:
    return datetime.now(UTC)


def _dump(chd: ComputeHostDescriptor) -> dict[str, Any]:
    return chd.model_dump(mode="json", by_alias=True)


class Store:
    """Repository over one database (SQLite or PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._cache = _Cache()

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
            )
            created = result.rowcount == 0
            if created:
                conn.execute(
                    insert(HOSTS).values(
                        id=chd.id,
                        chd=reported,
                        available=reported,
                        generation=1,
                        created_at=now,
                        updated_at=now,
                    )
                )
            conflicts: list[dict[str, str]] = []
            live: list[tuple[str, VmConfiguration]] = []
            for placement_id, configurations in self._live_on(conn, chd.id):
                for data in configurations:
                    config = VmConfiguration.model_validate(data)
                    if config.host == chd.id:
                        live.append((placement_id, config))
            available = without_owners(chd, {config.owner for _, config in live})
            for placement_id, config in live:
                available, issues = claim_what_fits(available, config)
                conflicts.extend(
                    {
                        "placement": placement_id,
                        "instance": config.owner,
                        "path": issue.path,
                        "message": issue.message,
                    }
                    for issue in issues
                )
            conn.execute(
                update(HOSTS).where(HOSTS.c.id == chd.id).values(available=_dump(available))
            )
            self._sync_pools(conn, chd, [config for _, config in live])
            generation = conn.execute(
                select(HOSTS.c.generation).where(HOSTS.c.id == chd.id)
            ).scalar_one()
        record = HostRecord(chd.id, generation, reported, _dump(available))
        return HostPut(record, created, tuple(conflicts))

    def _live_on(self, conn: Connection, host_id: str) -> list[tuple[str, list[dict[str, Any]]]]:
        rows = conn.execute(
            select(PLACEMENTS.c.id, PLACEMENTS.c.configurations)
            .join(PLACEMENT_HOSTS, PLACEMENT_HOSTS.c.placement_id == PLACEMENTS.c.id)
            .where(PLACEMENT_HOSTS.c.host_id == host_id, PLACEMENTS.c.released_at.is_(None))
            .order_by(PLACEMENTS.c.created_at, PLACEMENTS.c.id)
        ).all()
        return [(row[0], row[1]) for row in rows]

    def _availability(self, conn: Connection, host_id: str) -> ComputeHostDescriptor:
        """The host's reported CHD with every live placement's configurations claimed."""
        reported = conn.execute(select(HOSTS.c.chd).where(HOSTS.c.id == host_id)).scalar_one()
        configs = [
            config
            for _placement_id, configurations in self._live_on(conn, host_id)
            for config in map(VmConfiguration.model_validate, configurations)
            if config.host == host_id
        ]
        available = without_owners(
            ComputeHostDescriptor.model_validate(reported), {c.owner for c in configs}
        )
        for config in configs:
            available, _issues = claim_what_fits(available, config)
        return available

    def _sync_pools(
        self, conn: Connection, chd: ComputeHostDescriptor, live: Sequence[VmConfiguration]
    ) -> None:
        capacity = hugepage_capacity(chd)
        claimed = {(n, s): c for (_h, n, s), c in hugepages_held(live).items()}
        existing = {
            (row[0], row[1])
            for row in conn.execute(
                select(POOLS.c.numa_node, POOLS.c.size_kib).where(POOLS.c.host_id == chd.id)
            )
        }
        for key in sorted(set(capacity) | set(claimed) | existing):
            node, size = key
            values = {"capacity": capacity.get(key, 0), "claimed": claimed.get(key, 0)}
            if key in existing:
                conn.execute(
                    update(POOLS)
                    .where(
                        POOLS.c.host_id == chd.id,
                        POOLS.c.numa_node == node,
                        POOLS.c.size_kib == size,
                    )
                    .values(**values)
                )
            else:
                conn.execute(
                    insert(POOLS).values(host_id=chd.id, numa_node=node, size_kib=size, **values)
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
            live = [placement_id for placement_id, _ in self._live_on(conn, host_id)]
            if live:
                raise HostInUseError(host_id, tuple(live))
            for table in (PAGE_CLAIMS, POOLS, CLAIMS, PLACEMENT_HOSTS):
                conn.execute(delete(table).where(table.c.host_id == host_id))
            conn.execute(delete(HOSTS).where(HOSTS.c.id == host_id))
        with self._cache.lock:
            self._cache.hosts.pop(host_id, None)
        return True

    # --- placements -----------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Every host's availability with its generation (parsed CHDs cached per generation)."""
        with self.engine.connect() as conn:
            generations = {
                row[0]: row[1] for row in conn.execute(select(HOSTS.c.id, HOSTS.c.generation))
            }
            with self._cache.lock:
                cached = dict(self._cache.hosts)
            stale = [h for h, g in generations.items() if cached.get(h, (None,))[0] != g]
            fresh: dict[str, tuple[int, ComputeHostDescriptor]] = {}
            for start in range(0, len(stale), 500):
                chunk = stale[start : start + 500]
                for host_id, generation, available in conn.execute(
                    select(HOSTS.c.id, HOSTS.c.generation, HOSTS.c.available).where(
                        HOSTS.c.id.in_(chunk)
                    )
                ):
                    fresh[host_id] = (generation, ComputeHostDescriptor.model_validate(available))
        with self._cache.lock:
            for host_id in set(self._cache.hosts) - set(generations):
                del self._cache.hosts[host_id]
            self._cache.hosts.update(fresh)
            view = {h: self._cache.hosts[h] for h in generations if h in self._cache.hosts}
        return Snapshot(
            hosts={h: chd for h, (_g, chd) in sorted(view.items())},
            generations={h: g for h, (g, _c) in sorted(view.items())},
        )

    def find_by_key(self, key: str) -> PlacementRecord | None:
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

    def commit_placement(
        self,
        *,
        placement_id: str,
        idempotency_key: str | None,
        request_hash: str,
        response: Mapping[str, Any],
        configurations: Sequence[VmConfiguration],
        snapshot: Snapshot,
    ) -> PlacementRecord:
        """Claim `configurations`, computed on `snapshot`, atomically.

        Raises StaleSnapshot when a touched host changed since the snapshot (or a resource is held
        already), IdempotentReplayError when another request with the same key committed first.
        """
        by_host: dict[str, list[VmConfiguration]] = defaultdict(list)
        for config in configurations:
            by_host[config.host].append(config)
        updated: dict[str, ComputeHostDescriptor] = {}
        for host_id, configs in by_host.items():
            if host_id not in snapshot.hosts:
                raise StaleSnapshot(host_id)
            chd = snapshot.hosts[host_id]
            for config in configs:
                chd = claim(chd, config)  # ClaimConflictError: the placer broke its contract
            updated[host_id] = chd
        held = sorted({h for config in configurations for h in held_resources(config)})
        pages = hugepages_held(configurations)
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
                        created_at=now,
                        released_at=None,
                    )
                )
                conn.execute(
                    insert(PLACEMENT_HOSTS),
                    [{"placement_id": placement_id, "host_id": h} for h in sorted(by_host)],
                )
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
                for (host_id, node, size), count in sorted(pages.items()):
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
        except IntegrityError as exc:
            if idempotency_key is not None:
                first = self.find_by_key(idempotency_key)
                if first is not None:
                    raise IdempotentReplayError(first) from exc
            raise StaleSnapshot("a resource was claimed concurrently") from exc
        with self._cache.lock:
            for host_id, chd in updated.items():
                self._cache.hosts[host_id] = (snapshot.generations[host_id] + 1, chd)
        return PlacementRecord(
            placement_id, idempotency_key, request_hash, dict(response), tuple(stored), False
        )

    def release_placement(self, placement_id: str) -> bool:
        """Free what a placement holds; False when it is unknown or released already."""
        now = _now()
        with self.engine.begin() as conn:
            marked = conn.execute(
                update(PLACEMENTS)
                .where(PLACEMENTS.c.id == placement_id, PLACEMENTS.c.released_at.is_(None))
                .values(released_at=now)
            )
            if marked.rowcount == 0:
                return False
            host_ids = sorted(
                conn.execute(
                    select(PLACEMENT_HOSTS.c.host_id).where(
                        PLACEMENT_HOSTS.c.placement_id == placement_id
                    )
                ).scalars()
            )
            for host_id in host_ids:
                conn.execute(
                    update(HOSTS)
                    .where(HOSTS.c.id == host_id)
                    .values(generation=HOSTS.c.generation + 1, updated_at=now)
                )
                conn.execute(
                    update(HOSTS)
                    .where(HOSTS.c.id == host_id)
                    .values(available=_dump(self._availability(conn, host_id)))
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
            for table in (PAGE_CLAIMS, CLAIMS, PLACEMENT_HOSTS):
                conn.execute(delete(table).where(table.c.placement_id == placement_id))
        return True

    # --- checks ---------------------------------------------------------------------------------

    def audit(self) -> list[str]:
        """Every inconsistency between live placements, claim rows, counters and availability."""
        problems: list[str] = []
        with self.engine.connect() as conn:
            placements = {
                row[0]: [VmConfiguration.model_validate(c) for c in row[1]]
                for row in conn.execute(
                    select(PLACEMENTS.c.id, PLACEMENTS.c.configurations)
                    .where(PLACEMENTS.c.released_at.is_(None))
                    .order_by(PLACEMENTS.c.created_at, PLACEMENTS.c.id)
                )
            }
            claims = conn.execute(
                select(CLAIMS.c.placement_id, CLAIMS.c.host_id, CLAIMS.c.kind, CLAIMS.c.resource)
            ).all()
            page_claims = conn.execute(select(PAGE_CLAIMS)).mappings().all()
            pools = conn.execute(select(POOLS)).mappings().all()
            hosts = conn.execute(select(HOSTS)).mappings().all()
            links = conn.execute(select(PLACEMENT_HOSTS)).mappings().all()
        rows_by_placement: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
        for placement_id, host_id, kind, resource in claims:
            if placement_id not in placements:
                problems.append(f"claim {host_id}/{kind}/{resource} of released {placement_id}")
            rows_by_placement[placement_id].add((host_id, kind, resource))
        owners: dict[tuple[str, str, str], str] = {}
        for placement_id, configs in placements.items():
            expected = {(h.host, h.kind, h.resource) for c in configs for h in held_resources(c)}
            if expected != rows_by_placement.get(placement_id, set()):
                problems.append(f"placement {placement_id}: claim rows differ from its resources")
            for key in expected:
                if key in owners:
                    problems.append(f"{key} held by {owners[key]} and {placement_id}")
                owners[key] = placement_id
        for link in links:
            if link["placement_id"] not in placements:
                problems.append(f"placement_hosts row of released {link['placement_id']}")
        pages_rows: dict[tuple[str, int, int], int] = defaultdict(int)
        for row in page_claims:
            if row["placement_id"] not in placements:
                problems.append(f"hugepage claim of released {row['placement_id']}")
            pages_rows[(row["host_id"], row["numa_node"], row["size_kib"])] += row["count"]
        expected_pages = hugepages_held(c for cs in placements.values() for c in cs)
        for pool in pools:
            pool_key = (str(pool["host_id"]), int(pool["numa_node"]), int(pool["size_kib"]))
            if pool["claimed"] != pages_rows.get(pool_key, 0) or pool[
                "claimed"
            ] != expected_pages.get(pool_key, 0):
                problems.append(f"hugepages {pool_key}: counter {pool['claimed']} != claims")
            if pool["claimed"] > pool["capacity"]:
                problems.append(f"hugepages {pool_key}: {pool['claimed']} > {pool['capacity']}")
        for host in hosts:
            on_host = [c for cs in placements.values() for c in cs if c.host == host["id"]]
            expected_chd = without_owners(
                ComputeHostDescriptor.model_validate(host["chd"]), {c.owner for c in on_host}
            )
            for config in on_host:
                expected_chd, _ = claim_what_fits(expected_chd, config)
            if _normal(_dump(expected_chd)) != _normal(dict(host["available"])):
                problems.append(f"host {host['id']}: availability differs from CHD + live claims")
        return problems


def _normal(chd: dict[str, Any]) -> dict[str, Any]:
    chd = dict(chd)
    chd["instances"] = sorted(chd.get("instances", []), key=lambda i: str(i["id"]))
    return chd


def _placement(row: Any) -> PlacementRecord:
    return PlacementRecord(
        id=row["id"],
        idempotency_key=row["idempotency_key"],
        request_hash=row["request_hash"],
        response=row["response"],
        configurations=tuple(row["configurations"]),
        released=row["released_at"] is not None,
    )


def issues_as_dicts(issues: Iterable[Issue]) -> list[dict[str, Any]]:
    return [{"path": i.path, "message": i.message, "hint": i.hint} for i in issues]
