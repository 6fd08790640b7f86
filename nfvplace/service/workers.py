"""The processes of `nfvplace serve`: workers die with their master, each listens on a socket of
its own, a restart waits for the port its predecessor's workers are still closing, and with
`--pin-workers` each worker runs on one CPU (`pin_if_asked`).

uvicorn's master binds the socket and starts the workers; if the master is killed with SIGKILL it
cannot stop them, and they would go on serving (and holding the port) as orphans. Each worker
therefore asks the kernel for SIGTERM when its parent dies (Linux's PR_SET_PDEATHSIG; elsewhere a
thread watches the parent's pid), and then shuts down as on any SIGTERM: it closes the listening
socket first and finishes the requests under way.

uvicorn's workers share the master's one listening socket, and whichever worker wakes first takes
every connection waiting: a burst of keep-alive clients (an orchestrator's pool, `wrk`) could all
land on one worker for good while the other idled (PostgreSQL with 2 workers placed 112/s in one
run, as one worker, and 204/s in the next). Here each worker has a listening socket of its own on
the same port (SO_REUSEPORT, as nginx's `reuseport`), and the kernel spreads new connections over
them; a worker that dies is started again on its socket.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import gc
import logging
import os
import signal
import socket
import sys
import threading
import time
from typing import Any

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors.multiprocess import Multiprocess, Process

from ..models.loading import frozen_from_now

MASTER_ENV = "NFVPLACE_SERVE_MASTER"  # pid of the `nfvplace serve` process, set for its workers
PIN_ENV = "NFVPLACE_SERVE_PIN"  # set by `serve --pin-workers`: each worker on one CPU
SLOT_ENV = "NFVPLACE_SERVE_SLOT"  # which worker this is (0 to N - 1), set for each worker
PR_SET_PDEATHSIG = 1
WATCH_S = 0.5
PORT_WAIT_S = 15.0
LOGGER = logging.getLogger("uvicorn.error")  # where uvicorn's supervisor logs


def die_with_master() -> None:
    """In a worker process of `nfvplace serve --workers N`: get SIGTERM when the master dies. A
    no-op in the master itself (one worker runs in the master's process)."""
    master = os.environ.get(MASTER_ENV)
    if master is None or int(master) == os.getpid():
        return
    if not _pdeathsig(signal.SIGTERM):
        threading.Thread(target=_watch, args=(int(master),), daemon=True).start()
    if os.getppid() != int(master):  # the master died before we asked: nobody will signal us
        os.kill(os.getpid(), signal.SIGTERM)


YOUNG_COLLECTION_AT = 7000  # allocations between the collector's young collections (700 by default)


def keep_out_of_collections() -> None:
    """In a worker, each time its index was built: what is alive now (the app, the modules, the
    index: hundreds of thousands of objects, the index's without a reference cycle) is moved out
    of the cyclic garbage collector's sight, after a collection (so that no garbage is kept).
    Every full collection walked all of it again, about 0.1 ms per placement at 1,000 hosts; the
    objects are still freed by their reference counts (an index, a host's descriptor replaced).
    Young collections come every `YOUNG_COLLECTION_AT` allocations: a request's objects (its
    body, its models, its rows) are then mostly freed by their reference counts before a
    collection looks at them, and fewer survive to be walked again (on the mix, the collector's
    time 0.09 -> 0.02 ms a request, docs/benchmarks.md); a reference cycle left as garbage waits
    that much longer. The process's business, not the app's: tests build many apps in one
    process."""
    gc.collect()
    frozen_from_now()  # and a cold evaluation's held hosts join them (`gc_paused(lasting=True)`)
    gc.set_threshold(YOUNG_COLLECTION_AT, *gc.get_threshold()[1:])


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
KEEP_FREED = 32 << 20  # free bytes at the heap's top kept in the worker
OWN_MAPPING = 8 << 20  # blocks this large or larger still get a mapping of their own


def keep_freed_memory() -> bool:
    """In a worker: freed memory stays in the process for the next request (False: not glibc).

    glibc hands memory back to the system once the free space at the top of its heap passes its
    trim threshold (128 KiB at first) and gives each larger block a mapping of its own, and a
    request builds and drops blocks that large: a 409 no_fit over 1,000 hosts is about 190 KB,
    joined from the kept rows, set in its document, sent. Each was then faulted in page by page
    afresh: 0.1-0.25 ms for a 190 KB `bytes.join` on this VM, 0.02 ms with the pages kept. The
    worker keeps up to `KEEP_FREED` at the top of the heap and maps only blocks of `OWN_MAPPING`
    or more apart. The process's business, not the engine's: a library leaves its host's
    allocator alone."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None)
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None or not hasattr(libc, "gnu_get_libc_version"):
        return False
    return bool(mallopt(M_TRIM_THRESHOLD, KEEP_FREED)) and bool(
        mallopt(M_MMAP_THRESHOLD, OWN_MAPPING)
    )


def pin_if_asked() -> int | None:
    """In a worker of `serve --pin-workers`: run it, every thread of it, on one CPU of those the
    server may use, worker k on the k-th (round robin); the CPU, else None (not asked, or a
    system without CPU affinity). Threads started later inherit it.

    A worker's threads take turns on the interpreter's lock: spread over the cores by the kernel,
    each turn goes from one core to another; kept on one core, they do not (the figures are in
    docs/scaling.md and docs/benchmarks.md, "Settings")."""
    if not os.environ.get(PIN_ENV) or not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[int(os.environ.get(SLOT_ENV, "0")) % len(cpus)]
    try:
        os.sched_setaffinity(0, {cpu})  # this thread, and the threads it starts from now on
    except OSError:  # not allowed here: the worker runs as it is, and says nothing of a CPU
        return None
    for task in os.listdir("/proc/self/task"):  # the threads started before (uvicorn's)
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(task), {cpu})
    return cpu


def _pdeathsig(sig: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)) == 0


def _watch(master: int) -> None:
    while os.getppid() == master:
        time.sleep(WATCH_S)
    os.kill(os.getpid(), signal.SIGTERM)


def wait_for_port(host: str, port: int, timeout: float = PORT_WAIT_S) -> bool:
    """Wait until `host:port` can be bound (the workers of a server that was just killed close
    their listening socket within moments); False if it is still taken after `timeout`."""
    deadline = time.monotonic() + timeout
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    while True:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
                return True
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE or time.monotonic() >= deadline:
                    return exc.errno != errno.EADDRINUSE  # another error: uvicorn reports it
        time.sleep(0.1)


def serve(app: str, host: str, port: int, workers: int, **options: Any) -> None:
    """uvicorn serving the app factory `app`; with several workers, each on a socket of its own."""
    if workers <= 1:
        uvicorn.run(app, factory=True, host=host, port=port, **options)
        return
    sockets = [listening_socket(host, port)]
    port = sockets[0].getsockname()[1]  # the port the system chose, when asked for port 0
    sockets += [listening_socket(host, port) for _ in range(workers - 1)]
    config = uvicorn.Config(app, factory=True, host=host, port=port, workers=workers, **options)
    try:
        BalancedWorkers(config, sockets).run()
    finally:
        for sock in sockets:
            sock.close()


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port` that shares the port with the others like it (SO_REUSEPORT:
    the kernel hashes each new connection to one of them)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


class BalancedWorkers(Multiprocess):
    """uvicorn's supervisor, worker k always on socket k (started, restarted when it dies or on
    SIGHUP); the number of workers is fixed (SIGTTIN/SIGTTOU would leave a socket unserved)."""

    def _start(self, slot: int) -> Process:
        process = Process(self.config, [self.sockets[slot]])
        os.environ[SLOT_ENV] = str(slot)  # the worker, spawned, starts with this environment
        process.start()
        return process

    def init_processes(self) -> None:
        self.processes = [self._start(slot) for slot in range(self.processes_num)]

    def keep_subprocess_alive(self) -> None:
        if self.should_exit.is_set():
            return
        for slot, process in enumerate(self.processes):
            if process.is_alive(timeout=self.config.timeout_worker_healthcheck):
                continue
            process.kill()
            process.join()
            if process.exitcode == STARTUP_FAILURE:  # it would fail the same way every time
                LOGGER.error(f"Child process [{process.pid}] failed to start; stopping")
                self.should_exit.set()
                return
            if self.should_exit.is_set():
                return
            LOGGER.info(f"Child process [{process.pid}] died")
            self.processes[slot] = self._start(slot)

    def restart_all(self) -> None:
        for slot, old in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            new = self._start(slot)
            if not new.wait_until_ready(self.config.timeout_worker_healthcheck, self.should_exit):
                new.kill()
                new.join()
                return
            old.terminate()
            old.join()
            self.processes[slot] = new

    def handle_ttin(self) -> None:
        LOGGER.info("Received SIGTTIN: the number of workers is fixed (--workers)")

    def handle_ttou(self) -> None:
        LOGGER.info("Received SIGTTOU: the number of workers is fixed (--workers)")
