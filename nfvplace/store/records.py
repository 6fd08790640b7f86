"""The store's tables, the records it hands out and its signals (see `repository` for how commits
work, `changes` for the change feed)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from pydantic import TypeAdapter
from pydantic_core import to_json
from sqlalchemy import (
    Connection,
    Table,
    bindparam,
    insert,
    null,
    select,
    update,
)

from ..errors import Issue
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from .db import JsonText
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
    ReadinessProbeRow,
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
READINESS = cast(Table, ReadinessProbeRow.__table__)
CHUNK = 500
CONFIGURATIONS = TypeAdapter(list[VmConfiguration])
CONFIGURATION = TypeAdapter(VmConfiguration)

# Statements that carry whole descriptors take them as execution parameters: given to `.values()`
# as literals, SQLAlchemy would walk every JSON document to build its cache key (10 ms a host).
REPORT = (
    update(HOSTS)
    .where(HOSTS.c.id == bindparam("b_id"))
    .values(
        generation=HOSTS.c.generation + 1, chd=bindparam("b_chd"), updated_at=bindparam("b_now")
    )
    .returning(HOSTS.c.generation)
)
SLIM_RELEASED = (
    update(PLACEMENTS)
    .where(PLACEMENTS.c.id == bindparam("b_id"))
    .values(response=JsonText("{}"), configurations=JsonText("[]"), descriptor=null())
)
# A keyed POST that could not be placed asks whether its key was used (a retry on a full fleet
# gets its first answer); mostly it was not, so the question is a key lookup on the driver's
# cursor (db.read_alone), and the record is read only when it was.
KEY_USED = select(PLACEMENTS.c.id).where(PLACEMENTS.c.idempotency_key == bindparam("b_key"))
PROBE = update(READINESS).where(READINESS.c.id == 1).values(probed_at=bindparam("b_now"))

# A placement's commit on SQLite (`commit.py`; on PostgreSQL the function of migrations 0009 and
# 0010 writes the same rows): every value a bind parameter, so that each is compiled once.
INSERT_PLACEMENT = insert(PLACEMENTS).values(
    {c: bindparam(c) for c in PLACEMENTS.c.keys()}  # noqa: SIM118 - a Table's column keys
)
INSERT_PLACEMENT_HOST = insert(PLACEMENT_HOSTS).values(
    placement_id=bindparam("placement_id"),
    host_id=bindparam("host_id"),
    generation=bindparam("generation"),
)
INSERT_INSTANCE = insert(INSTANCES).values(
    {c: bindparam(c) for c in ("placement_id", "owner", "host_id", "vm")}
)
INSERT_CLAIM = insert(CLAIMS).values(
    {c: bindparam(c) for c in ("placement_id", "host_id", "kind", "resource")}
)
RAISE_POOL = (
    update(POOLS)
    .where(
        POOLS.c.host_id == bindparam("b_host"),
        POOLS.c.numa_node == bindparam("b_node"),
        POOLS.c.size_kib == bindparam("b_size"),
        POOLS.c.claimed + bindparam("b_count") <= POOLS.c.capacity,
    )
    .values(claimed=POOLS.c.claimed + bindparam("b_count"))
)
INSERT_PAGE_CLAIM = insert(PAGE_CLAIMS).values(
    {c: bindparam(c) for c in ("placement_id", "host_id", "numa_node", "size_kib", "count")}
)


class StaleSnapshot(Exception):  # noqa: N818 - a signal to recompute, not an error for users
    """A host changed (or a resource was taken) since the snapshot: recompute and retry."""


class WriteLockBusyError(Exception):
    """SQLite's write lock was another connection's and the commit was not to wait for it:
    nothing was written."""


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
    availability: Mapping[str, Any]  # the CHD with every live claim applied


@dataclass(frozen=True)
class HostPut:
    """What a report made of a host: its new generation and availability after claims."""

    id: str
    generation: int
    availability: ComputeHostDescriptor
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
    """Hosts changed after a watermark: id -> generation (None: deleted), and the watermark to ask
    with next (see `changes`)."""

    seq: int
    hosts: Mapping[str, int | None]


@dataclass(frozen=True)
class PlacementPage:
    placements: tuple[PlacementRecord, ...]
    next_after: str | None  # pass as `after` for the next page (None: this was the last)


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """A stored moment as an aware one: SQLite gives back naive datetimes, written in UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def chd_json(chd: ComputeHostDescriptor) -> JsonText:
    """A host as the JSON columns store it, serialised once."""
    return JsonText(chd.model_dump_json(by_alias=True))


def json_text(value: Any) -> JsonText:
    """Any JSON-able value serialised once, in Rust (pydantic-core), for the JSON columns."""
    return JsonText(to_json(value, inf_nan_mode="null").decode())


def live_on(conn: Connection, host_id: str) -> list[tuple[str, VmConfiguration]]:
    """(placement id, configuration) of every live placement on the host, in commit order (as
    `availability.rebuilds` reads them)."""
    rows = conn.execute(
        select(PLACEMENTS.c.id, PLACEMENTS.c.configurations)
        .join(PLACEMENT_HOSTS, PLACEMENT_HOSTS.c.placement_id == PLACEMENTS.c.id)
        .where(PLACEMENT_HOSTS.c.host_id == host_id, PLACEMENTS.c.released_at.is_(None))
        .order_by(PLACEMENT_HOSTS.c.generation, PLACEMENTS.c.created_at, PLACEMENTS.c.id)
    ).all()
    return [
        (placement_id, config)
        for placement_id, configurations in rows
        for config in map(VmConfiguration.model_validate, configurations)
        if config.host == host_id
    ]


def generation_if_same(conn: Connection, host_id: str, reported: str) -> int | None:
    """The host's generation if its stored report equals `reported` (compared as JSON values:
    PostgreSQL's jsonb does not keep the text), else None."""
    row = conn.execute(
        select(HOSTS.c.chd, HOSTS.c.generation).where(HOSTS.c.id == host_id)
    ).one_or_none()
    if row is None or row.chd != json.loads(reported):
        return None
    return int(row.generation)


def conflict_rows(
    live: Sequence[tuple[str, VmConfiguration]],
    derived: Sequence[tuple[VmConfiguration, Issue]],
) -> tuple[dict[str, str], ...]:
    """What a report no longer supports, as the answer lists it (placement, instance, path,
    message)."""
    placement_of = {config.owner: placement_id for placement_id, config in live}
    return tuple(
        {
            "placement": placement_of[config.owner],
            "instance": config.owner,
            "path": issue.path,
            "message": issue.message,
        }
        for config, issue in derived
    )
