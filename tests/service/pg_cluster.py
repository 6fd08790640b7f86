"""A throwaway PostgreSQL cluster (initdb + pg_ctl, unix socket in a temporary folder) for the
service tests and `bench/bench_service.py`; run as the `postgres` user when we are root."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
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


@contextlib.contextmanager
def throwaway_cluster(*, durable: bool = False) -> Iterator[str]:
    """Start a cluster, yield its SQLAlchemy URL, stop and delete it. `durable=False` turns fsync and
    synchronous commit off (tests); benchmarks keep PostgreSQL's defaults."""
    binaries = pg_bin()
    if binaries is None:
        raise ClusterError("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    folder = Path(tempfile.mkdtemp(prefix="nfvplace-pg-"))
    data, port = folder / "data", free_port()
    options = f"-p {port} -k {folder} -c listen_addresses='' -c max_connections=200"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    try:
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
        initdb = [str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
        initdb += ["-E", "UTF8"] + ([] if durable else ["--no-sync"])
        subprocess.run(_as_postgres(initdb), check=True, capture_output=True)
        start = [str(binaries / "pg_ctl"), "-D", str(data), "-l", str(folder / "log")]
        start += ["-o", options, "-w", "-t", "60", "start"]
        subprocess.run(_as_postgres(start), check=True, capture_output=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        shutil.rmtree(folder, ignore_errors=True)
        raise ClusterError(f"{exc}; {detail.decode(errors='replace')}") from exc
    try:
        yield f"postgresql+psycopg://postgres@/postgres?host={folder}&port={port}"
    finally:
        stop = [str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]
        subprocess.run(_as_postgres(stop), capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
