"""The Kubernetes door's assumed pods carry the change number that last wrote them.

Filter and prioritize read the assumed pods of the nodes they are asked about; over more than a
few hundred nodes that was every pod assumed in the cluster, parsed again on every call (a burst
of thousands of assumed pods cost tens of milliseconds a call). Each worker now keeps them parsed
(`store/assumed_cache.py`) and reads only what changed since the change number it kept: every
write of the assumed pods bumps `k8s_lock.seq` and stamps what it wrote with it
(`k8s_assumed_pods.change_seq`, `k8s_node_views.change_seq`), and a pod forgotten leaves a row in
`k8s_assumed_gone` at that number. Those rows are pruned now and then; `k8s_lock.gone_below` says
below which number they may be missing (a worker kept further behind reads every pod again).
Rows already stored have no number: a worker's first read reads every pod.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("k8s_assumed_pods", sa.Column("change_seq", sa.BigInteger(), nullable=True))
    op.create_index("ix_k8s_assumed_pods_change_seq", "k8s_assumed_pods", ["change_seq"])
    op.add_column("k8s_node_views", sa.Column("change_seq", sa.BigInteger(), nullable=True))
    op.create_index("ix_k8s_node_views_change_seq", "k8s_node_views", ["change_seq"])
    op.add_column(
        "k8s_lock",
        sa.Column("gone_below", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.create_table(
        "k8s_assumed_gone",
        sa.Column("change_seq", sa.BigInteger(), nullable=False),
        sa.Column("uid", sa.String(128), nullable=False),
        sa.PrimaryKeyConstraint("change_seq", "uid", name="pk_k8s_assumed_gone"),
    )


def downgrade() -> None:
    op.drop_table("k8s_assumed_gone")
    with op.batch_alter_table("k8s_lock") as batch:
        batch.drop_column("gone_below")
    op.drop_index("ix_k8s_node_views_change_seq", "k8s_node_views")
    op.drop_column("k8s_node_views", "change_seq")
    op.drop_index("ix_k8s_assumed_pods_change_seq", "k8s_assumed_pods")
    op.drop_column("k8s_assumed_pods", "change_seq")
