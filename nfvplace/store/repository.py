"""The placement store: hosts, placements and their claims, with compare-and-swap commits.

Every method is one database transaction. A placement is computed outside the database (each worker
keeps an index of the hosts' availability, refreshed from the change feed: `changes_since`), then
`commit_placement` bumps each touched host's generation only if it is still the one the placement was
computed on (UPDATE ... WHERE generation = :seen), inserts one unique row per exclusively held
resource and adds its hugepages to the pools' counters; it does not write the host's availability
document, which readers bring up to date with the placements committed since, and which one
function writes (`availability.write_back`). Any step failing rolls everything back and raises
`StaleSnapshot`, and the caller refreshes and recomputes.

Every write that changes a host stamps it with a change number (`hosts.change_seq`, or
`deleted_hosts` for a deletion), which the change feed reads (`changes`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    bindparam,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError, OperationalError

from .. import errors
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from . import db
from .availability import (
    HOST_STATE,
    availability_at,
    catch_up,
    committed_since,
    derive,
    read_availability,
    rebased,
    rebuilds,
    since,
    stored_hosts,
    write_back,
    write_back_on,
)
from .changes import CHANGES, stamp
from .faults import LOW_DISK_BYTES, StoreFault, StoreFaultError, classify
from .placements import PlacementStore
from .records import (
    CHUNK,
    CLAIMS,
    DELETED,
    HOSTS,
    PAGE_CLAIMS,
    PLACEMENT_HOSTS,
    POOLS,
    PROBE,
    REPORT,
    Changes,
    HostInUseError,
    HostPut,
    HostRecord,
    Snapshot,
    chd_json,
    conflict_rows,
    generation_if_same,
    live_on,
    utc_now,
)
from .resources import pool_capacity, shares_held

POOLS_OF = select(POOLS.c.numa_node, POOLS.c.size_kib).where(POOLS.c.host_id == bindparam("b_host"))
SET_POOL = (
    update(POOLS)
    .where(
        POOLS.c.host_id == bindparam("b_host"),
        POOLS.c.numa_node == bindparam("b_node"),
        POOLS.c.size_kib == bindparam("b_size"),
    )
    .values(capacity=bindparam("b_capacity"), claimed=bindparam("b_claimed"))
)
ADD_POOL = insert(POOLS).values(
    host_id=bindparam("b_host"),
    numa_node=bindparam("b_node"),
    size_kib=bindparam("b_size"),
    capacity=bindparam("b_capacity"),
    claimed=bindparam("b_claimed"),
)


class Store(PlacementStore):
    """Repository over one database (SQLite or PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.lanes = {}

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> Store:
        engine = db.make_engine(url)
        if migrate:
            db.migrate(engine)
        return cls(engine)

    def close(self) -> None:
        self.close_lanes()
        self.engine.dispose()

    def ping(self) -> None:
        db.ping(self.engine)

    def check_writable(self) -> None:
        """Raise unless the database accepts a write now: a one-row update committed, and for an
        SQLite file at least `LOW_DISK_BYTES` free on its disk (SQLite reuses its write-ahead
        log's space, so a small write can succeed where a placement would not)."""
        free = db.free_bytes(self.engine)
        if free is not None and free < LOW_DISK_BYTES:
            reason = f"{free} bytes free on the disk of {self.engine.url.database}"
            raise StoreFaultError(StoreFault(errors.STORE_FULL, reason, 10))
        with db.transaction(self.engine) as conn:
            conn.execute(PROBE, {"b_now": utc_now()})

    def fault(self, exc: BaseException) -> StoreFault | None:
        """The transient database fault `exc` is (None: not one, a bug)."""
        return classify(exc, lambda: db.free_bytes(self.engine))

    # --- hosts --------------------------------------------------------------------------------

    def list_hosts(self) -> list[HostRecord]:
        return self._host_records(None)

    def get_host(self, host_id: str) -> HostRecord | None:
        found = self._host_records(host_id)
        return found[0] if found else None

    def _host_records(self, host_id: str | None) -> list[HostRecord]:
        """Every host (or the one given) as reported and as available at its generation."""
        query = select(*HOST_STATE, HOSTS.c.chd).order_by(HOSTS.c.id)
        if host_id is not None:
            query = query.where(HOSTS.c.id == host_id)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
            hosts = stored_hosts(rows)
            recent = since(conn, hosts)
            again = rebuilds(conn, rebased(hosts, recent))
        # an exact document is handed out as stored; only one that is behind is brought up to date
        available = [
            json.loads(host.available)
            if host.exact
            else availability_at(host, recent.get(host.id), again.get(host.id)).model_dump(
                mode="json", by_alias=True
            )
            for host in hosts
        ]
        return [
            HostRecord(host.id, host.generation, row[-1], document)
            for host, row, document in zip(hosts, rows, available, strict=True)
        ]

    def put_host(self, chd: ComputeHostDescriptor, *, same_keeps: bool = False) -> HostPut:
        """Store what a host reports; live claims are kept and re-applied, conflicts reported.
        With `same_keeps`, a report equal to the stored one writes nothing and keeps the host's
        generation: a host agent repeats its report, and each new generation would make every
        worker read the host again and retry the placements in flight on it."""
        for _attempt in range(3):
            try:
                return self._put_host(chd, same_keeps)
            except IntegrityError:  # two agents created the same host at once: now it exists
                continue
        return self._put_host(chd, same_keeps)

    def _put_host(self, chd: ComputeHostDescriptor, same_keeps: bool) -> HostPut:
        reported = chd_json(chd)
        now = utc_now()
        with db.transaction(self.engine) as conn:
            kept = generation_if_same(conn, chd.id, reported) if same_keeps else None
            created = False
            if kept is not None:
                generation = kept
            else:
                result = conn.execute(REPORT, {"b_id": chd.id, "b_chd": reported, "b_now": now})
                bumped = result.scalar_one_or_none()
                created = bumped is None
                generation = int(bumped) if bumped is not None else _first_generation(conn, chd.id)
            if created:
                conn.execute(
                    insert(HOSTS),
                    {
                        "id": chd.id,
                        "chd": reported,
                        # a new host holds no placement: its report is its availability
                        "available": reported,
                        "available_generation": generation,
                        "generation": generation,
                        "created_at": now,
                        "updated_at": now,
                        "change_seq": 0,
                    },
                )
                conn.execute(delete(DELETED).where(DELETED.c.host_id == chd.id))
            live = live_on(conn, chd.id)
            derived = derive(chd, [config for _, config in live])
            if kept is None:
                _sync_pools(conn, derived.base, [config for _, config in live])
                stamp(conn, (chd.id,))
                if not created:  # the document holds the report at once (see `availability.py`)
                    write_back_on(conn, [(chd.id, generation, derived.availability)])
        conflicts = conflict_rows(live, derived.conflicts)
        return HostPut(chd.id, generation, derived.availability, created, conflicts)

    def delete_host(self, host_id: str) -> bool:
        """Forget a host; False if unknown; HostInUseError while placements hold resources on it."""
        with db.transaction(self.engine) as conn:
            generation = conn.execute(
                update(HOSTS)
                .where(HOSTS.c.id == host_id)
                .values(generation=HOSTS.c.generation + 1, updated_at=utc_now())
                .returning(HOSTS.c.generation)
            ).scalar_one_or_none()
            if generation is None:
                return False
            live = sorted({placement_id for placement_id, _ in live_on(conn, host_id)})
            if live:
                raise HostInUseError(host_id, tuple(live))
            for table in (PAGE_CLAIMS, POOLS, CLAIMS, PLACEMENT_HOSTS):
                conn.execute(delete(table).where(table.c.host_id == host_id))
            conn.execute(delete(HOSTS).where(HOSTS.c.id == host_id))
            seq = stamp(conn, ())
            conn.execute(delete(DELETED).where(DELETED.c.host_id == host_id))
            conn.execute(
                insert(DELETED).values(host_id=host_id, change_seq=seq, generation=generation)
            )
        return True

    # --- what changed -----------------------------------------------------------------------------

    def changes_since(self, seq: int, lock_timeout_s: float | None = None) -> Changes:
        """Hosts changed (or deleted) after the watermark `seq` (-1: every host), and the
        watermark to ask with next time (see `changes`). With `lock_timeout_s` (a worker's
        placement on the event loop), read on SQLite's lane for it where it is free (`lane.py`),
        and not at all where nothing but the lane committed since it read up to `seq` (`seq`
        again, nothing changed: the lane's own commits are its caller's, who knows them)."""
        hosts: dict[str, int | None] = {}
        watermark = seq
        for host_id, generation, change in self._changes(seq, lock_timeout_s):
            if host_id is None:
                watermark = max(watermark, int(change))
            else:  # a host is in `hosts` or `deleted_hosts`, never both (see `delete_host`)
                hosts[host_id] = None if generation is None else int(generation)
        return Changes(watermark, hosts)

    def _changes(self, seq: int, lock_timeout_s: float | None) -> list[Any]:
        """The change feed's rows after `seq`: on the lane if it is free and the read is not
        refused (a busy database), else through the pool, waiting as the pool's connections do."""
        lane = None if lock_timeout_s is None else self.lane(lock_timeout_s)
        if lane is not None:
            with lane.taken() as raw:
                if raw is not None:
                    with contextlib.suppress(OperationalError, lane.driver_error):
                        return lane.changes(raw, seq)
        with self.engine.connect() as conn:
            return db.read_alone(conn, CHANGES, {"b_seq": seq})

    def generations(
        self, host_ids: Iterable[str], through: Connection | None = None
    ) -> dict[str, int]:
        """The generation of each host of `host_ids` that exists (nothing parsed), read through
        the connection `through` when given."""
        ids = sorted(set(host_ids))
        out: dict[str, int] = {}
        with db.lent(self.engine, through) as conn:
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                query = select(HOSTS.c.id, HOSTS.c.generation).where(HOSTS.c.id.in_(chunk))
                out.update((host_id, int(g)) for host_id, g in conn.execute(query))
        return out

    def availability(self, host_ids: Iterable[str]) -> dict[str, tuple[int, ComputeHostDescriptor]]:
        """Generation and availability of each host that still exists (parsed)."""
        return {h: (g, chd) for h, g, chd in self.iter_availability(host_ids)}

    def iter_availability(
        self, host_ids: Iterable[str], through: Connection | None = None
    ) -> Iterator[tuple[str, int, ComputeHostDescriptor]]:
        """(id, generation, availability) of each host that still exists, one host at a time, read
        `CHUNK` hosts per query (through the connection `through` when given): a caller that
        keeps only what it needs of each host (the index interns equal parts) never holds every
        parsed descriptor at once. Documents are read as text and parsed by pydantic-core (a
        third of the time of `json.loads` and validation)."""
        ids = sorted(set(host_ids))
        with db.lent(self.engine, through) as conn:
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                query = select(*HOST_STATE).where(HOSTS.c.id.in_(chunk)).order_by(HOSTS.c.id)
                for host, chd in read_availability(conn, stored_hosts(conn.execute(query))):
                    yield host.id, host.generation, chd

    def committed_since(
        self, known: Mapping[str, int]
    ) -> dict[str, tuple[int, list[VmConfiguration]]]:
        """The hosts of `known` (host -> generation held) that only live commits moved on since,
        each with its generation now and what those commits claimed on it, in order (see
        `availability.committed_since`); the others are left out."""
        out: dict[str, tuple[int, list[VmConfiguration]]] = {}
        ids = sorted(known)
        with self.engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                # no transaction: each statement reads its own snapshot as it would in one (READ
                # COMMITTED), without psycopg's `BEGIN` and the pool's `ROLLBACK`, two round trips
                conn.execution_options(isolation_level="AUTOCOMMIT")
            for start in range(0, len(ids), CHUNK):
                chunk = {h: known[h] for h in ids[start : start + CHUNK]}
                out.update(committed_since(conn, chunk))
        return out

    def write_back(self, documents: Iterable[tuple[str, int, ComputeHostDescriptor]]) -> int:
        """Store hosts' availability `(id, generation, document)` as exact at that generation where
        their document is behind (see `availability.py`); how many were written."""
        return write_back(self.engine, documents)

    def checkpoint(self) -> tuple[int, int] | None:
        """SQLite: its write-ahead log copied into the database file as far as it can be now (the
        log's pages and those copied); None on PostgreSQL (see `db.checkpoint`)."""
        return db.checkpoint(self.engine)

    def catch_up(self, limit: int, quiet_s: float = 0.0) -> int:
        """Write back the availability of up to `limit` hosts whose document is behind and that no
        commit touched for `quiet_s`, replaying the placements since; how many were written."""
        return catch_up(self.engine, limit, quiet_s)

    def snapshot(self) -> Snapshot:
        """Every host's availability with its generation (a full read: tools and tests)."""
        with self.engine.connect() as conn:
            ids = list(conn.execute(select(HOSTS.c.id)).scalars())
        read = self.availability(ids)
        return Snapshot(
            hosts={h: chd for h, (_g, chd) in sorted(read.items())},
            generations={h: g for h, (g, _c) in sorted(read.items())},
        )

    # --- checks ---------------------------------------------------------------------------------

    def audit(self) -> list[str]:
        """Every inconsistency between live placements, claim rows, counters and availability."""
        from .audit import audit

        return audit(self.engine)


def _sync_pools(
    conn: Connection, base: ComputeHostDescriptor, live: Sequence[VmConfiguration]
) -> None:
    """The host's hugepage counters: capacity as reported (without the store's own placements),
    claimed by the live placements."""
    capacity = pool_capacity(base)
    claimed = {(n, s): c for (_h, n, s), c in shares_held(live).items()}
    existing = {(row[0], row[1]) for row in conn.execute(POOLS_OF, {"b_host": base.id})}
    for key in sorted(set(capacity) | set(claimed) | existing):
        node, size = key
        values = {
            "b_host": base.id,
            "b_node": node,
            "b_size": size,
            "b_capacity": capacity.get(key, 0),
            "b_claimed": claimed.get(key, 0),
        }
        conn.execute(SET_POOL if key in existing else ADD_POOL, values)


def _first_generation(conn: Connection, host_id: str) -> int:
    """A new host's generation: 1, or past the one it was deleted at (one generation, one
    version of a host: readers keep hosts by it)."""
    query = select(DELETED.c.generation).where(DELETED.c.host_id == host_id)
    deleted = conn.execute(query).scalar_one_or_none()
    return 1 if deleted is None else int(deleted) + 1
