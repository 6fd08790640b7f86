"""A host's availability: its report with its live placements claimed, derived (`derive`), read at
a generation (`read_availability`), and the one writer of the stored document that caches it
(`write_back`).

A host's availability at generation `g` is a function of what the store keeps as facts: its report
(`hosts.chd`) with its live placements claimed in commit order (`derive`: placements the report
already shows, see `claims.holders`, are released from it once, since their hugepages, memory and
bandwidth are in what the agent counts as used; what no longer fits is a conflict). Computing
that for every read would parse every placement on the host, so `hosts.available` caches it, exact
as of `hosts.available_generation`, and a reader brings it up to date:

- **commits only since the document** (the usual case): each commit of a live placement moved the
  host on by one generation and wrote a `placement_hosts` row with the generation it made. When the
  rows in (`available_generation`, `g`] are `g - available_generation`, the document with those
  placements claimed in order is the host at `g`;
- **anything else since** (a report, a release: a generation with no live commit row, since a
  release deletes its placement's rows): the host is derived again from its report and the live
  placements it had at `g`.

One function writes `hosts.available`, `write_back`, and only ever forward: a document exact at
`g` replaces the stored one only when that is older and the host has reached `g`. Its sources: a
worker's index (what it committed, every 0.5 s); a report, in its transaction (it derives the
host there for its answer); `fold`, a release right after its transaction (which then holds the
host's lock for no derivation) and the upkeep's catch-up of hosts no worker wrote back. A release
whose fold never ran (the process died between) loses nothing: readers derive the host again until
a later fold. A new host's row starts with its report as the document, exact at generation 1 (it
holds no placement yet).

A release between reading a host and reading its placements can only make the answer show that
placement's resources free, at the generation before the release: any commit decided on it fails
its compare-and-swap, and the change feed has the host read again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from itertools import batched
from typing import Any

from sqlalchemy import Connection, Engine, Text, bindparam, select, update
from sqlalchemy import cast as sql_cast

from ..claims import claim_all, claim_what_fits, holders, release
from ..errors import Issue
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from . import db
from .records import CONFIGURATIONS, HOSTS, PLACEMENT_HOSTS, PLACEMENTS, chd_json, utc_now


@dataclass(frozen=True)
class Derived:
    base: ComputeHostDescriptor  # the report without the store's own placements
    availability: ComputeHostDescriptor  # base with every live placement claimed
    conflicts: tuple[tuple[VmConfiguration, Issue], ...]


def derive(reported: ComputeHostDescriptor, live: Sequence[VmConfiguration]) -> Derived:
    """`reported` with the live configurations (in the order given) claimed, each counted once."""
    base = reported
    shown = holders(reported)
    for config in live:
        if config.owner in shown:
            base = release(base, config)
    availability = base
    conflicts: list[tuple[VmConfiguration, Issue]] = []
    for config in live:
        availability, issues = claim_what_fits(availability, config)
        conflicts.extend((config, issue) for issue in issues)
    return Derived(base, availability, tuple(conflicts))


def as_text(column: Any) -> Any:
    """A JSON column read as its text (SQLite keeps text; PostgreSQL prints its `json`)."""
    return sql_cast(column, Text)


# what a reader takes of a host: its availability as text, and what tells whether it is exact
HOST_STATE = (
    HOSTS.c.id,
    HOSTS.c.generation,
    HOSTS.c.available_generation,
    as_text(HOSTS.c.available),
)


@dataclass(frozen=True, slots=True)
class StoredHost:
    id: str
    generation: int
    available_generation: int  # `available` is exact as of this generation
    available: str  # JSON text

    @property
    def exact(self) -> bool:
        return self.available_generation >= self.generation


def stored_hosts(rows: Iterable[Sequence[Any]]) -> list[StoredHost]:
    """Rows of `HOST_STATE` as `StoredHost`s."""
    return [StoredHost(str(r[0]), int(r[1]), int(r[2]), str(r[3])) for r in rows]


@dataclass(slots=True)
class Since:
    """What happened to a host after its stored document, up to the generation read: the
    configurations its live commits claimed, in order, and how many generations they made."""

    configs: list[VmConfiguration] = field(default_factory=list)
    commits: int = 0


@dataclass(frozen=True, slots=True)
class Rebuild:
    """What a host is derived from again: its report (JSON text) and its live placements at the
    generation read, in commit order."""

    report: str
    live: list[VmConfiguration]


def since(conn: Connection, hosts: Sequence[StoredHost]) -> dict[str, Since]:
    """What was committed on each host of `hosts` after its stored document and up to the
    generation read, in commit order (nothing for hosts whose document is exact)."""
    behind = {h.id: h for h in hosts if not h.exact}
    if not behind:
        return {}
    # one IN list, not one condition per host (SQLite bounds an expression's depth); rows outside
    # a host's window are skipped before their configurations are parsed
    query = (
        select(
            PLACEMENT_HOSTS.c.host_id,
            PLACEMENT_HOSTS.c.generation,
            as_text(PLACEMENTS.c.configurations),
        )
        .join(PLACEMENTS, PLACEMENTS.c.id == PLACEMENT_HOSTS.c.placement_id)
        .where(
            PLACEMENT_HOSTS.c.host_id.in_(sorted(behind)),
            PLACEMENT_HOSTS.c.generation > min(h.available_generation for h in behind.values()),
        )
        .order_by(PLACEMENT_HOSTS.c.host_id, PLACEMENT_HOSTS.c.generation)
    )
    out: dict[str, Since] = defaultdict(Since)
    for host_id, generation, configurations in conn.execute(query):
        host = behind[host_id]
        if host.available_generation < generation <= host.generation:
            found = out[host_id]
            found.commits += 1
            found.configs.extend(
                c for c in CONFIGURATIONS.validate_json(configurations) if c.host == host_id
            )
    return out


def rebased(hosts: Sequence[StoredHost], recent: dict[str, Since]) -> list[StoredHost]:
    """The hosts of `hosts` that changed otherwise than by commits since their document (a
    generation no live commit made: a report, a release)."""
    return [
        h
        for h in hosts
        if not h.exact and recent.get(h.id, Since()).commits < h.generation - h.available_generation
    ]


def rebuilds(conn: Connection, hosts: Sequence[StoredHost]) -> dict[str, Rebuild]:
    """Each host's report and its live placements up to the generation read, in commit order."""
    if not hosts:
        return {}
    read = {h.id: h for h in hosts}
    ids = sorted(read)
    query = select(HOSTS.c.id, as_text(HOSTS.c.chd)).where(HOSTS.c.id.in_(ids))
    reports = {str(h): str(report) for h, report in conn.execute(query)}
    live: dict[str, list[VmConfiguration]] = defaultdict(list)
    rows = conn.execute(
        select(
            PLACEMENT_HOSTS.c.host_id,
            PLACEMENT_HOSTS.c.generation,
            as_text(PLACEMENTS.c.configurations),
        )
        .join(PLACEMENTS, PLACEMENTS.c.id == PLACEMENT_HOSTS.c.placement_id)
        .where(PLACEMENT_HOSTS.c.host_id.in_(ids), PLACEMENTS.c.released_at.is_(None))
        .order_by(
            PLACEMENT_HOSTS.c.host_id,
            PLACEMENT_HOSTS.c.generation,
            PLACEMENTS.c.created_at,
            PLACEMENTS.c.id,
        )
    )
    for host_id, generation, configurations in rows:
        if generation <= read[host_id].generation:
            live[host_id].extend(
                c for c in CONFIGURATIONS.validate_json(configurations) if c.host == host_id
            )
    return {h: Rebuild(reports[h], live[h]) for h in ids if h in reports}


def availability_at(
    host: StoredHost, recent: Since | None, rebuild: Rebuild | None = None
) -> ComputeHostDescriptor:
    """`host`'s availability at its generation: derived again from `rebuild` where given, else
    its document with the configurations committed since claimed (each was checked against the
    claim rows when it committed, so none conflicts)."""
    if rebuild is not None:
        report = ComputeHostDescriptor.model_validate_json(rebuild.report)
        return derive(report, rebuild.live).availability
    document = ComputeHostDescriptor.model_validate_json(host.available)
    return document if recent is None else claim_all(document, recent.configs)[0]


def committed_since(
    conn: Connection, known: Mapping[str, int]
) -> dict[str, tuple[int, list[VmConfiguration]]]:
    """For each host of `known` (host -> a generation the caller holds it at, exactly) whose every
    generation since was made by a live commit: its generation now and the configurations those
    commits claimed on it, in order. Claimed on the caller's copy, they give the host at that
    generation, as a read of its document would (`read_availability`), without parsing the
    document or replaying the commits before the caller's generation. The other hosts (a report,
    a release since, or a host gone) are left out: the caller reads them whole."""
    rows = conn.execute(select(HOSTS.c.id, HOSTS.c.generation).where(HOSTS.c.id.in_(sorted(known))))
    hosts = [StoredHost(str(h), int(g), known[h], "") for h, g in rows if int(g) >= known[h]]
    recent = since(conn, hosts)
    out: dict[str, tuple[int, list[VmConfiguration]]] = {}
    for host in hosts:
        found = recent.get(host.id, Since())
        if found.commits == host.generation - host.available_generation:
            out[host.id] = (host.generation, found.configs)
    return out


def read_availability(
    conn: Connection, hosts: Sequence[StoredHost]
) -> Iterator[tuple[StoredHost, ComputeHostDescriptor]]:
    """Each host of `hosts` with its availability at the generation read, parsed one at a time;
    given a list no one else keeps, each host's JSON is dropped as soon as it is parsed (a
    worker's index streams every host through here)."""
    recent = since(conn, hosts)
    again = rebuilds(conn, rebased(hosts, recent))
    pending = list(reversed(hosts))
    del hosts
    while pending:
        host = pending.pop()
        yield host, availability_at(host, recent.get(host.id), again.pop(host.id, None))


# The only statement that writes a host's availability document (tests/test_architecture.py)
WRITE_BACK = (
    update(HOSTS)
    .where(
        HOSTS.c.id == bindparam("b_id"),
        HOSTS.c.generation >= bindparam("b_seen"),
        HOSTS.c.available_generation < bindparam("b_seen"),
    )
    .values(available=bindparam("b_available"), available_generation=bindparam("b_seen"))
)


WRITE_BACK_BATCH = 8  # hosts per transaction: a commit waits for the write lock a short while


def write_back(engine: Engine, documents: Iterable[tuple[str, int, ComputeHostDescriptor]]) -> int:
    """Store each host's availability `(id, generation, document)` as exact at that generation,
    where the host's stored document is older (a document exact at any generation up to the
    host's is one: readers claim what was committed after it); how many were written. Never the
    host's generation: nothing changes for readers. One short transaction per `WRITE_BACK_BATCH`
    hosts (one a host took 1.5 times the CPU per host)."""
    written = 0
    for batch in batched(documents, WRITE_BACK_BATCH):
        with db.transaction(engine) as conn:
            written += write_back_on(conn, batch)
    return written


def write_back_on(
    conn: Connection, documents: Iterable[tuple[str, int, ComputeHostDescriptor]]
) -> int:
    """`write_back` in the transaction of `conn` (a report's, which derived the document under the
    host's lock already: a transaction of its own would cost another commit)."""
    rows: list[Mapping[str, Any]] = [
        {"b_id": h, "b_seen": g, "b_available": chd_json(chd)} for h, g, chd in documents
    ]
    if conn.dialect.name == "sqlite" and rows:  # the driver's cursor, as a commit's statements
        return db.run_on_driver(conn, WRITE_BACK, rows)
    return sum(conn.execute(WRITE_BACK, row).rowcount for row in rows)


def fold(engine: Engine, host_ids: Collection[str]) -> int:
    """Write back the availability of `host_ids` as it is now (after a report or a release, or
    for the catch-up); how many were written."""
    if not host_ids:
        return 0
    with engine.connect() as conn:
        rows = conn.execute(
            select(*HOST_STATE).where(HOSTS.c.id.in_(sorted(host_ids))).order_by(HOSTS.c.id)
        ).all()
        documents = [
            (h.id, h.generation, chd) for h, chd in read_availability(conn, stored_hosts(rows))
        ]
    return write_back(engine, documents)


def catch_up(engine: Engine, limit: int, quiet_s: float) -> int:
    """Fold up to `limit` hosts whose document is behind and that no commit touched for `quiet_s`
    (the workers write back what they committed from their own index; this is for the rest, such
    as the hosts of a worker that died); how many were written."""
    quiet = utc_now() - timedelta(seconds=quiet_s)
    with engine.connect() as conn:
        ids = conn.execute(
            select(HOSTS.c.id)
            .where(HOSTS.c.available_generation < HOSTS.c.generation, HOSTS.c.updated_at < quiet)
            .order_by(HOSTS.c.id)
            .limit(limit)
        ).scalars()
        behind = list(ids)
    return fold(engine, behind)
