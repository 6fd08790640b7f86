"""The Nova virtualenv the Nova tests run Nova's own code in (nova==34.0.0 from the package index).

Built once by `bench/nova_venv.sh` into `.bench/nova-venv` (about a minute and 390 MB), kept there
for later runs; `NFVPLACE_NOVA_PYTHON` names another one. Several pytest workers wait for the one
that builds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def nova_python() -> str:
    given = os.environ.get("NFVPLACE_NOVA_PYTHON")
    if given:
        return given
    venv = ROOT / ".bench" / "nova-venv"
    venv.parent.mkdir(exist_ok=True)
    with (venv.parent / "nova-venv.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            ["bash", str(ROOT / "bench" / "nova_venv.sh")],
            capture_output=True,
            text=True,
            check=False,
        )
    assert done.returncode == 0, f"bench/nova_venv.sh failed:\n{done.stderr[-3000:]}"
    os.environ["NFVPLACE_NOVA_PYTHON"] = str(venv / "bin" / "python")
    return str(venv / "bin" / "python")


@pytest.fixture(scope="module")
def live_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A real `nfvplace serve` (SQLite, with tokens) on a free port, and a file holding a reader
    token (what nova.conf's `[nfvplace] token_file` names)."""
    folder = tmp_path_factory.mktemp("nfvplace-serve")
    tokens = folder / "tokens.yaml"
    tokens.write_text(
        "reader: [nova-scheduler-token-0123456789]\nhost-agent: [agent-token-0123456789]\n"
    )
    tokens.chmod(0o600)
    token_file = folder / "nova.token"
    token_file.write_text("nova-scheduler-token-0123456789\n")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (folder / "serve.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nfvplace",
            "serve",
            "--port",
            str(port),
            "--tokens",
            str(tokens),
            "--db",
            f"sqlite:///{folder / 'n.db'}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert process.poll() is None, (folder / "serve.log").read_text()
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(url + "/readyz", timeout=1) as answer,
            ):
                if answer.status == 200:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError(
                f"nfvplace serve did not start: {(folder / 'serve.log').read_text()}"
            )
        yield url, token_file
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
