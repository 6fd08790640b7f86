"""assumed_cache.py: each process keeps the assumed pods parsed, and reads only what changed since
the change number it kept; whatever another process or replica writes is seen at the next read,
and a pod past its expiry is not counted though nothing was written (SQLite and PostgreSQL)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from alembic import command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, select

from nfvplace.store import Store, assumed_cache, assumed_rows
from nfvplace.store.assumed import LOCK, AssumedPod, AssumedPods
from nfvplace.store.db import alembic_config, migrate
from nfvplace.store.records import utc_now

NODES = ("worker-a", "worker-b", "worker-c")
WRITER = """
import sys
from datetime import timedelta
from nfvplace.store import Store
from nfvplace.store.assumed import AssumedPod, AssumedPods
from nfvplace.store.records import utc_now
store = Store.open(sys.argv[1])
pods = AssumedPods(store.engine)
for line in sys.stdin:
    verb, uid, node = line.split()
    now = utc_now()
    if verb == "assume":
        pod = AssumedPod(uid, "ns/" + uid, node, {"cpu": {0: 2}}, now, now + timedelta(hours=1), 1)
        pods.assume(node, now, lambda known, through: (None, pod, (1, {"cpu": 64})))
    elif verb == "admitted":
        pods.admitted(uid, now)
    elif verb == "reconcile":
        pods.reconcile(node, 2, {"cpu": 62}, now)
    else:
        pods.drop(uid)
    print("done", flush=True)
"""


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    yield opened
    opened.close()


def assume(pods: AssumedPods, uid: str, node: str, now: datetime, life_s: float = 3600.0) -> None:
    pod = AssumedPod(
        uid, f"ns/{uid}", node, {"cpu": {0: 2}}, now, now + timedelta(seconds=life_s), 1
    )
    pods.assume(node, now, lambda known, through: (None, pod, (1, {"cpu": 64})))


def seen(pods: AssumedPods, now: datetime | None = None) -> dict[str, list[str]]:
    on = pods.on_nodes(now or utc_now(), NODES)
    return {node: [p.uid for p in found] for node, found in on.items()}


def test_another_process_writes_and_the_next_read_sees_it(store: Store, db_url: str) -> None:
    pods = AssumedPods(store.engine)
    assume(pods, "u1", "worker-a", utc_now())
    assert seen(pods) == {"worker-a": ["u1"]}  # kept parsed from here on
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, db_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None
    assert writer.stdout is not None

    def written(line: str) -> None:
        assert writer.stdin is not None
        assert writer.stdout is not None
        writer.stdin.write(line + "\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "done"

    try:
        written("assume u2 worker-b")
        assert seen(pods) == {"worker-a": ["u1"], "worker-b": ["u2"]}
        written("drop u1 -")
        assert seen(pods) == {"worker-b": ["u2"]}
        written("assume u3 worker-b")
        assert seen(pods) == {"worker-b": ["u2", "u3"]}
        written("reconcile - worker-b")  # the node's counts show u2 (2 CPUs fewer free)
        assert seen(pods) == {"worker-b": ["u3"]}
        assert [p.uid for p in pods.live(utc_now(), uid="u3")] == ["u3"]
    finally:
        writer.stdin.close()
        writer.wait(timeout=30)


def test_a_pod_past_its_expiry_is_not_counted_though_nothing_was_written(store: Store) -> None:
    pods = AssumedPods(store.engine)
    now = utc_now()
    assume(pods, "short", "worker-a", now, life_s=5.0)
    assume(pods, "long", "worker-a", now)
    with store.engine.connect() as conn:
        before = conn.execute(select(LOCK.c.seq)).scalar_one()
    assert seen(pods, now + timedelta(seconds=4)) == {"worker-a": ["long", "short"]}
    assert seen(pods, now + timedelta(seconds=5)) == {"worker-a": ["long"]}
    assert [p.uid for p in pods.live(now + timedelta(seconds=6), uid="short")] == []
    assert seen(pods, now + timedelta(hours=2)) == {}
    with store.engine.connect() as conn:
        assert conn.execute(select(LOCK.c.seq)).scalar_one() == before


def statements(store: Store) -> list[str]:
    said: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *a: said.append(a[2]))
    return said


def test_an_unchanged_read_is_one_query_and_a_changed_one_parses_what_changed(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = AssumedPods(store.engine)
    now = utc_now()
    for k in range(30):
        assume(pods, f"u{k:02d}", NODES[k % 3], now)
    seen(pods)
    said = statements(store)
    parsed: list[str] = []
    real = assumed_cache.pod_of

    def counted(row: Any) -> AssumedPod:
        parsed.append(row["uid"])
        return real(row)

    monkeypatch.setattr(assumed_cache, "pod_of", counted)
    seen(pods)
    assert len(said) == 1
    assert parsed == []
    assume(pods, "new", "worker-a", now)
    said.clear()
    assert "new" in seen(pods)["worker-a"]
    assert parsed == ["new"]


def test_a_reader_further_behind_than_the_forgotten_pods_are_kept_reads_everything(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assumed_rows, "GONE_KEPT", 4)
    monkeypatch.setattr(assumed_rows, "GONE_PRUNED", 2)
    pods = AssumedPods(store.engine)
    now = utc_now()
    assume(pods, "kept", "worker-a", now)
    assume(pods, "gone", "worker-b", now)
    assert seen(pods) == {"worker-a": ["kept"], "worker-b": ["gone"]}
    pods.drop("gone")
    for k in range(10):  # the row saying "gone" was forgotten is pruned meanwhile
        assume(pods, f"more{k}", "worker-c", now)
        pods.drop(f"more{k}")
    with store.engine.connect() as conn:
        assert conn.execute(select(LOCK.c.gone_below)).scalar_one() > 0
    assert seen(pods) == {"worker-a": ["kept"]}


def test_pods_assumed_before_0015_are_read(store: Store) -> None:
    """Rows written before migration 0015 have no change number: a worker's first read reads
    every pod, and the next writes are numbered from there."""
    settings_ = alembic_config(store.engine.url.render_as_string(hide_password=False))
    with store.engine.begin() as conn:
        settings_.attributes["connection"] = conn
        command.downgrade(settings_, "0014")
        conn.exec_driver_sql(
            "INSERT INTO k8s_assumed_pods (uid, pod, nodes, node, created_at, expires_at) "
            "VALUES ('old', 'ns/old', '{\"worker-a\": {\"cpu\": {\"0\": 2}}}', 'worker-a', "
            "'2026-11-30 00:00:00+00:00', '2099-01-01 00:00:00+00:00')"
        )
    migrate(store.engine)
    fresh = Store.open(store.engine.url.render_as_string(hide_password=False))
    try:
        pods = AssumedPods(fresh.engine)
        assert seen(pods) == {"worker-a": ["old"]}
        assume(pods, "new", "worker-a", utc_now())
        assert seen(pods) == {"worker-a": ["old", "new"]}
        pods.drop("old")
        assert seen(pods) == {"worker-a": ["new"]}
    finally:
        fresh.close()


VERBS = st.sampled_from(["assume", "drop", "admitted", "reconcile", "drop_node", "later"])
STEPS = st.lists(st.tuples(VERBS, st.integers(0, 5), st.sampled_from(NODES)), max_size=25)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_the_parsed_copy_reads_as_the_database(sqlite_url: str, steps: list[Any]) -> None:
    """After any writes, the kept copy answers as reading the database afresh does."""
    store = Store.open(sqlite_url)
    try:
        pods = AssumedPods(store.engine)
        now = utc_now()
        with store.engine.begin() as conn:
            conn.execute(assumed_rows.ASSUMED.delete())
            conn.execute(assumed_rows.VIEWS.delete())
        seen(pods, now)
        for verb, k, node in steps:
            uid = f"u{k}"
            if verb == "assume":
                assume(pods, uid, node, now, life_s=60.0 * (k + 1))
            elif verb == "drop":
                pods.drop(uid)
            elif verb == "admitted":
                pods.admitted(uid, now + timedelta(seconds=30))
            elif verb == "reconcile":
                pods.reconcile(node, 2 + k, {"cpu": 64 - 2 * k}, now)
            elif verb == "drop_node":
                pods.drop_node(node)
            else:
                now += timedelta(seconds=45)
            with store.engine.connect() as conn:
                truth, _ = pods._known(conn, now, counting=True, nodes=NODES)
            assert pods.live(now, NODES) == truth
            expected: dict[str, list[str]] = {}
            for pod in truth:
                expected.setdefault(pod.node, []).append(pod.uid)
            assert seen(pods, now) == expected
    finally:
        store.close()
