"""The REST service at fleet scale, on SQLite and PostgreSQL, against the engine in the same run.

    .venv/bin/python bench/bench_service.py                       # 1,000 hosts, every setup
    .venv/bin/python bench/bench_service.py --hosts 10000 --db sqlite --setups 1w --placements 0
    .venv/bin/python bench/bench_service.py --db postgres --setups 1w,2w,2r
    .venv/bin/python bench/bench_service.py --repeat 3   # 3 interleaved rounds, and their medians
    .venv/bin/python bench/bench_service.py --db postgres --setups 1w,2w --pin-workers

For each database (a fresh one per setup) and each setup (`1w`: one `nfvplace serve` with 1 worker,
`2w`: 2 workers, `2r`: two separate `nfvplace serve` processes, replicas, over the same database) it
registers `--hosts` seeded realistic hosts (bench/hostgen.py) with `PUT /v1/hosts/{id}`, then measures:
`POST /v1/placements` latency with one client (p50/p99, HTTP included), placements per second with
`--clients` concurrent clients (spread over the replicas), compare-and-swap retries (the servers'
`nfvplace_placement_conflicts_total`), the 409 and 5xx answers, `PUT` of a known host (p50) and the
largest worker's RSS. The baseline is the engine itself on a prebuilt `FleetIndex` of the same hosts,
placing the same VM, measured in this run: each door's overhead is printed as a ratio to it. Server
CPU per placement is compared with the engine making the very placements the throughput run made
(the same count, after the latency run's, on a fleet as full), and, as before, with the engine's
first placements on an empty fleet, measured either side of the setup (the engine's cost depends on
how full the fleet is: see `engine_on_same_placements`).

PostgreSQL: $NFVPLACE_TEST_POSTGRES_URL (a server where we may CREATE DATABASE) or a throwaway
durable cluster started here. Print `uptime`'s load with the figures: the machine is shared.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import yaml
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from pg_cluster import free_port, throwaway_cluster  # noqa: E402

from bench.hostgen import iter_fleet  # noqa: E402
from nfvplace.models.vmd import VmDescriptor  # noqa: E402
from nfvplace.placement import FleetIndex, place  # noqa: E402

TOKEN = "bench-admin-token-0123456789"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
# A small data-plane VM: one whole core (a howtogroup pair), 2 x 1 GiB pages, one SR-IOV VF
VM: dict[str, Any] = {
    "schema": "nfvplace/vmd/v1",
    "name": "dp-small",
    "cpu_sets": [
        {
            "id": 0,
            "vcpus": [0, 1],
            "howtogroup": [[0, 1]],
            "memory_mib": 4096,
            "hugepages": {"size": "1GiB", "count": 2},
            "interfaces": [{"name": "e0", "mode": "sriov", "speed_gbps": 10, "bandwidth_gbps": 1}],
        }
    ],
}


def load() -> str:
    return os.getloadavg().__repr__()


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)] if ordered else float("nan")


# --- databases and servers -------------------------------------------------------------------


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    given = os.environ.get("NFVPLACE_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    with throwaway_cluster(durable=True) as url:
        yield url


def fresh_postgres(server: str) -> str:
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


@dataclass
class Server:
    db: str
    workers: int
    folder: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    extra: list[str] = field(default_factory=list)  # more `nfvplace serve` options
    root: Path = ROOT  # the source tree the server runs

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        tokens = self.folder / "tokens.yaml"
        tokens.write_text(yaml.safe_dump({"admin": [TOKEN]}))
        tokens.chmod(0o600)  # a tokens file others can read is refused
        env = {
            **os.environ,
            "PYTHONPATH": str(self.root),  # this tree, or the one --compare names
            "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="metrics-", dir=self.folder),
        }
        argv = [sys.executable, "-m", "nfvplace", "serve", "--db", self.db]
        argv += ["--port", str(self.port), "--workers", str(self.workers), "--tokens", str(tokens)]
        argv += self.extra
        self.process = subprocess.Popen(
            argv,
            cwd=self.root,  # `python -m` looks in the current folder first
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(self.folder / f"server-{self.port}.log").open("wb"),
            start_new_session=True,
        )
        for _ in range(6000):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return self
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise SystemExit(f"server did not start; see {self.folder}")

    def pids(self) -> list[int]:
        """The server's processes (its process group: uvicorn and its workers)."""
        assert self.process is not None
        out = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    if os.getpgid(int(entry.name)) == self.process.pid:
                        out.append(int(entry.name))
        return out

    def max_rss_mib(self) -> float:
        biggest = 0.0
        for pid in self.pids():
            with contextlib.suppress(OSError):
                for text in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if text.startswith("VmRSS:"):
                        biggest = max(biggest, int(text.split()[1]) / 1024)
        return biggest

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the server's processes have used so far."""
        return sum(self.cpu_by_pid().values())

    def cpu_by_pid(self) -> dict[int, float]:
        """CPU seconds (user + system) each of the server's processes has used so far."""
        ticks = os.sysconf("SC_CLK_TCK")
        out: dict[int, float] = {}
        for pid in self.pids():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                out[pid] = (int(fields[11]) + int(fields[12])) / ticks
        return out

    def phase_cpu_s(self) -> dict[str, float]:
        """The workers' CPU seconds of placing by phase (nfvplace_placement_cpu_seconds)."""
        out: dict[str, float] = {}
        for text in httpx.get(self.url + "/metrics").text.splitlines():
            if text.startswith("nfvplace_placement_cpu_seconds_total{"):
                phase = text.split('phase="', 1)[1].split('"', 1)[0]
                out[phase] = out.get(phase, 0.0) + float(text.split()[-1])
        return out

    def counter(self, name: str) -> float:
        """A counter of the servers' /metrics (0 when it has none)."""
        for text in httpx.get(self.url + "/metrics").text.splitlines():
            if text.startswith(f"{name} "):
                return float(text.split()[1])
        return 0.0

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=60)


# --- the measurements --------------------------------------------------------------------------


def register(url: str, hosts: Sequence[dict[str, Any]], clients: int = 4) -> list[float]:
    """PUT every host (a few clients in parallel); the latencies in ms."""
    times: list[float] = []
    chunks = [hosts[k::clients] for k in range(clients)]

    def run(chunk: Sequence[dict[str, Any]]) -> None:
        with httpx.Client(base_url=url, headers=HEADERS, timeout=120) as http:
            for chd in chunk:
                start = time.perf_counter()
                answer = http.put(f"/v1/hosts/{chd['id']}", json=chd)
                times.append((time.perf_counter() - start) * 1000)
                answer.raise_for_status()

    threads = [threading.Thread(target=run, args=(c,)) for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times


def new_key() -> dict[str, str]:
    """A POST's own Idempotency-Key: docs/service.md asks MANO integrators to send one with every
    placement, so the benchmark does too (the server looks each one up before placing)."""
    return {"Idempotency-Key": uuid.uuid4().hex}


def latency(url: str, count: int) -> tuple[list[float], Counter[int]]:
    times: list[float] = []
    statuses: Counter[int] = Counter()
    with httpx.Client(base_url=url, headers=HEADERS, timeout=120) as http:
        for _ in range(count):
            start = time.perf_counter()
            answer = http.post("/v1/placements", json={"vm": VM}, headers=new_key())
            times.append((time.perf_counter() - start) * 1000)
            statuses[answer.status_code] += 1
    return times, statuses


def throughput(urls: Sequence[str], clients: int, total: int) -> tuple[float, Counter[str]]:
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    per_client = max(total // clients, 1)

    def client(k: int) -> None:
        with httpx.Client(base_url=urls[k % len(urls)], headers=HEADERS, timeout=120) as http:
            for _ in range(per_client):
                try:
                    answer = http.post("/v1/placements", json={"vm": VM}, headers=new_key())
                except httpx.HTTPError:
                    with lock:
                        counts["transport_error"] += 1
                    continue
                if answer.status_code == 201:
                    key = "placed"
                elif answer.status_code >= 500:
                    key = "5xx"
                else:
                    key = str(answer.json().get("code", answer.status_code))
                with lock:
                    counts[key] += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, counts


WRK_SCRIPT = """
wrk.method = "POST"
wrk.body = [==[%s]==]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %s"
local threads = {}
function setup(thread) table.insert(threads, thread); thread:set("id", #threads) end
function init(args) placed = 0; other = 0; failed = 0; replayed = 0; sent = 0 end
function request()  -- every POST with an Idempotency-Key of its own, as integrators send them
  sent = sent + 1
  wrk.headers["Idempotency-Key"] = string.format("%s-%%d-%%d", id, sent)
  return wrk.format()
end
function response(status, headers, body)
  if status == 201 and headers["Idempotent-Replayed"] then replayed = replayed + 1
  elseif status == 201 then placed = placed + 1
  elseif status >= 500 then failed = failed + 1
  else other = other + 1 end
end
function done(summary, latency, requests)
  local p, o, f, r = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    p = p + t:get("placed"); o = o + t:get("other"); f = f + t:get("failed")
    r = r + t:get("replayed")
  end
  io.write(string.format("NFVPLACE %%d %%d %%d %%d %%d %%f\\n", p, o, f, r,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.duration / 1e6))
end
"""


def throughput_wrk(
    urls: Sequence[str], clients: int, seconds: float, folder: Path
) -> tuple[float, Counter[str]]:
    """Placements per second from `wrk` (a load generator in C, in its own process, so that the
    clients do not take the CPU the server needs), `clients` connections spread over the servers."""
    share = max(clients // len(urls), 1)
    runs = []
    for url in urls:
        script = folder / f"post-{uuid.uuid4().hex}.lua"  # a key prefix of its own per wrk
        script.write_text(WRK_SCRIPT % (json.dumps({"vm": VM}), TOKEN, script.stem))
        command = ["wrk", "-t1", f"-c{share}", f"-d{seconds:g}s", "-s", str(script)]
        runs.append(
            subprocess.Popen([*command, url + "/v1/placements"], stdout=subprocess.PIPE, text=True)
        )
    counts: Counter[str] = Counter()
    elapsed = 0.0
    for run in runs:
        out, _ = run.communicate()
        for text in out.splitlines():
            if text.startswith("NFVPLACE "):
                placed, other, failed, replayed, transport, took = text.split()[1:]
                counts["placed"] += int(placed)
                counts["not placed (4xx)"] += int(other)
                counts["5xx"] += int(failed)
                counts["replayed (a key sent twice: a bug here)"] += int(replayed)
                counts["transport_error"] += int(transport)
                elapsed = max(elapsed, float(took))
    return elapsed, counts


def replace_hosts(url: str, hosts: Sequence[dict[str, Any]], count: int) -> list[float]:
    """PUT hosts that exist already (an agent's periodic report), one client."""
    times = []
    with httpx.Client(base_url=url, headers=HEADERS, timeout=120) as http:
        for chd in hosts[:count]:
            start = time.perf_counter()
            http.put(f"/v1/hosts/{chd['id']}", json=chd).raise_for_status()
            times.append((time.perf_counter() - start) * 1000)
    return times


def prebuilt_fleet(hosts: Sequence[dict[str, Any]]) -> FleetIndex:
    from nfvplace.models.chd import ComputeHostDescriptor

    chds = [ComputeHostDescriptor.model_validate(h) for h in hosts]
    return FleetIndex(chds, compact=len(hosts) >= 2000)


def engine_baseline(hosts: Sequence[dict[str, Any]], count: int) -> tuple[float, float]:
    """p50 ms of the engine placing VM `count` times on a prebuilt FleetIndex, claiming each,
    and its mean CPU ms per placement (`place` alone, not the index update after it): what the
    server's CPU per placement is compared with (CPU time, unlike wall time, is not inflated by
    a loaded machine)."""
    fleet = prebuilt_fleet(hosts)
    vm = VmDescriptor.model_validate(VM)
    times = []
    cpu = 0.0
    for k in range(count):
        start, started = time.perf_counter(), time.process_time()
        result = place(fleet, vm, instance=f"bench-{k}")
        cpu += time.process_time() - started
        times.append((time.perf_counter() - start) * 1000)
        fleet.update_many(result.hosts.values())
    return statistics.median(times), cpu * 1000 / count


def engine_on_same_placements(hosts: Sequence[dict[str, Any]], before: int, count: int) -> float:
    """Mean CPU ms per placement of the engine making the placements a setup's throughput run
    measured: on a fresh prebuilt FleetIndex it places VM `before` times unmeasured (the latency
    run's placements, which came first in the server), then `count` times measured, claiming
    each. The engine's cost depends on how full the fleet is (about 0.9 ms on an empty fleet,
    1.6 ms with 200 of these VMs placed, 1.1 ms with 2,000), so the first placements alone
    (`engine_baseline`) are not the server's placements."""
    fleet = prebuilt_fleet(hosts)
    vm = VmDescriptor.model_validate(VM)
    cpu = 0.0
    for k in range(before + count):
        started = time.process_time()
        result = place(fleet, vm, instance=f"bench-{k}")
        if k >= before:
            cpu += time.process_time() - started
        fleet.update_many(result.hosts.values())
    return cpu * 1000 / max(count, 1)


def same_engine_ratio(result: dict[str, Any]) -> float:
    """Server CPU per placement over the engine's on the same placements (issue 23's measure)."""
    return float(result["server_cpu_ms_per_placement"] / result["engine_same_cpu_ms"])


def engine_share(result: dict[str, Any]) -> float:
    """Server CPU per placement over the engine's own CPU in the same placements (its phase)."""
    engine = result["phase_cpu_ms_per_placement"].get("engine", 0.0)
    return float(result["server_cpu_ms_per_placement"] / engine) if engine else float("nan")


def run_setup(
    label: str,
    db: str,
    setup: str,
    hosts: Sequence[dict[str, Any]],
    args: argparse.Namespace,
    root: Path = ROOT,
) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="bench-service-"))
    workers = 2 if setup == "2w" else 1
    pin = ["--pin-workers"] if args.pin_workers and setup != "2r" else []
    servers = [Server(db, workers, folder, root=root, extra=pin).start()]
    if setup == "2r":
        servers.append(Server(db, 1, folder, root=root).start())
    try:
        put_create = register(servers[0].url, hosts)
        warm = []
        for server in servers:  # every worker builds its index on its first request
            for _ in range(workers * 2):
                start = time.perf_counter()
                httpx.post(
                    server.url + "/v1/placements",
                    json={"vm": VM, "dry_run": True},
                    headers=HEADERS,
                    timeout=600,
                )
                warm.append((time.perf_counter() - start) * 1000)
        times, statuses = latency(servers[0].url, args.latency)
        urls = [s.url for s in servers]
        cpu_before = sum(s.cpu_s() for s in servers)
        by_pid_before = {p: c for s in servers for p, c in s.cpu_by_pid().items()}
        read_before = sum(s.counter("nfvplace_hosts_read_total") for s in servers)
        phases_before = [s.phase_cpu_s() for s in servers]
        if shutil.which("wrk") and not args.python_clients:
            elapsed, counts = throughput_wrk(urls, args.clients, args.seconds, folder)
        else:
            elapsed, counts = throughput(urls, args.clients, args.placements)
        cpu = sum(s.cpu_s() for s in servers) - cpu_before
        # how the work was shared: the kernel spreads connections over the workers' sockets by a
        # hash, and 8 connections may land unevenly (a worker with none idles)
        spent = sorted(
            (c - by_pid_before.get(p, 0.0) for s in servers for p, c in s.cpu_by_pid().items()),
            reverse=True,
        )
        busy = [c for c in spent if c > 0.05 * max(cpu, 1e-9)]
        read = sum(s.counter("nfvplace_hosts_read_total") for s in servers) - read_before
        phases: Counter[str] = Counter()
        for server, before in zip(servers, phases_before, strict=True):
            for phase, seconds in server.phase_cpu_s().items():
                phases[phase] += seconds - before.get(phase, 0.0)
        put_replace = replace_hosts(servers[0].url, hosts, min(args.latency, len(hosts)))
        retries = sum(s.counter("nfvplace_placement_conflicts_total") for s in servers)
        rss = max(s.max_rss_mib() for s in servers)
    finally:
        for server in servers:
            server.stop()
    answered = sum(counts.values())
    return {
        "db": label,
        "setup": setup,
        "hosts": len(hosts),
        "first_request_ms": max(warm),
        "post_p50_ms": statistics.median(times),
        "post_p99_ms": pct(times, 0.99),
        "post_statuses": dict(statuses),
        "placements_per_s": counts["placed"] / elapsed if elapsed else 0.0,
        "placed": counts["placed"],
        "retries": retries,
        "rate_409": sum(v for k, v in counts.items() if k.startswith(("nfvplace.", "not placed")))
        / max(answered, 1),
        "answers": dict(counts),
        "errors_5xx": counts["5xx"] + sum(v for k, v in statuses.items() if k >= 500),
        "server_cpu_ms_per_placement": 1000 * cpu / max(counts["placed"], 1),
        "hosts_read_per_placement": read / max(counts["placed"], 1),
        "busy_process_cpu_shares": [round(c / max(cpu, 1e-9), 2) for c in busy],
        "phase_cpu_ms_per_placement": {
            **{k: 1000 * v / max(counts["placed"], 1) for k, v in sorted(phases.items())},
            "http and the rest": 1000 * (cpu - sum(phases.values())) / max(counts["placed"], 1),
        },
        "put_create_p50_ms": statistics.median(put_create),
        "put_replace_p50_ms": statistics.median(put_replace),
        "max_worker_rss_mib": rss,
        "load": load(),
    }


def report(label: str, setup: str, result: dict[str, Any], clients: int) -> str:
    engine_ms, engine_cpu_ms = result["engine_p50_ms"], result["engine_cpu_ms"]
    split = ", ".join(f"{k} {v:.2f}" for k, v in result["phase_cpu_ms_per_placement"].items())
    return (
        f"{label:8} {setup}: POST p50 {result['post_p50_ms']:.1f} ms "
        f"(x{result['post_p50_ms'] / engine_ms:.1f} the engine) p99 "
        f"{result['post_p99_ms']:.1f} ms; {result['placements_per_s']:.0f} placements/s "
        f"with {clients} clients ({result['placed']} placed, "
        f"{result['retries']:.0f} CAS retries, {result['hosts_read_per_placement']:.2f} hosts "
        f"read per placement, 409 rate {result['rate_409']:.3f}, "
        f"5xx {result['errors_5xx']}); PUT p50 create {result['put_create_p50_ms']:.1f} ms, "
        f"replace {result['put_replace_p50_ms']:.1f} ms; server CPU per placement "
        f"{result['server_cpu_ms_per_placement']:.2f} ms "
        f"(x{same_engine_ratio(result):.2f} the engine's {result['engine_same_cpu_ms']:.2f} ms "
        f"on the same placements; "
        f"x{result['server_cpu_ms_per_placement'] / engine_cpu_ms:.2f} its first "
        f"placements' {engine_cpu_ms:.2f} ms, measured either side: "
        f"{' and '.join(f'{v:.2f}' for v in result['engine_cpu_ms_either_side'])}; "
        f"x{engine_share(result):.2f} the engine's inside the server: {split}); first request "
        f"{result['first_request_ms']:.0f} ms; worker RSS {result['max_worker_rss_mib']:.0f} MiB; "
        f"load {result['load']}; CPU shares of the busy processes "
        f"{result['busy_process_cpu_shares']}"
    )


def print_medians(results: Sequence[dict[str, Any]], dbs: Sequence[str], rounds: int) -> None:
    """Per setup of this tree: the median placements/s and CPU per placement (as a ratio to the
    engine measured either side of each run) over the rounds, and the workers' and replicas'
    placements/s over one worker's (medians over medians)."""
    rate: dict[tuple[str, str], float] = {}
    for (label, setup), runs in _by_setup(results).items():
        rate[label, setup] = statistics.median(r["placements_per_s"] for r in runs)
        cpu = statistics.median(r["server_cpu_ms_per_placement"] for r in runs)
        same = [same_engine_ratio(r) for r in runs]
        first = [r["server_cpu_ms_per_placement"] / r["engine_cpu_ms"] for r in runs]
        print(
            f"{label} {setup}, median of {len(runs)}: {rate[label, setup]:.0f} placements/s, "
            f"{cpu:.2f} ms of CPU per placement, x{statistics.median(same):.2f} the engine on "
            f"the same placements (runs: {', '.join(f'x{v:.2f}' for v in same)}), "
            f"x{statistics.median(first):.2f} its first placements "
            f"(runs: {', '.join(f'x{v:.2f}' for v in first)})"
        )
    for label in dbs:
        one = rate.get((label, "1w"))
        for setup, name in (("2w", "2 workers"), ("2r", "2 replicas")):
            if one and (label, setup) in rate:
                median = "medians" if rounds > 1 else "one run each"
                print(f"{label}: {name} / 1 worker = {rate[label, setup] / one:.2f} ({median})")


def _by_setup(results: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for result in results:
        if result["tree"] == str(ROOT):
            out.setdefault((result["db"], result["setup"]), []).append(result)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--placements", type=int, default=800, help="for the throughput run (Python clients)"
    )
    parser.add_argument(
        "--seconds", type=float, default=10, help="for the throughput run with wrk (the default)"
    )
    parser.add_argument(
        "--python-clients",
        action="store_true",
        help="throughput from Python threads instead of wrk (they share the server's CPU)",
    )
    parser.add_argument("--latency", type=int, default=200, help="sequential POSTs for p50/p99")
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--setups", default="1w,2w,2r")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds of every setup, interleaved; medians are printed at the end (this machine's "
        "speed drifts by up to 2x between minutes: one round can land a setup in a slow spell)",
    )
    parser.add_argument(
        "--pin-workers",
        action="store_true",
        help="serve 1w and 2w with --pin-workers (not 2r: two servers would pin to the same CPU)",
    )
    parser.add_argument(
        "--compare",
        type=Path,
        help="another source tree (e.g. `git archive main | tar -x -C DIR`): each setup runs "
        "its server and then this tree's, on fresh databases, so that both see the same machine",
    )
    args = parser.parse_args()
    hosts = [h.model_dump(mode="json", by_alias=True) for h in iter_fleet(args.hosts, args.seed)]
    engine_ms, engine_cpu_ms = engine_baseline(hosts, args.latency)
    print(
        f"engine on a prebuilt FleetIndex, {args.hosts} hosts: p50 {engine_ms:.2f} ms, "
        f"{engine_cpu_ms:.2f} ms of CPU per placement ({load()})"
    )
    results = []
    trees = [args.compare.resolve(), ROOT] if args.compare else [ROOT]
    with contextlib.ExitStack() as stack:
        pg = stack.enter_context(postgres_server()) if "postgres" in args.db else ""
        rounds = [
            (label, setup)
            for _ in range(args.repeat)
            for label in args.db.split(",")
            for setup in args.setups.split(",")
        ]
        for label, setup in rounds:
            for tree in trees:  # the tree compared with first, then this one
                if label == "sqlite":
                    db = f"sqlite:///{tempfile.mkdtemp(prefix='bench-sqlite-')}/nfvplace.db"
                else:
                    db = fresh_postgres(pg)
                result = run_setup(label, db, setup, hosts, args, tree)
                # the machine's speed drifts (it is shared): the engine is measured again
                # right after each setup, and the setup is compared with the mean of the
                # measurements either side of it
                after_ms, after_cpu_ms = engine_baseline(hosts, args.latency)
                result.update(tree=str(tree), engine_p50_ms=(engine_ms + after_ms) / 2)
                result["engine_cpu_ms"] = (engine_cpu_ms + after_cpu_ms) / 2
                result["engine_cpu_ms_either_side"] = [engine_cpu_ms, after_cpu_ms]
                result["engine_same_cpu_ms"] = engine_on_same_placements(
                    hosts, args.latency, result["placed"]
                )
                engine_ms, engine_cpu_ms = after_ms, after_cpu_ms
                results.append(result)
                name = label if tree == ROOT else f"{label} ({tree.name})"
                print(report(name, setup, result, args.clients), flush=True)
    print_medians(results, args.db.split(","), args.repeat)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
