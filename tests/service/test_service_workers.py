"""The processes of a real `nfvplace serve --workers 2`: whatever signal ends the master, no worker
lives on to serve or hold the port, and a server started at once on the same port starts cleanly;
connections go to every worker; `--pin-workers` runs each worker on a CPU of its own."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from service_hosts import host
from service_support import Server, auth, is_running

pytestmark = pytest.mark.slow  # real servers and processes: not in the quick subset

# SIGKILL and SIGALRM end the master without a word to its workers (uvicorn handles neither);
# SIGTERM and SIGINT are uvicorn's own way out
SIGNALS = [signal.SIGKILL, signal.SIGALRM, signal.SIGTERM, signal.SIGINT]


def test_workers_die_with_their_master_whatever_the_signal(
    sqlite_url: str, serve: Callable[..., Server]
) -> None:
    server = serve(sqlite_url, workers=2)
    for k, sig in enumerate(SIGNALS):
        children = server.worker_pids()  # its workers, and multiprocessing's resource tracker
        assert len(children) >= 2
        assert server.process is not None
        os.kill(server.process.pid, sig)  # the master alone, as `kill` or the OOM killer would
        server.process.wait(timeout=30)
        # started again at once, on the same port: it waits for the old workers to let go
        server = serve(sqlite_url, workers=2, port=server.port)
        assert "Address already in use" not in server.log()
        deadline = time.monotonic() + 15
        while any(map(is_running, children)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(is_running, children)), signal.Signals(sig).name
        server.wait_ready(30)  # the old workers may have answered its first /readyz
        answer = httpx.put(
            f"{server.url}/v1/hosts/h{k}", json=host(f"h{k}"), headers=auth("host-agent")
        )
        assert answer.status_code == 201, answer.text


def _cmdline(pid: int) -> bytes:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


def _connection_owners(port: int, client_ports: set[int], pids: list[int]) -> dict[int, int]:
    """For each client port, the pid of the worker holding the server side of its connection
    (/proc/net/tcp gives the socket's inode, /proc/PID/fd which process holds it)."""
    inodes: dict[str, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, remote, inode = fields[1], fields[2], fields[9]
                if int(local.rsplit(":", 1)[1], 16) == port:
                    peer = int(remote.rsplit(":", 1)[1], 16)
                    if peer in client_ports:
                        inodes[f"socket:[{inode}]"] = peer
    owners: dict[int, int] = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target in inodes:
                        owners[inodes[target]] = pid
    return owners


def test_connections_waiting_while_the_workers_are_busy_go_to_every_worker(
    sqlite_url: str, serve: Callable[..., Server]
) -> None:
    # uvicorn's workers share one socket, and the first to be free takes every connection
    # waiting: keep-alive clients that connect while the workers are busy (a burst, a restart)
    # can all stay on one worker for good, the other idle. Each worker has a socket of its own
    # (SO_REUSEPORT), and the kernel hashes connections to them as they arrive (16 here: all on
    # one worker by chance once in 32,768 runs). The workers are stopped to hold them busy.
    server = serve(sqlite_url, workers=2)
    children = [p for p in server.worker_pids() if b"resource_tracker" not in _cmdline(p)]
    assert len(children) == 2
    for pid in children:
        os.kill(pid, signal.SIGSTOP)
    connections = []
    try:
        for _ in range(16):
            sock = socket.create_connection(("127.0.0.1", server.port))
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            connections.append(sock)
        os.kill(children[0], signal.SIGCONT)  # one worker free first: it takes what it can
        time.sleep(0.5)
        for pid in children[1:]:
            os.kill(pid, signal.SIGCONT)
        for sock in connections:
            sock.settimeout(30)
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        ports = {sock.getsockname()[1] for sock in connections}
        owners = _connection_owners(server.port, ports, children)
        assert set(owners) == ports
        assert len(set(owners.values())) == 2, owners
    finally:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        for sock in connections:
            sock.close()


def test_a_worker_keeps_what_is_alive_out_of_the_collectors_sight() -> None:
    """`keep_out_of_collections` (each time a worker's index is built) collects, then freezes:
    the objects alive then are out of every later collection, garbage is not kept, and a frozen
    object is still freed by its reference count. In a process of its own: it is process-wide."""
    import subprocess
    import sys

    script = """
import gc, weakref
from nfvplace.service.workers import keep_out_of_collections

class Node:
    pass

alive = [Node() for _ in range(1000)]
cycle = [Node(), Node()]
cycle[0].other, cycle[1].other = cycle[1], cycle[0]
garbage = weakref.ref(cycle[0])
del cycle
keep_out_of_collections()
assert garbage() is None, "garbage made before was collected, not kept"
assert gc.get_freeze_count() >= 1000
tracked = {id(o) for o in gc.get_objects()}
assert not any(id(o) in tracked for o in alive), "alive objects are out of the collector's sight"
dropped = weakref.ref(alive[0])
del alive
assert dropped() is None, "a frozen object is freed by its reference count"
from nfvplace.service.workers import YOUNG_COLLECTION_AT
assert gc.get_threshold()[0] == YOUNG_COLLECTION_AT > 700, "young collections less often"
cycle = [Node(), Node()]
cycle[0].other, cycle[1].other = cycle[1], cycle[0]
garbage = weakref.ref(cycle[0])
del cycle
kept = [Node() for _ in range(2 * YOUNG_COLLECTION_AT)]  # a young collection comes
assert gc.isenabled() and garbage() is None, "garbage made later is still collected"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def _cpus_of_threads(pid: int) -> set[frozenset[int]]:
    """The CPUs each thread of process `pid` may run on (one set per distinct answer)."""
    return {frozenset(os.sched_getaffinity(int(task))) for task in os.listdir(f"/proc/{pid}/task")}


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this system")
def test_pinned_workers_each_run_on_one_cpu_of_their_own(
    sqlite_url: str, serve: Callable[..., Server]
) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    server = serve(sqlite_url, workers=2, **{"--pin-workers": None})
    for k in range(4):  # threads started for requests inherit the worker's CPU
        answer = httpx.put(f"{server.url}/v1/hosts/h{k}", json=host(f"h{k}"), headers=auth("admin"))
        assert answer.status_code == 201, answer.text
    workers = [p for p in server.worker_pids() if b"resource_tracker" not in _cmdline(p)]
    assert len(workers) == 2
    pinned = [_cpus_of_threads(pid) for pid in workers]
    assert all(len(cpus) == 1 and len(next(iter(cpus))) == 1 for cpus in pinned), pinned
    assert {next(iter(next(iter(cpus)))) for cpus in pinned} == {
        allowed[0],
        allowed[1 % len(allowed)],
    }
    one = serve(sqlite_url, workers=1, **{"--pin-workers": None})
    assert one.process is not None
    assert _cpus_of_threads(one.process.pid) == {frozenset(allowed[:1])}
    plain = serve(sqlite_url, workers=1)  # without the option: every CPU the server may use
    assert plain.process is not None
    assert _cpus_of_threads(plain.process.pid) == {frozenset(allowed)}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_worker_keeps_freed_memory_for_its_next_answers() -> None:
    """`keep_freed_memory` (at a worker's start): a 409's list of 1,000 rows, joined again and
    again, is no longer faulted in afresh each time (glibc gave it back at the heap's top: about
    34 page faults a join). In a process of its own: it is process-wide."""
    import subprocess

    script = """
import os, resource
from nfvplace.service.workers import keep_freed_memory

assert keep_freed_memory()
rows = [os.urandom(95).hex().encode() for _ in range(1000)]
b",".join(rows)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(200):
    b",".join(rows)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert int(done.stdout) < 200
