"""Steady churn against `nfvplace serve`: does the database stay bounded?

    .venv/bin/python bench/bench_churn.py                    # 10 minutes, SQLite, keep 60 s
    .venv/bin/python bench/bench_churn.py --db postgres      # the same on a durable PostgreSQL
    .venv/bin/python bench/bench_churn.py --quick            # 90 s, keep 15 s (for CI)

Clients place a VM (with an Idempotency-Key) and release their oldest placement once they hold
`--held`, as an orchestrator that creates and deletes VMs all day would, for `--minutes`. The server
runs with `--keep-released` (60 s here, 7 days by default in production: the same mechanism, the
plateau is churn rate x retention). Every `--every` seconds it samples the database's size (SQLite:
the file and its write-ahead log; PostgreSQL: `pg_database_size`) and the rows of `placements`.

The baseline is the same run's first retention period: once one `--keep-released` has passed, pruning
forgets as many placements as are released, so the rows stay flat and the size stops growing (freed
pages are reused). The verdict compares the last third of the run with the middle third: bounded
when the size grew less than 10 % (rows: less than 20 %) while placements went on at the same rate.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_service import (
    HEADERS,
    VM,
    Server,
    fresh_postgres,
    postgres_server,
    register,
)
from bench.hostgen import iter_fleet
from nfvplace.service.retention import prune_every_s


@contextlib.contextmanager
def database(kind: str) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{tempfile.mkdtemp(prefix='bench-churn-')}/nfvplace.db"
        return
    with postgres_server() as server:
        yield fresh_postgres(server)


def size_and_rows(db: str) -> tuple[int, int]:
    """Bytes the database takes on disk, and rows of `placements`."""
    engine = create_engine(db.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            rows = int(conn.execute(text("SELECT count(*) FROM placements")).scalar_one())
            if engine.dialect.name == "postgresql":
                size = int(
                    conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
                )
                return size, rows
    finally:
        engine.dispose()
    # the file itself: its write-ahead log grows to the checkpoint's size once and is reused
    return Path(db.removeprefix("sqlite:///")).stat().st_size, rows


class Churn:
    def __init__(self, url: str, clients: int, held: int) -> None:
        self.url = url
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.placed = 0
        self.released = 0
        self.other: dict[int, int] = {}
        self.threads = [
            threading.Thread(target=self._client, args=(held,), daemon=True) for _ in range(clients)
        ]

    def _client(self, held: int) -> None:
        mine: list[str] = []
        with httpx.Client(base_url=self.url, headers=HEADERS, timeout=60) as http:
            while not self.stop.is_set():
                if len(mine) >= held:
                    answer = http.delete(f"/v1/placements/{mine.pop(0)}")
                    self._count(answer.status_code, 204, "released")
                    continue
                answer = http.post(
                    "/v1/placements",
                    json={"vm": VM},
                    headers={"Idempotency-Key": uuid.uuid4().hex},
                )
                if self._count(answer.status_code, 201, "placed"):
                    mine.append(answer.json()["id"])

    @property
    def live(self) -> int:
        return self.placed - self.released

    def _count(self, status: int, wanted: int, what: str) -> bool:
        with self.lock:
            if status == wanted:
                setattr(self, what, getattr(self, what) + 1)
                return True
            self.other[status] = self.other.get(status, 0) + 1
            return False


def run(args: argparse.Namespace) -> dict[str, Any]:
    keep = args.keep_released
    samples: list[tuple[float, int, int, int]] = []  # (s, bytes, rows, placed so far)
    with database(args.db) as db:
        folder = Path(tempfile.mkdtemp(prefix="bench-churn-"))
        server = Server(db, 1, folder, extra=["--keep-released", f"{keep}s"])
        server.start()
        try:
            register(
                server.url,
                [h.model_dump(mode="json", by_alias=True) for h in iter_fleet(args.hosts, 7)],
            )
            churn = Churn(server.url, args.clients, args.held)
            for thread in churn.threads:
                thread.start()
            start = time.monotonic()
            end = start + args.minutes * 60
            while time.monotonic() < end:
                time.sleep(args.every)
                size, rows = size_and_rows(db)
                elapsed = time.monotonic() - start
                samples.append((elapsed, size, rows, churn.placed))
                print(
                    f"{elapsed:6.0f} s  {size / 2**20:7.2f} MiB  {rows:6d} rows  "
                    f"{churn.placed:7d} placed  {churn.released:7d} released  ({os.getloadavg()[0]:.1f})",
                    flush=True,
                )
            churn.stop.set()
            for thread in churn.threads:
                thread.join(timeout=60)
        finally:
            server.stop()
    return verdict(samples, churn, keep)


def rate(part: list[tuple[float, int, int, int]]) -> float:
    """Placements per second over a part of the samples."""
    return (part[-1][3] - part[0][3]) / max(part[-1][0] - part[0][0], 1e-9)


def verdict(
    samples: list[tuple[float, int, int, int]], churn: Churn, keep: float
) -> dict[str, Any]:
    """Bounded: in the last third the size grew less than 10 % over the middle third's, and the
    rows stayed within 1.5 x what retention keeps at that rate (the live placements plus one
    `keep` and one pruning interval of releases)."""
    third = len(samples) // 3
    middle, last = samples[third : 2 * third], samples[2 * third :]
    size_growth = max(s[1] for s in last) / max(s[1] for s in middle) - 1
    kept = churn.live + rate(last) * (keep + prune_every_s(keep))
    rows_ratio = max(s[2] for s in last) / kept
    result = {
        "placed": churn.placed,
        "released": churn.released,
        "other_answers": churn.other,
        "keep_released_s": keep,
        "placements_per_s_middle": rate(middle),
        "placements_per_s_last": rate(last),
        "size_mib_middle_max": max(s[1] for s in middle) / 2**20,
        "size_mib_last_max": max(s[1] for s in last) / 2**20,
        "rows_last_max": max(s[2] for s in last),
        "rows_expected": kept,
        "size_growth": size_growth,
        "rows_ratio": rows_ratio,
        "bounded": size_growth < 0.10 and rows_ratio < 1.5,
        "load": os.getloadavg(),
    }
    print(
        f"placed {churn.placed}, released {churn.released} "
        f"({result['placements_per_s_middle']:.0f}/s then {result['placements_per_s_last']:.0f}/s),"
        f" other answers {churn.other}; size {result['size_mib_middle_max']:.2f} -> "
        f"{result['size_mib_last_max']:.2f} MiB ({size_growth:+.1%}); at most "
        f"{result['rows_last_max']} rows, x{rows_ratio:.2f} the {kept:.0f} that retention keeps "
        f"at that rate: {'BOUNDED' if result['bounded'] else 'GROWING'}"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--keep-released", type=float, default=60, help="seconds")
    parser.add_argument("--every", type=float, default=10, help="seconds between samples")
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--held", type=int, default=5, help="placements each client holds")
    parser.add_argument("--quick", action="store_true", help="90 s, keep 15 s, a sample every 5 s")
    args = parser.parse_args()
    if args.quick:
        args.minutes, args.keep_released, args.every = 1.5, 15.0, 5.0
    result = run(args)
    raise SystemExit(0 if result["bounded"] else 1)


if __name__ == "__main__":
    main()
