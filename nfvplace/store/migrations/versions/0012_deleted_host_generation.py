"""A deleted host's generation, so that a host created again under its id goes on from there.

Readers keep hosts parsed, counted and decided on by (id, generation): the Kubernetes door's
nodes, its decisions, the service's parsed hosts. A host deleted and created again restarted at
generation 1, so a generation could name two versions of one host (a NodeResourceTopology object
deleted and created again, with other counts), and a reader could answer from the old one.
`generation` is the generation the host was deleted at (empty for the rows already stored: those
hosts start again at 1, as before).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("deleted_hosts", sa.Column("generation", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column("deleted_hosts", "generation")
