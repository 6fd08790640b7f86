"""Persistent inventory of hosts and placements (SQLAlchemy 2 + Alembic; SQLite or PostgreSQL)."""

from .db import default_url, make_engine, migrate, normalise_url
from .repository import (
    HostInUseError,
    HostPut,
    HostRecord,
    IdempotentReplayError,
    PlacementRecord,
    Snapshot,
    StaleSnapshot,
    Store,
)

__all__ = [
    "HostInUseError",
    "HostPut",
    "HostRecord",
    "IdempotentReplayError",
    "PlacementRecord",
    "Snapshot",
    "StaleSnapshot",
    "Store",
    "default_url",
    "make_engine",
    "migrate",
    "normalise_url",
]
