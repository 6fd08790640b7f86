"""Retention of released placements and the readiness probe's row.

- `ix_placements_released_at`: released placements are pruned after `--keep-released`, in small
  batches picked by `released_at` (without the index each batch scanned every placement).
- `readiness_probe`: one row that `/readyz` writes (at most every few seconds per worker) to learn
  that the database still accepts a write: a full disk or a read-only database answers 503 there,
  not only on the next placement. A table of its own, so that the probe never waits on the change
  counter that every commit holds.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_placements_released_at", "placements", ["released_at"])
    op.create_table(
        "readiness_probe",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("probed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_readiness_probe"),
    )
    op.execute("INSERT INTO readiness_probe (id) VALUES (1)")


def downgrade() -> None:
    op.drop_table("readiness_probe")
    op.drop_index("ix_placements_released_at", table_name="placements")
