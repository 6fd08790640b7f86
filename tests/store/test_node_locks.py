"""node_locks.py: one node's lock is held against other threads and other processes (SQLite's
worker processes, PostgreSQL's replicas), never against another node's; it is let go whatever the
body does, and the connection goes back to the pool without a transaction or a lock."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from nfvplace.store import db
from nfvplace.store.node_locks import node_lock, stripe

NODE, OTHER = "worker-a", "worker-b"

HOLDER = """
import sys
from nfvplace.store import db
from nfvplace.store.node_locks import node_lock
engine = db.make_engine(sys.argv[1])
with node_lock(engine, sys.argv[2]):
    print("held", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    made = db.make_engine(db_url)
    yield made
    made.dispose()


def test_the_two_nodes_are_on_different_stripes() -> None:
    assert stripe(NODE) != stripe(OTHER)


def locker(engine: Engine, node: str, acquired: threading.Event) -> threading.Thread:
    def run() -> None:
        with node_lock(engine, node):
            acquired.set()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_node_waits_for_its_lock_in_another_thread_and_another_node_does_not(
    engine: Engine,
) -> None:
    with node_lock(engine, NODE):
        other, same = threading.Event(), threading.Event()
        threads = [locker(engine, OTHER, other), locker(engine, NODE, same)]
        assert other.wait(timeout=5.0)
        assert not same.wait(timeout=0.3)
    assert same.wait(timeout=5.0)
    for thread in threads:
        thread.join()


def test_a_node_waits_for_its_lock_in_another_process(engine: Engine, db_url: str) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, db_url, NODE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        other, same = threading.Event(), threading.Event()
        threads = [locker(engine, OTHER, other), locker(engine, NODE, same)]
        assert other.wait(timeout=5.0)
        assert not same.wait(timeout=0.5)
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert same.wait(timeout=10.0)
        for thread in threads:
            thread.join()
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_is_let_go_when_the_body_raises_and_leaves_no_transaction(
    engine: Engine,
) -> None:

    def refused() -> None:
        with node_lock(engine, NODE) as conn:
            with conn.begin():
                conn.execute(text("SELECT 1"))
            raise RuntimeError("the API server refused")

    with pytest.raises(RuntimeError):
        refused()
    acquired = threading.Event()
    locker(engine, NODE, acquired).join(timeout=5.0)
    assert acquired.is_set()
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            held = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
            assert conn.execute(text(held)).scalar() == 0
        with node_lock(engine, NODE) as conn:
            assert not conn.in_transaction()
