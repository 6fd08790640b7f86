"""node_locks.py: one node's lock is held against other threads and other processes (SQLite's
worker processes, PostgreSQL's replicas), never against another node's; it is let go whatever the
body does, and the connection goes back to the pool without a transaction or a lock."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
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


def process(script: str, *args: str) -> subprocess.Popen[str]:
    """`script` run by another Python process, talked to through its standard input and output."""
    command = [sys.executable, "-c", script, *args]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def test_a_node_waits_for_its_lock_in_another_process(engine: Engine, db_url: str) -> None:
    holder = process(HOLDER, db_url, NODE)
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


CROSSED = """
import sys, threading
from nfvplace.store import db
from nfvplace.store.node_locks import node_lock
engine = db.make_engine(sys.argv[1])

def wait_for(node):
    with node_lock(engine, node):
        print("got", flush=True)

with node_lock(engine, sys.argv[2]):
    print("held", flush=True)
    waiter = threading.Thread(target=wait_for, args=(sys.argv[3],))
    waiter.start()
    sys.stdin.readline()
waiter.join()
"""


def test_two_processes_waiting_for_each_others_nodes_in_other_threads_both_get_them(
    engine: Engine, db_url: str
) -> None:
    """This process holds NODE in one thread and waits for OTHER in another; the other process
    holds OTHER and waits for NODE. No thread waits while holding a lock: each gets its node once
    the holder lets go. With the process's own `fcntl` locks the kernel saw the two processes
    waiting for each other and refused the second wait (EDEADLK: a bind answered 500 under
    load, `test_service_k8s_burst.py` with two test workers)."""
    release, got, failed = threading.Event(), threading.Event(), list[BaseException]()

    def hold() -> None:
        with node_lock(engine, NODE):
            release.wait(timeout=30.0)

    def wait_for_other() -> None:
        try:
            with node_lock(engine, OTHER):
                got.set()
        except BaseException as exc:
            failed.append(exc)

    holder = threading.Thread(target=hold)
    holder.start()
    other = process(CROSSED, db_url, OTHER, NODE)
    assert other.stdout is not None
    assert other.stdin is not None
    try:
        assert other.stdout.readline().strip() == "held"
        time.sleep(0.5)  # its thread waits for NODE
        waiter = threading.Thread(target=wait_for_other)
        waiter.start()
        time.sleep(0.5)
        assert failed == []
        assert not got.is_set()
        release.set()
        assert other.stdout.readline().strip() == "got"  # NODE, once let go here
        other.stdin.write("go\n")
        other.stdin.flush()
        assert got.wait(timeout=10.0), failed
        waiter.join()
    finally:
        release.set()
        holder.join()
        other.kill()
        other.wait()
