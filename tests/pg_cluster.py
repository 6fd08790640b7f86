"""A throwaway PostgreSQL cluster (initdb + pg_ctl, unix socket in a temporary folder) for the
service tests and the benchmarks; run as the `postgres` user when we are root.

A cluster never outlives the process that started it: a small reaper process (in a session of
its own, so that a terminal's Ctrl-C does not reach it) holds a pipe from that process, and when
the pipe closes (the tests ended, were interrupted with SIGINT or SIGTERM, or were killed) it
stops the cluster and deletes its folder. Stopping the cluster from Python does the same at once.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


class ClusterError(RuntimeError):
    """The cluster could not be started; the message says why."""


def pg_bin() -> Path | None:
    """The newest PostgreSQL server binaries installed the Debian way, if any."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0,
    )
    return found[-1].parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_postgres(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@dataclass
class Cluster:
    """A running throwaway cluster: its URL, and pg_ctl to stop, start and restart it."""

    binaries: Path
    folder: Path
    port: int
    options: str
    reaper: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@/postgres?host={self.folder}&port={self.port}"

    def pg_ctl(self, *args: str, check: bool = True) -> None:
        argv = [str(self.binaries / "pg_ctl"), "-D", str(self.folder / "data")]
        argv += ["-l", str(self.folder / "log"), *args]
        subprocess.run(_as_postgres(argv), check=check, capture_output=True)

    def start(self) -> None:
        self.pg_ctl("-o", self.options, "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self.pg_ctl("-m", mode, "-w", "-t", "60", "stop")

    def restart(self, mode: str = "fast") -> None:
        self.pg_ctl("-m", mode, "-o", self.options, "-w", "-t", "60", "restart")

    def destroy(self) -> None:
        self.pg_ctl("-m", "immediate", "stop", check=False)
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.reaper is not None:
            self.reaper.communicate(timeout=60)  # closes its pipe: it finds nothing left to do


@contextlib.contextmanager
def throwaway(*, durable: bool = False) -> Iterator[Cluster]:
    """Start a cluster, yield it, stop and delete it. `durable=False` turns fsync and synchronous
    commit off (most tests); `durable=True` keeps PostgreSQL's defaults (benchmarks, fault tests)."""
    binaries = pg_bin()
    if binaries is None:
        raise ClusterError("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    folder = Path(tempfile.mkdtemp(prefix="nfvplace-pg-"))
    port = free_port()
    options = f"-p {port} -k {folder} -c listen_addresses='' -c max_connections=200"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    cluster = Cluster(binaries, folder, port, options)
    try:
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
        initdb = [str(binaries / "initdb"), "-D", str(folder / "data"), "-U", "postgres"]
        initdb += ["--auth=trust", "-E", "UTF8"] + ([] if durable else ["--no-sync"])
        subprocess.run(_as_postgres(initdb), check=True, capture_output=True)
        cluster.reaper = _reaper(cluster)
        cluster.start()
    except (subprocess.CalledProcessError, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        cluster.destroy()
        raise ClusterError(f"{exc}; {detail.decode(errors='replace')}") from exc
    try:
        yield cluster
    finally:
        cluster.destroy()


@contextlib.contextmanager
def throwaway_cluster(*, durable: bool = False) -> Iterator[str]:
    """The URL of a throwaway cluster (see `throwaway`)."""
    with throwaway(durable=durable) as cluster:
        yield cluster.url


def _reaper(cluster: Cluster) -> subprocess.Popen[bytes]:
    """A process that stops `cluster` and deletes its folder once our end of its pipe closes."""
    pg_ctl = str(cluster.binaries / "pg_ctl")
    stop = _as_postgres([pg_ctl, "-D", str(cluster.folder / "data"), "-m", "immediate", "stop"])
    script = (
        "import shutil, subprocess, sys\n"
        "sys.stdin.buffer.read()\n"  # returns when the test process is gone (or let go)
        f"subprocess.run({stop!r}, capture_output=True)\n"
        f"shutil.rmtree({str(cluster.folder)!r}, ignore_errors=True)\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, start_new_session=True
    )
