"""A node's baseline remembers when a pod was last seen leaving it.

A pod seen running stopped being assumed `--nrt-interval` after, once its node's
NodeResourceTopology had been read at a newer generation than it was decided on. That newer
object can come from counts the exporter read before the kubelet admitted the pod; when the update
that shows the pod is late (a loaded machine), the pod was counted nowhere, and a bind passed the
NUMA node the kubelet had given it. The timer is only needed where a departure can hide an
arrival from the node's totals: `k8s_node_views.left_generation` is the node's stored generation
when the pod watch last saw a pod leave it, and the timer ends only the pods decided at or before
that generation. Rows already stored have none: their pods end by their node's totals.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("k8s_node_views", sa.Column("left_generation", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("k8s_node_views") as batch:
        batch.drop_column("left_generation")
