"""The pods the Kubernetes door's pod watch saw leave a node that no NodeResourceTopology of it
has shown gone yet.

Churn deletes pods and creates others at once: kube-scheduler asks about the new pods before the
exporter's next object shows the departures, and nfvplace answered from counts that still held the
departed pods: the node looked full, the pod was "unresolvable", and kube-scheduler parked it
waiting for a cluster event that the object's update is not (20 pods Pending beside room). The pod
watch runs in one worker; filter is answered by every worker and replica: each departure is kept
here (`k8s_departed_pods`: the pod, its node, what it took, when it left) until an object of the
node shows it gone, and filter answers "retry" where that room would take the pod.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "k8s_departed_pods",
        sa.Column("uid", sa.String(128), nullable=False),
        sa.Column("node", sa.String(255), nullable=False),
        sa.Column("pod", sa.String(512), nullable=False),
        sa.Column("takes", sa.JSON(), nullable=False),
        sa.Column("left_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("uid", name="pk_k8s_departed_pods"),
    )
    op.create_index("ix_k8s_departed_pods_node", "k8s_departed_pods", ["node"])


def downgrade() -> None:
    op.drop_index("ix_k8s_departed_pods_node", "k8s_departed_pods")
    op.drop_table("k8s_departed_pods")
