"""Placements per second through the REST API on PostgreSQL, with 1 and 2 uvicorn workers.

    .venv/bin/python bench/bench_service.py [--hosts 24] [--clients 8] [--placer module:function]

Uses $NFVPLACE_TEST_POSTGRES_URL (a server where we may CREATE DATABASE) or starts a throwaway
PostgreSQL 15 cluster itself. Each run gets a fresh database and a fresh `nfvplace serve`; `--clients`
threads place the same small VM until the fleet is full. Prints placements/s for each worker count
and the ratio 2 workers / 1 worker, measured in the same run. `--placer` defaults to the real engine,
`nfvplace.placement:place`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import yaml
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "service"))

from pg_cluster import free_port, throwaway_cluster  # noqa: E402
from service_hosts import host, vm  # noqa: E402

TOKEN = "bench-admin-token-0123456789"
VM = vm(vcpus=2, pages=1, sriov=1)


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    given = os.environ.get("NFVPLACE_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    with throwaway_cluster(durable=True) as url:
        yield url


def fresh_database(server: str) -> str:
    parsed = make_url(server)
    info: dict[str, Any] = {"dbname": parsed.database or "postgres", "autocommit": True}
    for key in ("host", "port", "password"):
        if getattr(parsed, key):
            info[key] = getattr(parsed, key)
    if parsed.username:
        info["user"] = parsed.username
    info.update(parsed.query)
    name = f"nfvplace_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(**info) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return parsed.set(database=name, drivername="postgresql+psycopg").render_as_string(False)


def start_server(
    db: str, workers: int, placer: str, folder: Path
) -> tuple[subprocess.Popen[bytes], str]:
    tokens = folder / "tokens.yaml"
    tokens.write_text(yaml.safe_dump({"admin": [TOKEN]}))
    port = free_port()
    env = {
        **os.environ,
        "NFVPLACE_PLACER": placer,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "service"), str(ROOT)]),
        "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="metrics-", dir=folder),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nfvplace",
            "serve",
            "--db",
            db,
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--tokens",
            str(tokens),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(folder / f"server-{workers}.log").open("wb"),
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                time.sleep(1.0)
                return process, url
        time.sleep(0.1)
    raise SystemExit(f"server did not start; see {folder}")


def run(url: str, hosts: int, clients: int) -> tuple[int, float, Counter[str]]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for i in range(hosts):
        chd = host(f"h{i:03d}", cores=4, pages_1g=4, vfs=4)
        httpx.put(f"{url}/v1/hosts/{chd['id']}", json=chd, headers=headers).raise_for_status()
    placed: list[str] = []
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
            while True:
                answer = http.post("/v1/placements", json={"vm": VM})
                with lock:
                    if answer.status_code == 201:
                        placed.append(answer.json()["id"])
                        continue
                    code = answer.json().get("code", "?")
                    counts[code] += 1
                if code != "nfvplace.placement.concurrent_update":
                    return

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(placed), time.perf_counter() - start, counts


def conflicts(url: str) -> float:
    """Compare-and-swap retries counted by the server (summed over its workers)."""
    for line in httpx.get(url + "/metrics").text.splitlines():
        if line.startswith("nfvplace_placement_conflicts_total "):
            return float(line.split()[1])
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=24)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--placer", default="nfvplace.placement:place")
    args = parser.parse_args()
    rates: dict[int, float] = {}
    with postgres() as server, tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            db = fresh_database(server)
            process, url = start_server(db, workers, args.placer, Path(tmp))
            try:
                placed, elapsed, counts = run(url, args.hosts, args.clients)
                cas = conflicts(url)
            finally:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=30)
            rates[workers] = placed / elapsed
            retries = counts.get("nfvplace.placement.concurrent_update", 0)
            print(
                f"workers={workers} hosts={args.hosts} clients={args.clients}: placed {placed} "
                f"in {elapsed:.2f} s = {rates[workers]:.1f} placements/s "
                f"(compare-and-swap retries: {cas:.0f}, 409 concurrent_update answers: {retries})"
            )
    print(f"ratio 2 workers / 1 worker: {rates[2] / rates[1]:.2f}")


if __name__ == "__main__":
    main()
