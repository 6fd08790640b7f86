"""`POST /v1/evaluations` at 100 candidate hosts, HTTP included, as Nova's scheduler filter asks it.

    .venv/bin/python bench/bench_evaluations.py [--hosts 100] [--requests 300]

One `nfvplace serve` (1 worker, SQLite, no auth) on a free port; one client on a keep-alive
connection. The hosts are what the filter sends (`nfvplace.integrations.nova.hosts.chd_of`) for
Nova hosts of two 20-core SMT cells (192 GiB, 1 GiB pages, QAT pools), 0-70 % of their cores
pinned; the VM is a Nova flavor (4 dedicated vCPUs, 1 GiB pages) sent with `"dialect"`.

- `steady`: the scheduler's steady state: between two requests one host changed (the best one of
  the last answer, which took the instance: 4 more CPUs pinned, its pages used). p50 and p90.
- `cold`: every host changed since the last request (nothing known before). p50.

Baselines measured in the same run: `GET /healthz` over the same connection (the HTTP floor) and
`nfvplace.placement.evaluate` on the same 100 CHDs in process (the engine, its index built cold).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nfvplace.integrations.nova.hosts import chd_of  # noqa: E402

FLAVOR = {
    "flavor": {
        "name": "vnf.dp.4",
        "vcpus": 4,
        "ram": 4096,
        "extra_specs": {
            "hw:cpu_policy": "dedicated",
            "hw:cpu_thread_policy": "prefer",
            "hw:mem_page_size": "1GB",
        },
    }
}


def nova_host(rng: random.Random, name: str) -> dict[str, Any]:
    """A Nova host view: 2 cells x 20 cores x 2 threads, core 0 of each cell for the host."""
    cells = []
    for c in range(2):
        cores = [[c * 20 + k, c * 20 + k + 40] for k in range(20)]
        dedicated = [pu for core in cores[1:] for pu in core]
        busy = rng.choice((0.0, 0.2, 0.4, 0.7))
        pinned = [pu for core in cores[1:] if rng.random() < busy for pu in core]
        pages = 64
        used = rng.randint(0, 48)
        cells.append(
            {
                "id": c,
                "cpuset": [],
                "pcpuset": dedicated,
                "pinned_cpus": pinned,
                "siblings": cores,
                "memory": 196608,
                "memory_usage": used * 1024,
                "cpu_usage": 0,
                "mempages": [
                    {
                        "size_kb": 4,
                        "total": (196608 - pages * 1024) * 256,
                        "used": 0,
                        "reserved": 0,
                    },
                    {"size_kb": 1048576, "total": pages, "used": used, "reserved": 0},
                ],
                "socket": c,
            }
        )
    pools = [
        {
            "vendor_id": "8086",
            "product_id": "0443",
            "numa_node": c,
            "dev_type": "type-PCI",
            "physical_network": None,
            "count": rng.randint(0, 4),
        }
        for c in range(2)
    ]
    return {
        "host": name,
        "nodename": name,
        "cpu_allocation_ratio": 4.0,
        "ram_allocation_ratio": 1.0,
        "cpu_info": {"vendor": "Intel", "model": "Skylake", "features": ["aes", "vmx"]},
        "cells": cells,
        "pci_pools": pools,
    }


def took(view: dict[str, Any]) -> None:
    """The host took the instance: 4 more CPUs pinned and 4 pages used on its first cell with room."""
    for cell in view["cells"]:
        free = [pu for pu in cell["pcpuset"] if pu not in cell["pinned_cpus"]]
        pages = cell["mempages"][1]
        if len(free) >= 4 and pages["total"] - pages["used"] >= 4:
            cell["pinned_cpus"] = sorted(cell["pinned_cpus"] + free[:4])
            pages["used"] += 4
            return


class Server:
    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="bench-eval-")
        self.port = free_port()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nfvplace",
                "serve",
                "--no-auth",
                "--port",
                str(self.port),
                "--db",
                f"sqlite:///{self.folder}/n.db",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for _ in range(300):
            try:
                if self.request("GET", "/readyz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("nfvplace serve did not start")

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        conn = self.connect()
        try:
            conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
            answer = conn.getresponse()
            return answer.status, answer.read()
        finally:
            conn.close()

    def cpu_seconds(self) -> float:
        """CPU time (user + system) of the server's processes so far: what a request costs the
        server whatever else runs on the machine."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == self.process.pid:  # process group
                total += int(fields[11]) + int(fields[12])
        return total / ticks

    def stop(self) -> None:
        os.killpg(self.process.pid, 15)
        self.process.wait(timeout=30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def timed(
    conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None
) -> tuple[float, bytes]:
    started = time.perf_counter()
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
    answer = conn.getresponse()
    data = answer.read()
    elapsed = time.perf_counter() - started
    if answer.status != 200:
        raise RuntimeError(f"{method} {path}: {answer.status} {data[:500]!r}")
    return elapsed, data


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 2 else max(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    views = [nova_host(rng, f"compute-{k:03d}") for k in range(args.hosts)]
    server = Server()
    try:
        conn = server.connect()
        floor = [timed(conn, "GET", "/healthz", None)[0] for _ in range(200)]
        body = lambda: json.dumps(  # noqa: E731
            {"vm": FLAVOR, "dialect": "openstack-flavor", "hosts": [chd_of(v) for v in views]}
        ).encode()
        steady = []
        cpu_before = server.cpu_seconds()
        for _ in range(args.requests):
            elapsed, data = timed(conn, "POST", "/v1/evaluations", body())
            steady.append(elapsed)
            answers = json.loads(data)["hosts"]
            best = max(range(len(answers)), key=lambda i: (answers[i]["fits"], answers[i]["score"]))
            took(views[best])
        cpu = (server.cpu_seconds() - cpu_before) / args.requests
        cold = []
        for k in range(max(args.requests // 15, 5)):
            for view in views:  # every host changed: one more small page used on a cell
                view["cells"][k % 2]["mempages"][0]["used"] += 256
            cold.append(timed(conn, "POST", "/v1/evaluations", body())[0])
        engine = engine_baseline(views)
    finally:
        server.stop()
    report(args, steady, cold, floor, engine, len(body()), cpu)


def engine_baseline(views: list[dict[str, Any]]) -> list[float]:
    from nfvplace.models.chd import ComputeHostDescriptor
    from nfvplace.models.loading import SourceDocument
    from nfvplace.placement import evaluate
    from nfvplace.reader import load_document

    vm = load_document(SourceDocument(data=FLAVOR, source="flavor"))
    out = []
    for _ in range(7):
        hosts = [ComputeHostDescriptor.model_validate(chd_of(v)) for v in views]
        started = time.perf_counter()
        evaluate(hosts, vm)
        out.append(time.perf_counter() - started)
    return out[1:]


def report(
    args: argparse.Namespace,
    steady: list[float],
    cold: list[float],
    floor: list[float],
    engine: list[float],
    size: int,
    cpu: float,
) -> None:
    ms: Callable[[float], str] = lambda s: f"{s * 1000:.1f} ms"  # noqa: E731
    print(
        f"{args.hosts} hosts, {args.requests} requests, body {size // 1024} KiB; load {os.getloadavg()}"
    )
    print(f"steady: server CPU per request {ms(cpu)} (parse, validate, solve, answer)")
    print(
        f"steady (1 host changed per request): p50 {ms(statistics.median(steady))}, "
        f"p90 {ms(p(steady, 90))}"
    )
    print(f"cold (every host changed):           p50 {ms(statistics.median(cold))}")
    print(
        f"baseline GET /healthz p50 {ms(statistics.median(floor))}; "
        f"engine in process (cold index) p50 {ms(statistics.median(engine))}"
    )
    print(
        f"ratios: steady p50 / engine {statistics.median(steady) / statistics.median(engine):.2f}, "
        f"cold p50 / engine {statistics.median(cold) / statistics.median(engine):.2f}, "
        f"steady p50 / HTTP floor {statistics.median(steady) / statistics.median(floor):.1f}"
    )


if __name__ == "__main__":
    main()
