"""A lock per Kubernetes node, across threads, worker processes and replicas.

A node's kubelet admits its pods in the order their Bindings land, each on the NUMA node that
fits it then, so the Bindings to one node must land in the order nfvplace decided them. A bind
therefore holds its node's lock from its decision until its Binding has landed, an API call of
5 to 30 ms. Binds to other nodes go on meanwhile: the decisions themselves still take the
database's one-row lock (`assumed.py`), for the few milliseconds of a transaction.

Node names are hashed onto `STRIPES` locks (two nodes on one stripe wait for each other, which
costs time, never correctness):
- in one process, a `threading.Lock` per stripe;
- SQLite (worker processes on one machine): then an exclusive `fcntl` lock on the stripe's byte
  of a file beside the database: an open file description lock (Linux) where the platform has
  them. A plain record lock belongs to the process, not the thread, so the kernel refused a wait
  as a deadlock (EDEADLK) when two processes each had one thread waiting for the byte that
  another thread of the other held, though no thread holds a byte while it waits for another
  (no deadlock was real);
- PostgreSQL (replicas anywhere): then a session-level advisory lock on the stripe, taken and
  released on the connection the bind decides on (no second connection is held).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import Connection, Engine, text

from .db import sqlite_path

STRIPES = 4096
ADVISORY_SPACE = 1852206704  # the first int4 of the advisory key pair: this lock's own space
_THREADS = [threading.Lock() for _ in range(STRIPES)]
_FILES: dict[tuple[Path, int], int] = {}  # (lock file, pid) -> its descriptor, open for good
_FILES_LOCK = threading.Lock()


def stripe(node: str) -> int:
    return zlib.crc32(node.encode()) % STRIPES


def lock_file(database: Path) -> Path:
    return database.with_name(database.name + ".k8s-nodes.lock")


@contextlib.contextmanager
def node_lock(engine: Engine, node: str) -> Iterator[Connection]:
    """Hold `node`'s lock (see the module) while the body runs, on a connection of `engine` that
    it is given with no transaction begun. The connection is taken once this process's lock is
    held: a bind waiting for a node holds none of the pool's connections."""
    k = stripe(node)
    with _THREADS[k], engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            with _advisory(conn, k):
                yield conn
            return
        path = sqlite_path(conn.engine.url.database)
        if path is None:  # in memory: this process is the only one
            yield conn
            return
        with _byte_lock(lock_file(path), k):
            yield conn


@contextlib.contextmanager
def _advisory(conn: Connection, k: int) -> Iterator[None]:
    key = {"space": ADVISORY_SPACE, "stripe": k}
    conn.execute(text("SELECT pg_advisory_lock(:space, :stripe)"), key)
    conn.commit()  # a session lock outlives the transaction that took it
    try:
        yield
    finally:
        try:
            conn.rollback()
            conn.execute(text("SELECT pg_advisory_unlock(:space, :stripe)"), key)
            conn.commit()
        except Exception:
            # never give the pool a connection that may still hold the lock: closed, the
            # server lets go of it
            conn.invalidate()


_OFD_WAIT: int | None = getattr(fcntl, "F_OFD_SETLKW", None)


@contextlib.contextmanager
def _byte_lock(path: Path, k: int) -> Iterator[None]:
    fd = _descriptor(path)
    _set(fd, fcntl.F_WRLCK, k)
    try:
        yield
    finally:
        _set(fd, fcntl.F_UNLCK, k)


def _set(fd: int, kind: int, k: int) -> None:
    """Lock (waiting) or unlock byte k of the file: an open file description lock where the
    platform has them (struct flock: type, whence, start, length, pid 0), else the process's."""
    if _OFD_WAIT is None:
        fcntl.lockf(fd, fcntl.LOCK_EX if kind == fcntl.F_WRLCK else fcntl.LOCK_UN, 1, k)
        return
    fcntl.fcntl(fd, _OFD_WAIT, struct.pack("hhqqi4x", kind, os.SEEK_SET, k, 1, 0))


def _descriptor(path: Path) -> int:
    """The lock file's descriptor in this process, opened once and never closed: closing any
    descriptor of a file drops every `fcntl` lock the process holds on it."""
    key = (path, os.getpid())  # a forked worker opens its own
    with _FILES_LOCK:
        fd = _FILES.get(key)
        if fd is None:
            fd = _FILES[key] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        return fd
