"""PostgreSQL: a function that fails a transaction whose compare-and-swap changed no row.

A placement's commit travels to PostgreSQL in pipeline mode (`store/steps.py`). Its guarded steps
(the hosts' compare-and-swap, the hugepage counters) were checked by the client, one round trip
before the rest was sent. Wrapped in `nfvplace_one_row`, they are checked by the server: a row
count other than one raises SQLSTATE NV001 with the given message, the transaction is aborted and
PostgreSQL skips the rest of the pipeline. SQLite checks row counts in process: nothing changes there.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        """
        CREATE OR REPLACE FUNCTION nfvplace_one_row(matched bigint, stale text) RETURNS integer
        LANGUAGE plpgsql AS $$
        BEGIN
            IF matched <> 1 THEN
                RAISE EXCEPTION USING ERRCODE = 'NV001', MESSAGE = stale;
            END IF;
            RETURN 1;
        END
        $$
        """
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS nfvplace_one_row(bigint, text)")
