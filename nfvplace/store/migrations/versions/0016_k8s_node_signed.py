"""A node's baseline says whether its last NodeResourceTopology told which pods it shows.

A pod seen running stopped being assumed `--nrt-interval` after, once its node's
NodeResourceTopology had been read at a newer generation than it was decided on. That newer
object can come from counts the exporter read before the kubelet admitted the pod; when the update
that shows the pod is late (a loaded machine), the pod was counted nowhere, and a bind passed the
NUMA node the kubelet had given it. Exporters that publish the pods' fingerprint
(`nodeTopologyPodsFingerprint`) say exactly which pods their counts show: where the node's last
object matched the pods nfvplace knows there (`k8s_node_views.signed`), only such an object ends
a pod's assumption, and the timer does not. Rows already stored are unsigned: the timer applies
until their node's next object.

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
    op.add_column(
        "k8s_node_views",
        sa.Column("signed", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    with op.batch_alter_table("k8s_node_views") as batch:
        batch.drop_column("signed")
