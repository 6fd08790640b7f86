"""Placements commit claim rows only: a host's availability is brought up to date on read.

A placement's commit used to rewrite its hosts' whole availability document (10 KB and more, and
growing with every VM on the host): half of a commit's cost on SQLite. Now it bumps the host's
generation and writes its own rows, and the availability is kept as of an older generation:

- `hosts.available_generation`: the generation `available` is exact for. When it is below
  `generation`, readers claim on it the placements committed since (see `store/availability.py`), and
  the service's upkeep writes the result back now and then.
- `placement_hosts.generation`: the host generation a placement's commit created, which tells the
  placements committed since `available_generation` from those `available` holds already.

Existing rows: every availability is exact (`available_generation` = `generation`), and every
placement is in it (`placement_hosts.generation` 0). A downgrade first writes every document that
is behind up to date, since the revisions before this one read `available` as exact.

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
    # the revisions before this one read `available` as exact: bring every document up to date
    # (the placements committed since claimed on it) before the columns that say otherwise go
    from nfvplace.store.availability import HOST_STATE, read_availability, stored_hosts
    from nfvplace.store.records import HOSTS, chd_json

    conn = op.get_bind()
    behind = conn.execute(
        sa.select(*HOST_STATE).where(HOSTS.c.available_generation < HOSTS.c.generation)
    ).all()
    for host, chd in read_availability(conn, stored_hosts(behind)):
        conn.execute(sa.update(HOSTS).where(HOSTS.c.id == host.id).values(available=chd_json(chd)))
    # plain ALTER TABLE ... DROP COLUMN (SQLite ≥ 3.35): a batch operation would copy and drop
    # `hosts`, which the foreign keys of the placements' tables refuse
    op.drop_column("placement_hosts", "generation")
    op.drop_column("hosts", "available_generation")
