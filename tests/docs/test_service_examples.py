"""Every `console` session of docs/service.md runs as written against a real `nfvplace serve`: the
commands in order (the server on a free port instead of 8080), each `curl` answered 2xx, and the
output lines the page shows found in what the commands print."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import suppress
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "service.md"
BLOCK = re.compile(r"```console\n(.*?)```", re.DOTALL)


def sessions(text: str) -> list[list[tuple[str, list[str]]]]:
    """Each console block as (command, the output lines shown after it)."""
    out = []
    for block in BLOCK.findall(text):
        steps: list[tuple[str, list[str]]] = []
        lines = block.splitlines()
        while lines:
            line = lines.pop(0)
            if line.startswith("$ "):
                command = line[2:]
                while command.endswith("\\") and lines:
                    command = command[:-1] + lines.pop(0).strip()
                steps.append((command, []))
            elif steps:
                steps[-1][1].append(line)
        out.append(steps)
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_every_service_session_runs_as_written(tmp_path: Path) -> None:
    assert shutil.which("curl"), "curl is needed to run docs/service.md's examples"
    for name in ("examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    port = str(_free_port())
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "XDG_DATA_HOME": str(tmp_path / "data"),  # the default database, not the user's
    }
    server: subprocess.Popen[bytes] | None = None
    try:
        for steps in sessions(PAGE.read_text()):
            for command, shown in steps:
                command = command.replace("8080", port)
                if command.startswith("cat "):  # the page shows the file: write it
                    (tmp_path / command.split()[1]).write_text("\n".join(shown) + "\n")
                    continue
                if command.endswith("&"):
                    server = _start(command.rstrip("& "), tmp_path, env, port)
                    continue
                command = command.replace("curl -s ", "curl -sS --fail-with-body ")
                done = subprocess.run(
                    ["bash", "-c", command],
                    cwd=tmp_path,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                    timeout=120,
                )
                said = done.stdout + done.stderr
                assert done.returncode == 0, f"{command}\n{said}"
                for line in shown:
                    assert line == "..." or line in said, f"{command}: no {line!r} in\n{said}"
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


def _start(command: str, folder: Path, env: dict[str, str], port: str) -> subprocess.Popen[bytes]:
    log = folder / "serve.log"
    server = subprocess.Popen(
        ["bash", "-c", f"exec {command}"],
        cwd=folder,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert server.poll() is None, log.read_text()
        with suppress(OSError), urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz") as r:
            if r.status == 200:
                return server
        time.sleep(0.2)
    pytest.fail(f"{command} did not start: {log.read_text()}")
