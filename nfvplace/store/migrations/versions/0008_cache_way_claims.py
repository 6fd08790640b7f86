"""Claim rows for L3 cache ways: two placements can no longer hold the same way of one cache.

The double-claim guard (the unique `claims` rows of `store/resources.py`) covered PUs, VFs,
dedicated ports and PCI devices; a cache way given to a cpu-set (Intel RDT CAT) had no row, so two
workers committing at once could both give a VM the same ways. Each way is now a row
(`cache_way`, "<cache id>/<way>"). Existing live placements get the rows of the ways they hold.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

KIND = "cache_way"


def _ways(configurations: Any) -> list[tuple[str, str]]:
    """(host, "<cache id>/<way>") of every cache way the stored configurations hold."""
    if isinstance(configurations, str):
        configurations = json.loads(configurations)
    rows = []
    for config in configurations or []:
        for cs in config.get("cpu_sets") or []:
            ways = cs.get("cache_ways")
            if ways:
                first = int(ways["first_way"])
                for way in range(first, first + int(ways["ways"])):
                    rows.append((str(config["host"]), f"{ways['domain']}/{way}"))
    return rows


def upgrade() -> None:
    conn = op.get_bind()
    placements = sa.table(
        "placements",
        sa.column("id", sa.String),
        sa.column("configurations", sa.JSON),
        sa.column("released_at", sa.DateTime),
    )
    claims = sa.table(
        "claims",
        sa.column("placement_id", sa.String),
        sa.column("host_id", sa.String),
        sa.column("kind", sa.String),
        sa.column("resource", sa.String),
    )
    live = conn.execute(
        sa.select(placements.c.id, placements.c.configurations).where(
            placements.c.released_at.is_(None)
        )
    )
    rows = [
        {"placement_id": pid, "host_id": host, "kind": KIND, "resource": way}
        for pid, configurations in live
        for host, way in _ways(configurations)
    ]
    if rows:
        conn.execute(sa.insert(claims), rows)


def downgrade() -> None:
    op.execute(f"DELETE FROM claims WHERE kind = '{KIND}'")
