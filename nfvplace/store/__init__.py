"""Persistent inventory of hosts and placements (SQLAlchemy 2 + Alembic; SQLite or PostgreSQL)."""

from .db import default_url, make_engine, migrate, normalise_url
from .records import (
    Changes,
    HostInUseError,
    HostPut,
    HostRecord,
    IdempotentReplayError,
    PlacementPage,
    PlacementRecord,
    Snapshot,
    StaleSnapshot,
    WriteLockBusyError,
)
from .repository import Store

__all__ = [
    "Changes",
    "HostInUseError",
    "HostPut",
    "HostRecord",
    "IdempotentReplayError",
    "PlacementPage",
    "PlacementRecord",
    "Snapshot",
    "StaleSnapshot",
    "Store",
    "WriteLockBusyError",
    "default_url",
    "make_engine",
    "migrate",
    "normalise_url",
]
