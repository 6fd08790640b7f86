"""PostgreSQL's pipeline in one write (store/wire.py): placeholders, parameters as text, statements
prepared once per connection and again when the server forgot them, errors, and every statement
queued before the one flush."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg.types.json import Json
from sqlalchemy import bindparam, select, text, update
from steps_support import CLAIM, MARK, PLACEMENT, claim_rows, placement_row, seqs, two_hosts

from nfvplace.store import Store, db, steps, wire
from nfvplace.store.records import HOSTS


@pytest.mark.parametrize(
    ("pyformat", "query", "binds"),
    [
        ("SELECT 1", b"SELECT 1", ()),
        ("a = %(x)s AND b = %(y)s", b"a = $1 AND b = $2", ("x", "y")),
        ("a = %(x)s OR b = %(x)s OR c = %(y)s", b"a = $1 OR b = $1 OR c = $2", ("x", "y")),
        ("a LIKE 'x%%' AND b = %(b_id)s::VARCHAR", b"a LIKE 'x%' AND b = $1::VARCHAR", ("b_id",)),
    ],
)
def test_a_statement_takes_numbered_placeholders(
    pyformat: str, query: bytes, binds: tuple[str, ...]
) -> None:
    made = wire.statement(pyformat)
    assert (made.query, made.binds) == (query, binds)
    assert made.name.startswith(b"nfvplace_")  # never one of psycopg's names (_pg3_*)
    assert made == wire.statement(pyformat)  # the same text, the same name
    assert made.name != wire.statement(pyformat + " ").name


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        (None, None),
        (True, b"t"),
        (False, b"f"),
        (7, b"7"),
        (-1.5, b"-1.5"),
        (Decimal("2.50"), b"2.50"),
        ("héllo", "héllo".encode()),
        (db.JsonText('{"a": 1}'), b'{"a": 1}'),
        (Json(db.JsonText('{"a": 1}')), b'{"a": 1}'),  # SQLAlchemy's wrapper: sent as it is
        (Json({"a": [1]}), b'{"a": [1]}'),
        (date(2026, 11, 26), b"2026-11-26"),
        (datetime(2026, 11, 26, 7, 5, tzinfo=UTC), b"2026-11-26T07:05:00+00:00"),
        (UUID(int=1), b"00000000-0000-0000-0000-000000000001"),
    ],
)
def test_a_parameter_goes_as_text(value: object, sent: bytes | None) -> None:
    assert wire.text(value) == sent


def test_a_parameter_without_a_text_form_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(TypeError, match="bytes"):
        wire.text(b"\x00")


@pytest.fixture
def store(postgres_url: str) -> Iterator[Store]:
    yield from two_hosts(postgres_url)


READ = wire.statement("SELECT id, change_seq FROM hosts WHERE id >= %(b_from)s ORDER BY id")
SET_SEQ = wire.statement("UPDATE hosts SET change_seq = %(b_seq)s WHERE id = %(b_id)s")


def prepared_on(raw: Any) -> dict[str, datetime]:
    rows = raw.execute("SELECT name, prepare_time FROM pg_prepared_statements").fetchall()
    return {name: at for name, at in rows if name.startswith("nfvplace_")}


def test_statements_run_in_order_and_the_last_ones_rows_come_back_typed(store: Store) -> None:
    with store.engine.connect() as conn:
        raw = conn.connection.driver_connection
        rows = wire.run_all(
            raw,
            [
                (SET_SEQ, [{"b_seq": 5, "b_id": "h1"}, {"b_seq": 6, "b_id": "h1"}]),
                (SET_SEQ, [{"b_seq": 7, "b_id": "h2"}]),
                (READ, [{"b_from": "h"}]),
            ],
        )
        raw.rollback()
    assert rows == [("h1", 6), ("h2", 7)]  # the later row won; ints come back as ints
    assert seqs(store) == {"h1": 6, "h2": 7}  # no transaction was begun: each one committed


def test_a_statement_is_prepared_once_per_connection(store: Store) -> None:
    with store.engine.connect() as conn:
        raw = conn.connection.driver_connection
        wire.run_all(raw, [(READ, [{"b_from": "h"}]), (READ, [{"b_from": "h2"}])])
        first = prepared_on(raw)
        assert list(first) == [READ.name.decode()]  # twice in the pipeline, prepared once
        assert wire.run_all(raw, [(READ, [{"b_from": "h2"}])]) == [("h2", seqs(store)["h2"])]
        assert prepared_on(raw) == first  # not prepared again
        raw.rollback()


def test_psycopg_deallocates_nothing_at_a_rollback(store: Store) -> None:
    """Its automatic preparation is off on our engines: with it, a rollback sent DEALLOCATE ALL."""
    with store.engine.connect() as conn:
        raw = conn.connection.driver_connection
        wire.run_all(raw, [(READ, [{"b_from": "h"}])])
        for _ in range(8):  # more than psycopg's default threshold (5)
            conn.execute(select(HOSTS.c.id).where(HOSTS.c.id == bindparam("b")), {"b": "h1"}).all()
        conn.rollback()
        assert READ.name.decode() in prepared_on(raw)


def test_a_statement_the_server_forgot_is_prepared_again(store: Store) -> None:
    with store.engine.connect() as conn:
        raw = conn.connection.driver_connection
        wire.run_all(raw, [(READ, [{"b_from": "h"}])])
        raw.execute("DEALLOCATE ALL")  # as a connection pooler's DISCARD ALL would
        raw.commit()
        assert wire.run_all(raw, [(READ, [{"b_from": "h2"}])])[0][0] == "h2"  # at once
        raw.execute("DEALLOCATE ALL")
        raw.execute("SELECT 1")  # a transaction begun before: it is the caller's to run again
        with pytest.raises(wire.Unprepared):
            wire.run_all(raw, [(READ, [{"b_from": "h2"}])])
        raw.rollback()
        assert wire.run_all(raw, [(READ, [{"b_from": "h2"}])])[0][0] == "h2"  # prepared now


def test_a_commit_whose_statements_the_server_forgot_runs_again(store: Store) -> None:
    with store.engine.connect() as conn:
        steps.commit(conn, [steps.Step(MARK, [{"b_id": "h1", "b_seq": 1}], stale="h1")])
        raw = conn.connection.driver_connection
        raw.execute("DEALLOCATE ALL")
        raw.commit()
        row = placement_row("p1")
        steps.commit(
            conn,
            [
                steps.Step(MARK, [{"b_id": "h1", "b_seq": 2}], stale="h1"),
                steps.Step(PLACEMENT, [row]),
                steps.Step(CLAIM, claim_rows("p1", "1")),
            ],
        )
    assert seqs(store)["h1"] == 2
    assert store.get_placement("p1") is not None


def test_the_first_error_is_psycopgs_and_the_rest_is_skipped(store: Store) -> None:
    with store.engine.connect() as conn:
        raw = conn.connection.driver_connection
        raw.execute("BEGIN")
        broken = wire.statement("SELECT 1 / %(zero)s::int")
        with pytest.raises(psycopg.errors.DivisionByZero):
            wire.run_all(
                raw,
                [
                    (SET_SEQ, [{"b_seq": 11, "b_id": "h1"}]),
                    (broken, [{"zero": 0}]),
                    (SET_SEQ, [{"b_seq": 12, "b_id": "h2"}]),
                ],
            )
        assert raw.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        raw.rollback()
        # the failed pipeline prepared what ran before the error; the rest is prepared next time
        assert wire.run_all(raw, [(broken, [{"zero": 1}])]) == [(1,)]
        raw.rollback()
    assert 11 not in seqs(store).values()


class Recording:
    """A libpq connection whose calls are written down (and passed on)."""

    def __init__(self, pgconn: Any) -> None:
        self.pgconn = pgconn
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.pgconn, name)
        if not callable(found):
            return found

        def call(*args: Any) -> Any:
            self.calls.append(name)
            return found(*args)

        return call


def test_every_statement_is_queued_before_the_one_flush(store: Store) -> None:
    """psycopg's own pipeline flushed after each statement: a send, and a wake-up of the server,
    per statement."""
    with store.engine.connect() as conn:
        raw = conn.connection.driver_connection
        wire.run_all(raw, [(SET_SEQ, [{"b_seq": 1, "b_id": "h1"}])])  # prepared before
        recording = Recording(raw.pgconn)
        raw.pgconn = recording
        try:
            wire.run_all(
                raw,
                [
                    (steps.BEGIN, [{}]),
                    (READ, [{"b_from": "h"}]),
                    (SET_SEQ, [{"b_seq": 2, "b_id": "h1"}] * 3),
                ],
            )
        finally:
            raw.pgconn = recording.pgconn
        raw.rollback()
    sent = [c for c in recording.calls if c.startswith(("send", "pipeline_sync", "flush"))]
    assert sent[:-2] == [
        "send_prepare",  # BEGIN
        "send_query_prepared",
        "send_prepare",  # READ
        "send_query_prepared",
        *["send_query_prepared"] * 3,  # SET_SEQ, prepared before
    ]
    assert sent[-2:] == ["pipeline_sync", "flush"]


def test_a_pipelines_update_leaves_sqlalchemy_in_charge_of_the_transaction(store: Store) -> None:
    """Statements run through the wire inside a transaction SQLAlchemy began are rolled back with
    it."""
    with store.engine.connect() as conn:
        conn.execute(update(HOSTS).where(HOSTS.c.id == "h2").values(change_seq=40))
        raw = conn.connection.driver_connection
        wire.run_all(raw, [(SET_SEQ, [{"b_seq": 41, "b_id": "h1"}])])
        assert conn.execute(text("SELECT change_seq FROM hosts WHERE id = 'h1'")).scalar() == 41
        conn.rollback()
    assert not {40, 41} & set(seqs(store).values())


def test_results_left_unread_close_the_connection(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pipeline whose results could not all be read cannot be left: the connection is closed
    (the pool replaces it), and the error that stopped the reading is the one raised."""

    def broken(*_args: object, **_kwargs: object) -> Exception:
        raise RuntimeError("reading stopped")

    with store.engine.connect() as conn:
        raw = conn.connection.driver_connection
        monkeypatch.setattr(wire.errors, "error_from_result", broken)
        with pytest.raises(RuntimeError, match="reading stopped"):
            wire.run_all(
                raw,
                [
                    (wire.statement("SELECT 1 / 0"), [{}]),
                    (SET_SEQ, [{"b_seq": 13, "b_id": "h1"}]),
                ],
            )
        assert raw.closed
        conn.invalidate()
    assert 13 not in seqs(store).values()
    store.ping()  # the store serves on another connection
