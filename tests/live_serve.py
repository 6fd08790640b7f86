"""A real `nfvplace serve` (SQLite, with a tokens file) on a free port, for the tests of the doors
that talk to it from outside (the Nova plug-ins, the host agent)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import yaml


@contextlib.contextmanager
def serve(folder: Path, tokens: Mapping[str, Sequence[str]]) -> Iterator[str]:
    """The service's URL while it runs; stopped (SIGTERM to its process group) afterwards."""
    path = folder / "tokens.yaml"
    path.write_text(yaml.safe_dump({role: list(t) for role, t in tokens.items()}))
    path.chmod(0o600)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = folder / "serve.log"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nfvplace",
            "serve",
            "--port",
            str(port),
            "--tokens",
            str(path),
            "--db",
            f"sqlite:///{folder / 'n.db'}",
        ],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=folder,  # `python -m` looks in the current folder first: PYTHONPATH picks the tree
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(url + "/readyz", timeout=1) as answer,
            ):
                if answer.status == 200:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError(f"nfvplace serve did not start: {log.read_text()}")
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
