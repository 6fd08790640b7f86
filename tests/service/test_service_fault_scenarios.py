"""The faults operators meet, tried on real `nfvplace serve` processes under 8 clients that place
and release with an Idempotency-Key on every POST: PostgreSQL (durable: fsync and synchronous
commit on) restarted fast or immediately or stopped for a while, a replica killed with SIGKILL,
the master of a 2-worker server killed with SIGKILL, SQLite on a full disk.

After each: every acknowledged placement is there and nothing else is, nothing is held twice,
every host is its report with exactly those placements claimed, the service answered again within
5 s of the database's return, a fault was a 503 with Retry-After and a store code (never a 500),
logged once per episode and worker without a traceback, and (while the server itself ran) no
client's keep-alive connection broke."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from fault_support import Load, check_invariants, fleet, log_lines, register, served_again_within
from pg_cluster import Cluster
from service_support import Server

pytestmark = pytest.mark.slow  # real servers and processes: not in the quick subset

DOWN_S = 4.0  # how long the database stays stopped in the stop scenario
SERVED_AGAIN_S = 5.0


def assert_faults_were_answered(server: Server, load: Load, *, workers: int = 2) -> None:
    log = server.log(tail=None)
    assert "Traceback" not in log
    assert "Exception in ASGI application" not in log
    assert load.tally.answers["500"] == 0
    # one line when a worker's episode starts (again if its kind changes), one when it ends
    faults = log_lines(log, "database fault")
    assert 1 <= faults <= 3 * workers, faults
    assert log_lines(log, "database serves again") <= workers


@pytest.mark.parametrize("how", ["restart fast", "restart immediate", "stop and start"])
def test_postgres_goes_away_under_load(
    how: str, durable_postgres: Cluster, durable_db: str, serve: Callable[..., Server]
) -> None:
    db = durable_db
    server = serve(db, workers=2)
    register(server.url, fleet())
    with Load([server.url]) as load:
        load.wait_for(20)
        if how == "stop and start":
            durable_postgres.stop("fast")
            time.sleep(DOWN_S)
            durable_postgres.start()
        else:
            durable_postgres.restart(how.split()[1])
        back_at = time.monotonic()
        load.wait_for(20)
    assert served_again_within(load.tally, back_at) < SERVED_AGAIN_S
    assert load.tally.answers["transport error"] == 0  # connections stayed usable
    assert sum(load.tally.answers[c] for c in load.tally.answers if "store" in c) > 0, (
        "the fault was never met"
    )
    assert_faults_were_answered(server, load)
    check_invariants(db, load.tally)


def test_a_replica_killed_under_load(durable_db: str, serve: Callable[..., Server]) -> None:
    db = durable_db
    replicas = [serve(db, workers=1), serve(db, workers=1)]
    register(replicas[0].url, fleet())
    with Load([r.url for r in replicas]) as load:
        for _ in range(2):
            load.wait_for(15)
            replicas[1].kill()  # SIGKILL to its process group, mid-commit
            load.wait_for(15)  # its clients moved to the other replica, replaying their keys
            replicas[1] = serve(db, workers=1, port=replicas[1].port)
    assert load.tally.answers["transport error"] > 0  # requests were in flight when it died
    assert load.tally.answers["500"] == 0
    check_invariants(db, load.tally)


def test_the_master_killed_under_load(sqlite_url: str, serve: Callable[..., Server]) -> None:
    server = serve(sqlite_url, workers=2)
    register(server.url, fleet())
    with Load([server.url]) as load:
        load.wait_for(15)
        assert server.process is not None
        os.kill(server.process.pid, signal.SIGKILL)  # the master alone: its workers must follow
        server.process.wait(timeout=30)
        server = serve(sqlite_url, workers=2, port=server.port)
        load.wait_for(15)
    assert load.tally.answers["500"] == 0
    check_invariants(sqlite_url, load.tally)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs mounted for this test (skipped where mount is not permitted)."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(
            "mounting a small tmpfs is not permitted here (needs root or CAP_SYS_ADMIN: "
            f"{mounted.stderr.decode(errors='replace').strip()}); the full-disk test needs one"
        )
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path, leave: int) -> Path:
    """A file taking all of `folder`'s disk but about `leave` bytes (the database grows too)."""
    junk = folder / "junk"
    with junk.open("wb") as out:
        while True:
            stat = os.statvfs(folder)
            room = stat.f_bavail * stat.f_frsize - leave
            if room <= 0:
                return junk
            try:
                out.write(b"\0" * min(room, 1024 * 1024))
                out.flush()
            except OSError:  # full already
                return junk


def test_sqlite_on_a_full_disk(small_disk: Path, serve: Callable[..., Server]) -> None:
    db = f"sqlite:///{small_disk / 'nfvplace.db'}"
    server = serve(db, workers=1)
    register(server.url, fleet())
    with Load([server.url]) as load:
        load.wait_for(10)
        junk = fill(small_disk, leave=64 * 1024)
        deadline = time.monotonic() + 60
        while not load.tally.answers["nfvplace.store.full"] and time.monotonic() < deadline:
            time.sleep(0.05)
        ready = httpx.get(server.url + "/readyz")
        junk.unlink()
        back_at = time.monotonic()
        load.wait_for(10)
    assert load.tally.answers["nfvplace.store.full"] > 0, load.tally.answers
    assert ready.status_code == 503
    assert ready.json()["code"] == "nfvplace.store.full"
    assert served_again_within(load.tally, back_at) < SERVED_AGAIN_S
    assert load.tally.answers["transport error"] == 0
    assert_faults_were_answered(server, load, workers=1)
    check_invariants(db, load.tally)
