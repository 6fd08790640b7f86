"""The Kubernetes door remembers the pods a NodeResourceTopology accounted for, for a while.

nfvplace's bind creates the pod's Binding under the door's lock, before its assumption is written:
the pod watch can see the pod bound before then, and wait for the lock behind the node's next
NodeResourceTopology. When that object shows the pod, its assumption ended (the row was deleted),
and the watch then assumed the pod again, counting it twice. An accounted pod's row now stays,
marked `accounted_at`, for a minute (or until its `expires_at`, if sooner): it counts no more, and
the watch knows the pod.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "k8s_assumed_pods", sa.Column("accounted_at", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("k8s_assumed_pods", "accounted_at")
