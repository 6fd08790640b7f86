"""A node's baseline keeps its last NodeResourceTopology whose pod fingerprint matched no pod set.

An exporter's object and the pod watch's events race: an object written after a pod left can be
read before the pod watch has seen it leave, and its fingerprint then matches no set of the pods
known on the node. The node fell back to its totals and the timer, and nothing read that object
again. Its fingerprint and free totals are now kept (`k8s_node_views.unmatched`, with the
generation the row already holds) until a newer object comes or the pod watch records a change on
that node, which matches it again (`AssumedPods.rematch`): the late pod event resolves it.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("k8s_node_views", sa.Column("unmatched", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("k8s_node_views") as batch:
        batch.drop_column("unmatched")
