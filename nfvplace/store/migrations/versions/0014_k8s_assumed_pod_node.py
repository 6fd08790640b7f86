"""The Kubernetes door's assumed pods carry their node as a column of its own, indexed.

A bind decides on one node, and the pod watch and a NodeResourceTopology update touch one node,
but each read every assumed pod of the cluster (the node was only inside the `nodes` document):
with the pods of a burst assumed until the exporter's next objects show them, a bind cost a
millisecond or more per hundred pods assumed anywhere, under the door's lock. Rows already stored
get the node their document names.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-29
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("k8s_assumed_pods", sa.Column("node", sa.String(255), nullable=True))
    op.create_index("ix_k8s_assumed_pods_node", "k8s_assumed_pods", ["node"])
    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT uid, nodes FROM k8s_assumed_pods")).all()
    for uid, nodes in rows:
        document = json.loads(nodes) if isinstance(nodes, str | bytes) else nodes
        (node,) = document
        conn.execute(
            sa.text("UPDATE k8s_assumed_pods SET node = :node WHERE uid = :uid"),
            {"node": node, "uid": uid},
        )


def downgrade() -> None:
    op.drop_index("ix_k8s_assumed_pods_node", "k8s_assumed_pods")
    op.drop_column("k8s_assumed_pods", "node")
