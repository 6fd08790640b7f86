"""A transaction's steps (store/steps.py) on SQLite and PostgreSQL (pipelined there): guards (the
server's there), constraint errors, roll-back and a connection lost (before or in the COMMIT);
the documents' column type; idle connections."""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest
from service_hosts import host
from sqlalchemy import select, text, update
from sqlalchemy.dialects.postgresql import psycopg as pg_psycopg
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.sql import Executable
from steps_support import CLAIM, MARK, PLACEMENT, claim_rows, placement_row, seqs, two_hosts

from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.store import StaleSnapshot, Store, db, records, steps
from nfvplace.store.faults import CommitOutcomeUnknownError
from nfvplace.store.records import CLAIMS, HOSTS, PLACEMENTS, utc_now


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    yield from two_hosts(db_url)


def test_steps_run_in_order_and_commit(store: Store) -> None:
    row = placement_row("p1")
    with store.engine.begin() as conn:
        steps.commit(
            conn,
            [
                steps.Step(MARK, [{"b_id": "h1", "b_seq": 41}], stale="h1"),
                steps.Step(PLACEMENT, [row]),
                steps.Step(CLAIM, claim_rows("p1", "1", "2", "3")),
                steps.Step(CLAIM, []),  # nothing to write: skipped
                steps.Step(MARK, [{"b_id": "h2", "b_seq": 42}]),
                steps.Step(MARK, [{"b_id": "h1", "b_seq": 43}]),  # after the first: it wins
            ],
        )
        assert seqs(store) == {"h1": 43, "h2": 42}  # committed: another connection sees it
        assert not in_autocommit(conn.connection.driver_connection)  # lent back as it was
    with store.engine.connect() as conn:
        claimed = conn.execute(select(CLAIMS.c.resource).order_by(CLAIMS.c.resource)).scalars()
        assert list(claimed) == ["1", "2", "3"]
        stored, created = conn.execute(select(PLACEMENTS.c.response, PLACEMENTS.c.created_at)).one()
    assert stored == {"id": "p1"}  # JsonText stored as JSON, read back as data
    # a datetime goes through SQLAlchemy's bind processing (SQLite keeps it as text, without zone)
    sent = row["created_at"]
    assert created == (sent if created.tzinfo else sent.replace(tzinfo=None))


def test_a_failed_guard_rolls_everything_back(store: Store) -> None:
    before = seqs(store)
    with store.engine.connect() as conn:
        raw = conn.connection.driver_connection
        with pytest.raises(StaleSnapshot, match=r"^gone$"):
            steps.commit(
                conn,
                [
                    steps.Step(MARK, [{"b_id": "h1", "b_seq": 7}]),
                    steps.Step(MARK, [{"b_id": "gone", "b_seq": 7}], stale="gone"),
                    steps.Step(PLACEMENT, [placement_row("p1")]),
                    steps.Step(MARK, [{"b_id": "h2", "b_seq": 7}]),
                ],
            )
    assert seqs(store) == before
    assert store.get_placement("p1") is None
    assert not in_autocommit(raw)  # given back to the pool as it was lent


def in_autocommit(raw: object) -> bool:
    """A psycopg connection in autocommit (sqlite3's attribute says something else)."""
    return isinstance(raw, psycopg.Connection) and raw.autocommit


def test_a_failed_guard_stops_before_the_rows_others_hold(postgres_url: str) -> None:
    """A compare-and-swap that lost its race must not wait on rows its winner holds (which can
    deadlock): the server checks the guard and skips the rest of the pipeline."""
    store = Store.open(postgres_url)
    try:
        store.put_host(ComputeHostDescriptor.model_validate(host("h2")))
        with store.engine.connect() as holder, store.engine.connect() as conn:
            holder.execute(update(HOSTS).where(HOSTS.c.id == "h2").values(change_seq=99))
            conn.execute(text("SET lock_timeout = '2s'"))  # a wait would fail, not hang
            with pytest.raises(StaleSnapshot, match=r"^gone$"):
                steps.commit(
                    conn,
                    [
                        steps.Step(MARK, [{"b_id": "gone", "b_seq": 1}], stale="gone"),
                        steps.Step(MARK, [{"b_id": "h2", "b_seq": 1}]),  # the holder's row
                    ],
                )
    finally:
        store.close()


# A placement named LOSE kills its own server process: when inserted (IMMEDIATE), in the round
# trip of the steps, or at COMMIT (DEFERRED: a deferred constraint trigger runs there).
LOSE = "lose the connection"
KILLER = """
CREATE FUNCTION nfvplace_test_lose() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER nfvplace_test_lose AFTER INSERT ON placements
DEFERRABLE INITIALLY {when} FOR EACH ROW WHEN (NEW.name = '{name}')
EXECUTE FUNCTION nfvplace_test_lose();
"""


@pytest.mark.parametrize("when", ["DEFERRED", "IMMEDIATE"])
def test_a_connection_lost_with_the_commit_leaves_the_outcome_unknown(
    postgres_url: str, when: str
) -> None:
    """Lost in the round trip that carries the COMMIT, the server may have committed; lost
    before it, the server rolls the transaction back."""
    store = Store.open(postgres_url)
    expected = CommitOutcomeUnknownError if when == "DEFERRED" else OperationalError
    try:
        with store.engine.begin() as conn:
            conn.execute(text(KILLER.format(when=when, name=LOSE)))
        with pytest.raises(expected), store.engine.begin() as conn:
            steps.commit(conn, [steps.Step(PLACEMENT, [{**placement_row("p1"), "name": LOSE}])])
        assert store.get_placement("p1") is None  # here the connection broke before COMMIT ran
        store.ping()  # and the store serves again
    finally:
        store.close()


def test_a_constraint_error_is_sqlalchemys_and_rolls_back(store: Store) -> None:
    with store.engine.begin() as conn:
        steps.commit(
            conn,
            [
                steps.Step(PLACEMENT, [placement_row("p1")]),
                steps.Step(CLAIM, claim_rows("p1", "5")),
            ],
        )
    with pytest.raises(IntegrityError), store.engine.begin() as conn:
        steps.commit(
            conn,
            [
                steps.Step(PLACEMENT, [placement_row("p2")]),
                steps.Step(CLAIM, claim_rows("p2", "6", "5")),  # PU 5 is p1's
                steps.Step(MARK, [{"b_id": "h1", "b_seq": 9}]),
            ],
        )
    assert store.get_placement("p2") is None
    assert seqs(store)["h1"] != 9


def test_postgres_keeps_documents_as_json_text(postgres_url: str) -> None:
    store = Store.open(postgres_url)
    try:
        with store.engine.connect() as conn:
            types = dict(
                conn.execute(
                    text(
                        "SELECT table_name || '.' || column_name, data_type "
                        "FROM information_schema.columns WHERE data_type LIKE 'json%'"
                    )
                ).all()
            )
            lz4 = conn.execute(
                text(
                    "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
                    "AND 'lz4' = ANY(enumvals)"
                )
            ).first()
            compression = conn.execute(
                text(
                    "SELECT attcompression FROM pg_attribute "
                    "WHERE attrelid = 'hosts'::regclass AND attname = 'available'"
                )
            ).scalar_one()
    finally:
        store.close()
    assert types == {
        "hosts.chd": "json",
        "hosts.available": "json",
        "placements.response": "json",
        "placements.configurations": "json",
        "placements.descriptor": "json",
        "k8s_assumed_pods.nodes": "json",  # the Kubernetes extender's (migration 0005)
        "k8s_node_views.free": "json",
    }
    assert compression == ("l" if lz4 else "\x00")


def test_an_idle_connection_the_server_dropped_is_replaced(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store.open(postgres_url)
    try:
        store.ping()  # one connection, now idle in the pool
        name = store.engine.url.database
        with store.engine.connect() as conn:
            own = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        url = store.engine.url.set(drivername="postgresql", database="postgres")
        with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (own,))
        monkeypatch.setattr(db, "PING_IDLE_S", 0.0)  # idle long enough to be tried first
        store.ping()  # would raise "terminating connection" without the check on checkout
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT current_database()")).scalar_one() == name
            assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() != own
    finally:
        store.close()


class _Record:
    def __init__(self, idle_for: float | None) -> None:
        self.info = {} if idle_for is None else {"idle_since": time.monotonic() - idle_for}


class _Connection:
    def __init__(self) -> None:
        self.statements: list[str] = []

    def cursor(self) -> _Connection:
        return self

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def execute(self, statement: str) -> None:
        self.statements.append(statement)

    def rollback(self) -> None:
        self.statements.append("ROLLBACK")


@pytest.mark.parametrize(
    ("idle_for", "pinged"),
    [(None, False), (0.0, False), (db.PING_IDLE_S / 2, False), (db.PING_IDLE_S + 1, True)],
)
def test_only_connections_idle_long_enough_are_pinged(idle_for: float | None, pinged: bool) -> None:
    """A busy pool's connections go straight to work: a ping is a round trip per checkout."""
    connection = _Connection()
    db._ping_if_idle(connection, _Record(idle_for), None)
    assert connection.statements == (["SELECT 1", "ROLLBACK"] if pinged else [])


def test_a_connection_lost_mid_commit_is_an_error_and_not_reused(postgres_url: str) -> None:
    from sqlalchemy.exc import OperationalError

    store = Store.open(postgres_url)
    try:
        url = store.engine.url.set(drivername="postgresql", database="postgres")
        with pytest.raises(OperationalError), store.engine.begin() as conn:  # noqa: PT012 - one commit
            own = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
            with psycopg.connect(url.render_as_string(False), autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (own,))
            steps.commit(conn, [steps.Step(PLACEMENT, [placement_row("p1")])])
        store.ping()  # at once (no idle ping): the broken connection left the pool
        assert store.get_placement("p1") is None
    finally:
        store.close()


STATEMENTS = {
    name: value
    for name, value in vars(records).items()
    if name.isupper() and isinstance(value, Executable)
}


def sample(bind: object) -> object:
    """A value of the bind's type, as a row of a step gives it."""
    kind = getattr(getattr(bind, "type", None), "python_type", str)
    return {int: 7, str: "x", object: db.JsonText('{"a": 1}')}.get(kind, utc_now())


def plain(parameters: object) -> object:
    """Parameters with psycopg's JSON wrappers (compared by identity) unwrapped."""

    def one(value: object) -> object:
        return value.obj if isinstance(value, psycopg.types.json.Json) else value

    if isinstance(parameters, dict):
        return {name: one(value) for name, value in parameters.items()}
    assert isinstance(parameters, list)
    return [one(value) for value in parameters]


@pytest.mark.parametrize("name", sorted(STATEMENTS))
@pytest.mark.parametrize("dialect_name", ["sqlite", "postgresql"])
def test_a_rows_parameters_are_what_sqlalchemy_would_send(
    name: str, dialect_name: str, tmp_path: object
) -> None:
    """The binding plan worked out once per statement (`steps._bound`) gives the driver what
    SQLAlchemy's own `construct_params` and bind processors give, for every statement of the
    store, on both dialects (with the engines' JSON serialiser)."""
    engine = db.make_engine(f"sqlite:///{tmp_path}/x.db")
    dialect = engine.dialect if dialect_name == "sqlite" else pg_psycopg.dialect()
    dialect._json_serializer = db.serialise_json  # as make_engine sets it for both
    statement = STATEMENTS[name]
    compiled = statement.compile(dialect=dialect)  # type: ignore[attr-defined]
    row = {b.key: sample(b) for b in compiled.binds.values() if b.required}
    expected = dict(compiled.construct_params(row))
    for bind_name, process in compiled._bind_processors.items():
        if callable(process) and expected.get(bind_name) is not None:
            expected[bind_name] = process(expected[bind_name])
    order = compiled.positiontup
    wanted = expected if order is None else [expected[n] for n in order]
    assert plain(steps._bound(statement, dialect).parameters(row)) == plain(wanted)
    engine.dispose()
