"""A host's availability as of its generation: the stored document, with the placements committed
since it was written claimed on it.

A placement's commit writes claim rows and bumps its hosts' generations, never their availability
documents (rewriting a host's whole document was half of a commit's cost, and grew with every VM on
the host). `hosts.available` is exact as of `hosts.available_generation`; each placement's
`placement_hosts.generation` is the host generation its commit made. So a host read at generation
`g` is its stored document with the placements of generations in (`available_generation`, `g`]
claimed, in commit order: what the commits of before wrote, claim by claim. Reports, releases and
write-backs (`write_back`, `catch_up`) write the document whole again.

A release between reading a host and reading its recent placements can only make the answer show
that placement's resources free, at the generation before the release: any commit decided on it
fails its compare-and-swap, and the change feed has the host read again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from itertools import batched
from typing import Any

from sqlalchemy import Connection, Engine, Text, bindparam, select, update
from sqlalchemy import cast as sql_cast

from ..claims import claim_all
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from . import db
from .records import CONFIGURATIONS, HOSTS, PLACEMENT_HOSTS, PLACEMENTS, chd_json, utc_now


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


def since(conn: Connection, hosts: Sequence[StoredHost]) -> dict[str, list[VmConfiguration]]:
    """The configurations committed on each host of `hosts` after its stored document and up to
    the generation read, in commit order (nothing for hosts whose document is exact)."""
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
    out: dict[str, list[VmConfiguration]] = defaultdict(list)
    for host_id, generation, configurations in conn.execute(query):
        host = behind[host_id]
        if host.available_generation < generation <= host.generation:
            out[host_id].extend(
                c for c in CONFIGURATIONS.validate_json(configurations) if c.host == host_id
            )
    return out


def current(host: StoredHost, recent: Sequence[VmConfiguration]) -> ComputeHostDescriptor:
    """`host`'s availability at its generation: its document with `recent` claimed (each was
    checked against the claim rows when it committed, so none conflicts)."""
    return claim_all(ComputeHostDescriptor.model_validate_json(host.available), recent)[0]


def read_current(
    conn: Connection, hosts: Sequence[StoredHost]
) -> Iterator[tuple[StoredHost, ComputeHostDescriptor]]:
    """Each host of `hosts` with its availability at the generation read, parsed one at a time;
    given a list no one else keeps, each host's JSON is dropped as soon as it is parsed (a
    worker's index streams every host through here)."""
    recent = since(conn, hosts)
    pending = list(reversed(hosts))
    del hosts
    while pending:
        host = pending.pop()
        yield host, current(host, recent.get(host.id, ()))


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
        values = [{"b_id": h, "b_seen": g, "b_available": chd_json(chd)} for h, g, chd in batch]
        with db.transaction(engine) as conn:
            written += sum(conn.execute(WRITE_BACK, row).rowcount for row in values)
    return written


def catch_up(engine: Engine, limit: int, quiet_s: float) -> int:
    """Write back the availability of up to `limit` hosts whose document is behind and that no
    commit touched for `quiet_s` (the workers write back what they committed from their own
    index; this is for the rest, such as the hosts of a worker that died), replaying what was
    committed since; how many were written."""
    quiet = utc_now() - timedelta(seconds=quiet_s)
    with engine.connect() as conn:
        rows = conn.execute(
            select(*HOST_STATE)
            .where(HOSTS.c.available_generation < HOSTS.c.generation, HOSTS.c.updated_at < quiet)
            .order_by(HOSTS.c.id)
            .limit(limit)
        ).all()
        fresh = [(h.id, h.generation, chd) for h, chd in read_current(conn, stored_hosts(rows))]
    return write_back(engine, fresh)
