"""Where a burst's time goes on the machine: the CPU of the servers' workers, of PostgreSQL, of the
load generator and of everything else (other users of the machine), the cores left idle, and what
PostgreSQL's backends were doing, sampled (`pg_stat_activity`: running, or waiting on a lock, on
the log, or on the client in the middle of a transaction).

Used by `bench_service_mix.py` around its wrk burst (issue 38: why a second PostgreSQL worker adds
little).
"""

from __future__ import annotations

import contextlib
import os
import resource
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 0.005
# what a backend's sample says, from (state, wait_event_type, wait_event)
ACTIVITY = (
    ("running", lambda s, t, e: s == "active" and t is None),
    ("waiting on a row or transaction lock", lambda s, t, e: t == "Lock"),
    ("waiting on an internal lock (LWLock)", lambda s, t, e: t == "LWLock"),
    ("waiting on the log (WAL write or flush)", lambda s, t, e: t == "IO" and "WAL" in (e or "")),
    ("waiting on other I/O", lambda s, t, e: t == "IO" and "WAL" not in (e or "")),
    ("in a transaction, waiting for the client", lambda s, t, e: s == "idle in transaction"),
    ("idle, waiting for the client", lambda s, t, e: s == "idle"),
)


def _machine_busy_idle_s() -> tuple[float, float]:
    """Every core's busy and idle seconds so far (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / TICKS, idle / TICKS


def _cpu_s(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / TICKS


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Burst:
    """What a burst used: CPU seconds per party, idle core-seconds, and backend samples."""

    wall_s: float = 0.0
    cpu_s: dict[str, float] = field(default_factory=dict)
    idle_s: float = 0.0
    samples: Counter[str] = field(default_factory=Counter)

    def per_request_ms(self, requests: int) -> dict[str, float]:
        out = {k: 1000 * v / max(requests, 1) for k, v in self.cpu_s.items()}
        out["idle cores"] = 1000 * self.idle_s / max(requests, 1)
        return out

    def activity_shares(self) -> dict[str, float]:
        total = sum(self.samples.values())
        return {k: v / total for k, v in self.samples.most_common()} if total else {}


@contextlib.contextmanager
def measured(workers_cpu_s: Callable[[], float], postgres_url: str | None) -> Iterator[Burst]:
    """Measure the block (which runs the load generator as a child process and waits for it)."""
    burst = Burst()
    backends: list[int] = []
    stop = threading.Event()
    sampler = None
    if postgres_url:
        backends = _cluster_pids(postgres_url)
        sampler = threading.Thread(target=_sample, args=(postgres_url, burst, stop), daemon=True)
        sampler.start()
    start = time.perf_counter()
    busy0, idle0 = _machine_busy_idle_s()
    workers0, pg0, gen0 = workers_cpu_s(), _cpu_s(backends), _children_cpu_s()
    try:
        yield burst
    finally:
        busy1, idle1 = _machine_busy_idle_s()
        workers = workers_cpu_s() - workers0
        postgres = _cpu_s(backends) - pg0
        generator = _children_cpu_s() - gen0
        stop.set()
        if sampler is not None:
            sampler.join()
        burst.wall_s = time.perf_counter() - start
        burst.idle_s = idle1 - idle0
        burst.cpu_s = {
            "workers": workers,
            "postgresql": postgres,
            "load generator": generator,
            "others (the machine's other users)": max(
                0.0, busy1 - busy0 - workers - postgres - generator
            ),
        }


def _connect(url: str) -> Any:
    import psycopg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    info: dict[str, Any] = {"dbname": parsed.database, "autocommit": True}
    for key in ("host", "port", "username", "password"):
        if getattr(parsed, key):
            info["user" if key == "username" else key] = getattr(parsed, key)
    info.update(parsed.query)
    return psycopg.connect(**info)


def _cluster_pids(url: str) -> list[int]:
    """Every process of the cluster the database is on: backends and background processes
    (pg_stat_activity lists both), and the postmaster."""
    with _connect(url) as conn:
        pids = [int(p) for (p,) in conn.execute("SELECT pid FROM pg_stat_activity")]
        data = conn.execute("SHOW data_directory").fetchone()
    with contextlib.suppress(OSError, TypeError, ValueError, IndexError):
        pids.append(int((Path(data[0]) / "postmaster.pid").read_text().split()[0]))
    return pids


def _sample(url: str, burst: Burst, stop: threading.Event) -> None:
    """Every SAMPLE_S, what each client backend of the database is doing (the sampler's own
    connection left out)."""
    with _connect(url) as conn:
        query = (
            "SELECT state, wait_event_type, wait_event FROM pg_stat_activity "
            "WHERE datname = current_database() AND backend_type = 'client backend' "
            "AND pid <> pg_backend_pid()"
        )
        while not stop.is_set():
            for state, kind, event in conn.execute(query):
                for name, matches in ACTIVITY:
                    if matches(state, kind, event):
                        burst.samples[name] += 1
                        break
            time.sleep(SAMPLE_S)
