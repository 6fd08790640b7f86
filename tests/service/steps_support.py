"""Steps, rows and a two-host store shared by the tests of store/steps.py and store/wire.py."""

from __future__ import annotations

import json
from collections.abc import Iterator

from service_hosts import host
from sqlalchemy import bindparam, insert, select, update

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.store import Store, db
from nfvplace.store.records import CLAIMS, HOSTS, PLACEMENTS, utc_now

MARK = update(HOSTS).where(HOSTS.c.id == bindparam("b_id")).values(change_seq=bindparam("b_seq"))
CLAIM = insert(CLAIMS).values(
    {c: bindparam(c) for c in ("placement_id", "host_id", "kind", "resource")}
)
PLACEMENT = insert(PLACEMENTS).values(
    id=bindparam("id"),
    request_hash="",
    response=bindparam("response"),
    configurations=bindparam("configurations"),
    created_at=bindparam("created_at"),
    name=bindparam("name", None),
)


def two_hosts(url: str) -> Iterator[Store]:
    """A store with hosts h1 and h2 (a fixture's body)."""
    opened = Store.open(url)
    for name in ("h1", "h2"):
        opened.put_host(ComputeHostDescriptor.model_validate(host(name)))
    yield opened
    opened.close()


def placement_row(pid: str) -> dict[str, object]:
    return {
        "id": pid,
        "response": db.JsonText(json.dumps({"id": pid})),
        "configurations": db.JsonText("[]"),
        "created_at": utc_now(),
    }


def claim_rows(pid: str, *resources: str) -> list[dict[str, str]]:
    return [{"placement_id": pid, "host_id": "h1", "kind": "pu", "resource": r} for r in resources]


def seqs(store: Store) -> dict[str, int]:
    with store.engine.connect() as conn:
        return dict(conn.execute(select(HOSTS.c.id, HOSTS.c.change_seq)).all())
