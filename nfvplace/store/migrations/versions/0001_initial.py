"""Initial schema: hosts, placements, claims, hugepage counters.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

JsonType = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "hosts",
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("chd", JsonType, nullable=False),
        sa.Column("available", JsonType, nullable=False),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_hosts"),
    )
    op.create_table(
        "placements",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("idempotency_key", sa.String(255), nullable=True),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("response", JsonType, nullable=False),
        sa.Column("configurations", JsonType, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("released_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_placements"),
        sa.UniqueConstraint("idempotency_key", name="uq_placements_idempotency_key"),
    )
    op.create_table(
        "placement_hosts",
        sa.Column("placement_id", sa.String(64), nullable=False),
        sa.Column("host_id", sa.String(255), nullable=False),
        sa.ForeignKeyConstraint(
            ["placement_id"],
            ["placements.id"],
            name="fk_placement_hosts_placement_id_placements",
        ),
        sa.ForeignKeyConstraint(["host_id"], ["hosts.id"], name="fk_placement_hosts_host_id_hosts"),
        sa.PrimaryKeyConstraint("placement_id", "host_id", name="pk_placement_hosts"),
    )
    op.create_index("ix_placement_hosts_host_id", "placement_hosts", ["host_id"])
    op.create_table(
        "claims",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("placement_id", sa.String(64), nullable=False),
        sa.Column("host_id", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("resource", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(
            ["placement_id"], ["placements.id"], name="fk_claims_placement_id_placements"
        ),
        sa.ForeignKeyConstraint(["host_id"], ["hosts.id"], name="fk_claims_host_id_hosts"),
        sa.PrimaryKeyConstraint("id", name="pk_claims"),
        sa.UniqueConstraint("host_id", "kind", "resource", name="uq_claims_resource"),
    )
    op.create_index("ix_claims_placement_id", "claims", ["placement_id"])
    op.create_table(
        "hugepage_pools",
        sa.Column("host_id", sa.String(255), nullable=False),
        sa.Column("numa_node", sa.Integer(), nullable=False),
        sa.Column("size_kib", sa.BigInteger(), nullable=False),
        sa.Column("capacity", sa.BigInteger(), nullable=False),
        sa.Column("claimed", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["host_id"], ["hosts.id"], name="fk_hugepage_pools_host_id_hosts"),
        sa.PrimaryKeyConstraint("host_id", "numa_node", "size_kib", name="pk_hugepage_pools"),
    )
    op.create_table(
        "hugepage_claims",
        sa.Column("placement_id", sa.String(64), nullable=False),
        sa.Column("host_id", sa.String(255), nullable=False),
        sa.Column("numa_node", sa.Integer(), nullable=False),
        sa.Column("size_kib", sa.BigInteger(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["placement_id"],
            ["placements.id"],
            name="fk_hugepage_claims_placement_id_placements",
        ),
        sa.ForeignKeyConstraint(["host_id"], ["hosts.id"], name="fk_hugepage_claims_host_id_hosts"),
        sa.PrimaryKeyConstraint(
            "placement_id", "host_id", "numa_node", "size_kib", name="pk_hugepage_claims"
        ),
    )


def downgrade() -> None:
    op.drop_table("hugepage_claims")
    op.drop_table("hugepage_pools")
    op.drop_index("ix_claims_placement_id", table_name="claims")
    op.drop_table("claims")
    op.drop_index("ix_placement_hosts_host_id", table_name="placement_hosts")
    op.drop_table("placement_hosts")
    op.drop_table("placements")
    op.drop_table("hosts")
