"""The processes of a real `nfvplace serve --workers 2`: whatever signal ends the master, no worker
lives on to serve or hold the port, and a server started at once on the same port starts cleanly."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

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
