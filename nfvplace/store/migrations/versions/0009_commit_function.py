"""PostgreSQL: a placement's commit as one server-side function, called once per commit.

A placement's commit writes about ten statements: each touched host's compare-and-swap, the
placement, its hosts, its instances, its claim rows, the hugepage counters and the placement's
page claims. They were sent in libpq's pipeline mode, driven by the project itself (prepared
statements, parameters as text, results matched by hand). `nfvplace_commit_placement` writes them
all in the server, in the same order: the client sends one call, through
psycopg's ordinary API: the placement's columns, then its other rows as one JSON document
(`p_rows`: `swaps`, `instances`, `claims` and `pages`, each a list of objects). PL/pgSQL keeps each
statement's plan for the session, as the prepared statements did.

A compare-and-swap that matches no row (the host moved on) and a hugepage counter that would go
over its pool raise SQLSTATE NV001 with the host's id as the message, as `nfvplace_one_row`
(migration 0007) does; a claim row held already fails the `claims` table's UNIQUE constraint
(23505). Either way the statement fails whole and nothing of the commit stays.

The function names every column of `placements` (`store/commit.py` checks that against the
table): a migration that adds a column there replaces this function too. SQLite commits in process:
nothing changes there.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

SIGNATURE = "text, text, text, json, json, text, json, timestamptz, jsonb"


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        """
        CREATE OR REPLACE FUNCTION nfvplace_commit_placement(
            p_id text, p_key text, p_hash text, p_response json, p_configurations json,
            p_name text, p_descriptor json, p_created timestamptz, p_rows jsonb
        ) RETURNS integer
        LANGUAGE plpgsql AS $$
        DECLARE
            stamp bigint := CAST(CAST(pg_current_xact_id() AS text) AS bigint);
            swap record;
            page record;
        BEGIN
            -- the hosts' compare-and-swaps first, in the order given (sorted: the lock order)
            FOR swap IN
                SELECT h, s, m
                  FROM ROWS FROM (jsonb_to_recordset(p_rows->'swaps') AS (h text, s bigint, m bigint))
                       WITH ORDINALITY AS t(h, s, m, n)
                 ORDER BY n
            LOOP
                UPDATE hosts SET generation = swap.m, updated_at = p_created, change_seq = stamp
                 WHERE id = swap.h AND generation = swap.s;
                IF NOT FOUND THEN
                    RAISE EXCEPTION USING ERRCODE = 'NV001', MESSAGE = swap.h;
                END IF;
            END LOOP;
            INSERT INTO placements (id, idempotency_key, request_hash, response, configurations,
                                    name, descriptor, created_at, released_at)
            VALUES (p_id, p_key, p_hash, p_response, p_configurations, p_name, p_descriptor,
                    p_created, NULL);
            INSERT INTO placement_hosts (placement_id, host_id, generation)
            SELECT p_id, h, m FROM jsonb_to_recordset(p_rows->'swaps') AS t(h text, m bigint);
            INSERT INTO placement_instances (placement_id, owner, host_id, vm)
            SELECT p_id, o, h, v FROM jsonb_to_recordset(p_rows->'instances')
                AS t(o text, h text, v text);
            INSERT INTO claims (placement_id, host_id, kind, resource)
            SELECT p_id, h, k, u
              FROM ROWS FROM (jsonb_to_recordset(p_rows->'claims') AS (h text, k text, u text))
                   WITH ORDINALITY AS t(h, k, u, n)
             ORDER BY n;
            FOR page IN
                SELECT h, d, s, c
                  FROM ROWS FROM (
                           jsonb_to_recordset(p_rows->'pages') AS (h text, d integer, s bigint, c bigint)
                       ) WITH ORDINALITY AS t(h, d, s, c, n)
                 ORDER BY n
            LOOP
                UPDATE hugepage_pools SET claimed = claimed + page.c
                 WHERE host_id = page.h AND numa_node = page.d AND size_kib = page.s
                   AND claimed + page.c <= capacity;
                IF NOT FOUND THEN
                    RAISE EXCEPTION USING ERRCODE = 'NV001', MESSAGE = page.h;
                END IF;
            END LOOP;
            INSERT INTO hugepage_claims (placement_id, host_id, numa_node, size_kib, count)
            SELECT p_id, h, d, s, c FROM jsonb_to_recordset(p_rows->'pages')
                AS t(h text, d integer, s bigint, c bigint);
            RETURN 1;
        END
        $$
        """
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP FUNCTION IF EXISTS nfvplace_commit_placement({SIGNATURE})")
