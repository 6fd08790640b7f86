"""Placements commit claim rows only: a host's availability is brought up to date on read.

A placement's commit used to rewrite its hosts' whole availability document (10 KB and more, and
growing with every VM on the host): half of a commit's cost on SQLite. Now it bumps the host's
generation and writes its own rows, and the availability is kept as of an older generation:

- `hosts.available_generation`: the generation `available` is exact for. When it is below
  `generation`, readers claim on it the placements committed since (see `store/current.py`), and
  the service's upkeep writes the result back now and then.
- `placement_hosts.generation`: the host generation a placement's commit created, which tells the
  placements committed since `available_generation` from those `available` holds already.

Existing rows: every availability is exact (`available_generation` = `generation`), and every
placement is in it (`placement_hosts.generation` 0).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("hosts") as batch:
        batch.add_column(
            sa.Column("available_generation", sa.BigInteger(), nullable=False, server_default="0")
        )
    op.execute("UPDATE hosts SET available_generation = generation")
    with op.batch_alter_table("placement_hosts") as batch:
        batch.add_column(
            sa.Column("generation", sa.BigInteger(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("placement_hosts") as batch:
        batch.drop_column("generation")
    with op.batch_alter_table("hosts") as batch:
        batch.drop_column("available_generation")
