"""Helpers shared by the service tests (a module of its own: `conftest` names are not unique)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from nfvplace.service.app import PLACER_ENV

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

TOKENS = {
    "reader": ["reader-token-0123456789"],
    "placer": ["placer-token-0123456789"],
    "host-agent": ["agent-token-0123456789"],
    "admin": ["admin-token-0123456789"],
}


def auth(role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[role][0]}"}


def sequential_count(placer: Any, hosts: list[dict[str, Any]], vm: dict[str, Any]) -> int:
    """How many copies of `vm` one caller placing one after the other fits on `hosts`, by the
    placement function itself (no service, no database): what the API must match."""
    from nfvplace.models.chd import ComputeHostDescriptor
    from nfvplace.models.vmd import VmDescriptor

    current = {h["id"]: ComputeHostDescriptor.model_validate(h) for h in hosts}
    descriptor = VmDescriptor.model_validate(vm)
    placed = 0
    while True:
        result = placer(list(current.values()), descriptor, policy="pack", seed=0)
        if not result.ok:
            return placed
        current.update(result.hosts)
        placed += 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A `nfvplace serve` process group on a free port."""

    db: str
    workers: int
    placer_path: str
    folder: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    # more `serve` options: {"--x": "v"}, {"--flag": None}
    options: dict[str, str | None] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> Server:
        tokens = self.folder / "tokens.yaml"
        tokens.write_text(yaml.safe_dump(TOKENS))
        tokens.chmod(0o600)
        env = {
            **os.environ,
            PLACER_ENV: self.placer_path,
            "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)]),
            "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="metrics-", dir=self.folder),
        }
        log = (self.folder / f"server-{self.port}.log").open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nfvplace",
                "serve",
                "--db",
                self.db,
                "--port",
                str(self.port),
                "--workers",
                str(self.workers),
                "--tokens",
                str(tokens),
                *(
                    part
                    for name, value in self.options.items()
                    for part in ((name,) if value is None else (name, value))
                ),
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent,  # a test run that is killed leaves no server behind
        )
        return self.wait_ready(timeout)

    def wait_ready(self, timeout: float = 120.0) -> Server:
        """Back when `/readyz` answers 200 on the port (from this server, once no other process
        holds the port: the caller's to make sure)."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}: {self.log()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/readyz", timeout=1).status_code == 200:
                    if self.workers > 1:
                        time.sleep(1.0)  # let every worker finish starting
                    return self
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"server did not become ready: {self.log()}")

    def log(self, tail: int | None = 3000) -> str:
        """The server's output (its last `tail` characters; None: all of it)."""
        path = self.folder / f"server-{self.port}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return text if tail is None else text[-tail:]

    def worker_pids(self) -> list[int]:
        """The pids of the master's child processes: its workers (none with one worker: it is
        the master), and multiprocessing's resource tracker."""
        assert self.process is not None
        return [pid for pid in process_ids() if parent_of(pid) == self.process.pid]

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the server's own process group (uvicorn master and workers) and reap it."""
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)
        self.process.wait(timeout=30)


def process_ids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (state, ppid, ...); None once gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def parent_of(pid: int) -> int | None:
    fields = _stat(pid)
    return None if fields is None else int(fields[1])


def is_running(pid: int) -> bool:
    """The process exists and is not a zombie (a dead orphan whose reaper has not looked yet)."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def die_with_parent() -> None:
    """In a child before it runs its program: SIGTERM when the process that started it dies."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
