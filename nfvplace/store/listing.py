"""Reading the live placements (for the web view): newest first, optionally only those on one host."""

from __future__ import annotations

from sqlalchemy import select

from .repository import PLACEMENT_HOSTS, PLACEMENTS, PlacementRecord, Store, _placement


def live_placements(
    store: Store, *, host: str | None = None, limit: int = 500
) -> list[PlacementRecord]:
    """Live (unreleased) placements, newest first; with `host`, only those holding resources there."""
    query = select(PLACEMENTS).where(PLACEMENTS.c.released_at.is_(None))
    if host is not None:
        on_host = select(PLACEMENT_HOSTS.c.placement_id).where(PLACEMENT_HOSTS.c.host_id == host)
        query = query.where(PLACEMENTS.c.id.in_(on_host))
    query = query.order_by(PLACEMENTS.c.created_at.desc(), PLACEMENTS.c.id).limit(limit)
    with store.engine.connect() as conn:
        return [_placement(row) for row in conn.execute(query).mappings()]
