"""PostgreSQL: a placement's commit as one server-side function, called once per commit.

A placement's commit writes about ten statements: each touched host's compare-and-swap, the
placement, its hosts, its instances, its claim rows, the hugepage counters and the placement's
page claims. They were sent in libpq's pipeline mode, driven by the project itself (prepared
statements, parameters as text, results matched by hand). `nfvplace_commit_placement` writes them
all in the server, in the same order: the client sends one call with the rows as arrays, through
psycopg's ordinary API. PL/pgSQL keeps each statement's plan for the session, as the prepared
statements did.

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

SIGNATURE = (
    "text, text, text, json, json, text, json, timestamptz, "
    "text[], bigint[], bigint[], "
    "text[], text[], text[], "
    "text[], text[], text[], "
    "text[], integer[], bigint[], bigint[]"
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        """
        CREATE OR REPLACE FUNCTION nfvplace_commit_placement(
            p_id text, p_key text, p_hash text, p_response json, p_configurations json,
            p_name text, p_descriptor json, p_created timestamptz,
            host_ids text[], seen bigint[], made bigint[],
            owners text[], instance_hosts text[], vms text[],
            claim_hosts text[], claim_kinds text[], claim_units text[],
            page_hosts text[], page_nodes integer[], page_sizes bigint[], page_counts bigint[]
        ) RETURNS integer
        LANGUAGE plpgsql AS $$
        DECLARE
            stamp bigint := CAST(CAST(pg_current_xact_id() AS text) AS bigint);
        BEGIN
            -- the hosts' compare-and-swaps first, in the order given (sorted: the lock order)
            FOR i IN 1 .. coalesce(array_length(host_ids, 1), 0) LOOP
                UPDATE hosts SET generation = made[i], updated_at = p_created, change_seq = stamp
                 WHERE id = host_ids[i] AND generation = seen[i];
                IF NOT FOUND THEN
                    RAISE EXCEPTION USING ERRCODE = 'NV001', MESSAGE = host_ids[i];
                END IF;
            END LOOP;
            INSERT INTO placements (id, idempotency_key, request_hash, response, configurations,
                                    name, descriptor, created_at, released_at)
            VALUES (p_id, p_key, p_hash, p_response, p_configurations, p_name, p_descriptor,
                    p_created, NULL);
            INSERT INTO placement_hosts (placement_id, host_id, generation)
            SELECT p_id, h, g FROM unnest(host_ids, made) AS t(h, g);
            INSERT INTO placement_instances (placement_id, owner, host_id, vm)
            SELECT p_id, o, h, v FROM unnest(owners, instance_hosts, vms) AS t(o, h, v);
            INSERT INTO claims (placement_id, host_id, kind, resource)
            SELECT p_id, h, k, u FROM unnest(claim_hosts, claim_kinds, claim_units) AS t(h, k, u);
            FOR i IN 1 .. coalesce(array_length(page_hosts, 1), 0) LOOP
                UPDATE hugepage_pools SET claimed = claimed + page_counts[i]
                 WHERE host_id = page_hosts[i] AND numa_node = page_nodes[i]
                   AND size_kib = page_sizes[i] AND claimed + page_counts[i] <= capacity;
                IF NOT FOUND THEN
                    RAISE EXCEPTION USING ERRCODE = 'NV001', MESSAGE = page_hosts[i];
                END IF;
            END LOOP;
            INSERT INTO hugepage_claims (placement_id, host_id, numa_node, size_kib, count)
            SELECT p_id, h, n, s, c
              FROM unnest(page_hosts, page_nodes, page_sizes, page_counts) AS t(h, n, s, c);
            RETURN 1;
        END
        $$
        """
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP FUNCTION IF EXISTS nfvplace_commit_placement({SIGNATURE})")
