"""PostgreSQL keeps the stored documents as `json` (their text), compressed with lz4 where it can.

The store never queries inside a document: it writes a host's availability on every placement and
reads it back whole. As `jsonb`, every write parsed the document into PostgreSQL's binary form and
compressed it with pglz, and every read printed it back: about 0.7 ms of the server's CPU per
placement on a 10 KB host. `json` keeps the text as given (checked, not converted); lz4 compresses it
several times faster than pglz. SQLite stores JSON as text already: nothing changes there.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

DOCUMENTS = {
    "hosts": ("chd", "available"),
    "placements": ("response", "configurations", "descriptor"),
}


def _lz4() -> bool:
    """Whether this server was built with lz4 (PostgreSQL 14 and newer, `--with-lz4`)."""
    found = op.get_bind().exec_driver_sql(
        "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
        "AND 'lz4' = ANY(enumvals)"
    )
    return found.first() is not None


def _retype(kind: str, compression: str | None) -> None:
    for table, columns in DOCUMENTS.items():
        for column in columns:
            op.execute(
                f"ALTER TABLE {table} ALTER COLUMN {column} TYPE {kind} USING {column}::{kind}"
            )
            if compression is not None:
                op.execute(
                    f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION {compression}"
                )


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _retype("json", "lz4" if _lz4() else None)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _retype("jsonb", "pglz" if _lz4() else None)
