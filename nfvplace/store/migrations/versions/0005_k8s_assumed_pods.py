"""The Kubernetes extender's assumed pods, its view of each node, and its one-row lock.

- `k8s_assumed_pods`: a pod the extender admitted (by UID), with what it would take on each node
  it was admitted on, until the node's NodeResourceTopology shows it, the pod is gone, or it
  expires; every worker and replica counts them in its next answers.
- `k8s_node_views`: per node, the host generation and free counts the extender last saw.
- `k8s_lock`: updated first by every filter call, so that decisions are taken one at a time.

Revision ID: 0005
Revises: 0003
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "k8s_assumed_pods",
        sa.Column("uid", sa.String(128), nullable=False),
        sa.Column("pod", sa.String(512), nullable=False),
        sa.Column("nodes", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("uid", name="pk_k8s_assumed_pods"),
    )
    op.create_index("ix_k8s_assumed_pods_expires_at", "k8s_assumed_pods", ["expires_at"])
    op.create_table(
        "k8s_node_views",
        sa.Column("node", sa.String(255), nullable=False),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.Column("free", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("node", name="pk_k8s_node_views"),
    )
    op.create_table(
        "k8s_lock",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_k8s_lock"),
    )
    op.execute("INSERT INTO k8s_lock (id, seq) VALUES (1, 0)")


def downgrade() -> None:
    op.drop_table("k8s_lock")
    op.drop_table("k8s_node_views")
    op.drop_index("ix_k8s_assumed_pods_expires_at", table_name="k8s_assumed_pods")
    op.drop_table("k8s_assumed_pods")
