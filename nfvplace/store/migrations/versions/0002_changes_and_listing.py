"""Change feed, placement listing and the VM Descriptor kept with each placement.

- `hosts.change_seq` and the one-row `change_counter`: every write that changes a host takes the next
  number of the counter (in commit order) so that each worker refreshes only the hosts changed since
  the number it last read; `deleted_hosts` keeps the number of each deletion.
- `placement_instances`: one row per VM Configuration of a live placement (host, VM name, owner), for
  `GET /v1/placements` and its filters.
- `placements.descriptor`: the VM Descriptor or VNF template the placement was made from (what
  rendering needs: VLANs, networks); `placements.name` its name.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("hosts") as batch:
        batch.add_column(
            sa.Column("change_seq", sa.BigInteger(), nullable=False, server_default="0")
        )
        batch.create_index("ix_hosts_change_seq", ["change_seq"])
    op.create_table(
        "change_counter",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_change_counter"),
    )
    op.execute("INSERT INTO change_counter (id, seq) VALUES (1, 0)")
    op.create_table(
        "deleted_hosts",
        sa.Column("host_id", sa.String(255), nullable=False),
        sa.Column("change_seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("host_id", name="pk_deleted_hosts"),
    )
    op.create_index("ix_deleted_hosts_change_seq", "deleted_hosts", ["change_seq"])
    with op.batch_alter_table("placements") as batch:
        batch.add_column(sa.Column("name", sa.String(255), nullable=True))
        batch.add_column(sa.Column("descriptor", JsonType, nullable=True))
    op.create_table(
        "placement_instances",
        sa.Column("placement_id", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(512), nullable=False),
        sa.Column("host_id", sa.String(255), nullable=False),
        sa.Column("vm", sa.String(255), nullable=False),
        sa.ForeignKeyConstraint(
            ["placement_id"],
            ["placements.id"],
            name="fk_placement_instances_placement_id_placements",
        ),
        sa.PrimaryKeyConstraint("placement_id", "owner", name="pk_placement_instances"),
    )
    op.create_index("ix_placement_instances_owner", "placement_instances", ["owner"])
    op.create_index("ix_placement_instances_host_id", "placement_instances", ["host_id"])
    op.create_index("ix_placement_instances_vm", "placement_instances", ["vm"])
    _backfill_instances()


def _backfill_instances() -> None:
    """One placement_instances row per configuration of every live placement made before."""
    placements = sa.table(
        "placements",
        sa.column("id", sa.String),
        sa.column("configurations", JsonType),
        sa.column("released_at", sa.DateTime),
    )
    instances = sa.table(
        "placement_instances",
        sa.column("placement_id", sa.String),
        sa.column("owner", sa.String),
        sa.column("host_id", sa.String),
        sa.column("vm", sa.String),
    )
    bind = op.get_bind()
    rows = []
    for placement_id, configurations in bind.execute(
        sa.select(placements.c.id, placements.c.configurations).where(
            placements.c.released_at.is_(None)
        )
    ):
        seen: set[str] = set()
        for config in configurations:
            owner = str(config.get("instance") or config["vm"])
            if owner not in seen:
                seen.add(owner)
                rows.append(
                    {
                        "placement_id": placement_id,
                        "owner": owner,
                        "host_id": config["host"],
                        "vm": config["vm"],
                    }
                )
    if rows:
        bind.execute(sa.insert(instances), rows)


def downgrade() -> None:
    op.drop_index("ix_placement_instances_vm", table_name="placement_instances")
    op.drop_index("ix_placement_instances_host_id", table_name="placement_instances")
    op.drop_index("ix_placement_instances_owner", table_name="placement_instances")
    op.drop_table("placement_instances")
    with op.batch_alter_table("placements") as batch:
        batch.drop_column("descriptor")
        batch.drop_column("name")
    op.drop_index("ix_deleted_hosts_change_seq", table_name="deleted_hosts")
    op.drop_table("deleted_hosts")
    op.drop_table("change_counter")
    with op.batch_alter_table("hosts") as batch:
        batch.drop_index("ix_hosts_change_seq")
        batch.drop_column("change_seq")
