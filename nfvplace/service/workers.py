"""The processes of `nfvplace serve`: workers die with their master, and a restart waits for the
port its predecessor's workers are still closing.

uvicorn's master binds the socket and starts the workers; if the master is killed with SIGKILL it
cannot stop them, and they would go on serving (and holding the port) as orphans. Each worker
therefore asks the kernel for SIGTERM when its parent dies (Linux's PR_SET_PDEATHSIG; elsewhere a
thread watches the parent's pid), and then shuts down as on any SIGTERM: it closes the listening
socket first and finishes the requests under way.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import socket
import sys
import threading
import time

MASTER_ENV = "NFVPLACE_SERVE_MASTER"  # pid of the `nfvplace serve` process, set for its workers
PR_SET_PDEATHSIG = 1
WATCH_S = 0.5
PORT_WAIT_S = 15.0


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
