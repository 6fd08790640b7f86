"""The Kubernetes door's assumed pods seen running: when, and on which of their node's counts.

A pod the pod watch sees running (its kubelet admitted it) used to stop being assumed
`--nrt-interval` seconds later, whatever nfvplace had read of its node meanwhile. When nfvplace
read the node's NodeResourceTopology late (a loaded machine, a watch listing again), the pod was
counted nowhere for a while, and a pod bound there in that while could be refused by the kubelet.
It now stops being assumed once that time has passed AND its node's NodeResourceTopology has been
reconciled at a newer generation than the one the pod was decided on:

- `assumed_generation`: the node's generation the pod was decided (and assumed) on;
- `running_until`: when the pod, seen running, stops being assumed at the earliest.

Both are empty for the rows already stored (which end at `running_until` as before).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "k8s_assumed_pods", sa.Column("running_until", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column(
        "k8s_assumed_pods", sa.Column("assumed_generation", sa.BigInteger(), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("k8s_assumed_pods", "assumed_generation")
    op.drop_column("k8s_assumed_pods", "running_until")
