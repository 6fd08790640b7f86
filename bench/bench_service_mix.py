"""The REST service on the realistic mix, against the engine on the same requests in the same run.

    .venv/bin/python bench/bench_service_mix.py                     # SQLite and PostgreSQL, 1w and 2w
    .venv/bin/python bench/bench_service_mix.py --db sqlite --setups 1w --seconds 20

`bench_service.py` places one small VM again and again; users send a mix. Here the hosts are
`bench/hostgen` hosts (`--hosts`, 1,000) and the requests `hostgen.request_stream` (vRAN DUs,
vBRAS workers, small SR-IOV VMs and cloud VMs, as `bench_placement.py` places them), sent in one
order by `wrk` over `--clients` (8) keep-alive connections: the latency run's `--latency` requests
first, one at a time, then the stream from there for `--seconds`. Per setup it prints placements
per second, requests per second (a VM the fleet no longer takes is a 409), and the server's CPU per
request against the engine's own CPU on the very same requests in the same order, placed and
claimed on a prebuilt `FleetIndex` of the same hosts (issue 38: at most 2.5 x, and at least 150
placements/s with one SQLite worker; on PostgreSQL 2 workers at least 1.3 x one). Around the
burst it also says where the machine's time went (`where_time_goes.py`): the CPU per request of the
workers, of PostgreSQL, of wrk and of the machine's other users, the cores left idle, and on
PostgreSQL what the database's backends were doing, sampled every 5 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_service import (  # noqa: E402
    HEADERS,
    TOKEN,
    Server,
    fresh_postgres,
    load,
    new_key,
    pct,
    postgres_server,
    prebuilt_fleet,
    register,
)
from bench.hostgen import iter_fleet, request_stream  # noqa: E402
from bench.where_time_goes import measured  # noqa: E402
from nfvplace.placement import place  # noqa: E402

STREAM = 4000  # requests in the stream (cycled if a run sends more)

WRK_SCRIPT = """
local bodies = {%s}
local first = %d
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %s"
local threads = {}
function setup(thread) table.insert(threads, thread); thread:set("id", #threads) end
function init(args) placed = 0; other = 0; failed = 0; sent = 0 end
function request()  -- the stream in order, each POST with an Idempotency-Key of its own
  local k = (first + sent) %% #bodies + 1
  sent = sent + 1
  wrk.headers["Idempotency-Key"] = string.format("%s-%%d-%%d", id, sent)
  return wrk.format(nil, nil, nil, bodies[k])
end
function response(status, headers, body)
  if status == 201 then placed = placed + 1
  elseif status >= 500 then failed = failed + 1
  else other = other + 1 end
end
function done(summary, latency, requests)
  local p, o, f = 0, 0, 0
  for _, t in ipairs(threads) do p = p + t:get("placed"); o = o + t:get("other"); f = f + t:get("failed") end
  local e = summary.errors
  io.write(string.format("NFVPLACE %%d %%d %%d %%d %%f %%d %%d %%d %%d\\n", p, o, f,
    e.connect + e.read + e.write + e.timeout, summary.duration / 1e6,
    e.connect, e.read, e.write, e.timeout))
end
"""


def bodies(seed: int) -> list[str]:
    """The stream's POST bodies, in order."""
    return [
        json.dumps({"vm": vm.model_dump(mode="json", by_alias=True, exclude_none=True)})
        for vm in request_stream(STREAM, seed=seed)
    ]


def latency(url: str, stream: Sequence[str], count: int) -> tuple[list[float], Counter[int]]:
    times: list[float] = []
    statuses: Counter[int] = Counter()
    headers = {**HEADERS, "Content-Type": "application/json"}
    with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
        for k in range(count):
            start = time.perf_counter()
            answer = http.post("/v1/placements", content=stream[k % len(stream)], headers=new_key())
            times.append((time.perf_counter() - start) * 1000)
            statuses[answer.status_code] += 1
    return times, statuses


def throughput(
    url: str, stream: Sequence[str], first: int, clients: int, seconds: float, folder: Path
) -> tuple[float, Counter[str]]:
    """wrk (one thread, `clients` connections) sending the stream from request `first` on."""
    script = folder / f"mix-{uuid.uuid4().hex}.lua"
    quoted = ",".join(f"[==[{body}]==]" for body in stream)
    script.write_text(WRK_SCRIPT % (quoted, first, TOKEN, script.stem))
    command = ["wrk", "-t1", f"-c{clients}", f"-d{seconds:g}s", "-s", str(script)]
    out = subprocess.run([*command, url + "/v1/placements"], capture_output=True, text=True).stdout
    counts: Counter[str] = Counter()
    elapsed = 0.0
    for text in out.splitlines():
        if text.startswith("NFVPLACE "):
            placed, other, failed, transport, took, *kinds = text.split()[1:]
            counts.update(placed=int(placed), refused=int(other), errors_5xx=int(failed))
            counts["transport_error"] += int(transport)
            # wrk's kinds: connect, read (a reset or a close mid-answer), write, timeout (no
            # answer within wrk's --timeout, 2 s by default)
            for kind, count in zip(("connect", "read", "write", "timeout"), kinds, strict=False):
                if int(count):
                    counts[f"transport_error_{kind}"] += int(count)
            elapsed = float(took)
    return elapsed, counts


def engine_on(
    hosts: Sequence[dict[str, Any]], stream: Sequence[str], before: int, count: int
) -> tuple[float, float, int]:
    """The engine's mean CPU ms per request over requests `before` .. `before + count` of the
    stream (the ones before placed unmeasured), each placed and claimed on a prebuilt FleetIndex:
    `place` alone (what bench_service.py compares with), and with the index updated after it as
    the server's "index" phase and `Fleet.place` update it (`FleetIndex.take`: a claim kept
    pending stays pending, nothing built); and how many of the measured ones it placed. Since
    claims are kept pending, `place` alone no longer builds the claimed hosts: the claim is
    `take`, so `place` and `take` together are the engine placing and claiming."""
    from nfvplace.models.vmd import VmDescriptor
    from nfvplace.placement.index import claimed_alone

    fleet = prebuilt_fleet(hosts)
    vms = [VmDescriptor.model_validate(json.loads(body)["vm"]) for body in stream]
    placing = updating = 0.0
    placed = 0
    for k in range(before + count):
        started = time.process_time()
        result = place(fleet, vms[k % len(vms)], instance=f"bench-{k}")
        placed_at = time.process_time()
        if result.ok:
            fleet.take(result.hosts, claimed_alone(vms[k % len(vms)], {}, result.configurations))
        if k >= before:
            placing += placed_at - started
            updating += time.process_time() - placed_at
            placed += result.ok
    per = 1000 / max(count, 1)
    return placing * per, (placing + updating) * per, placed


def run_setup(
    db: str,
    setup: str,
    hosts: Sequence[dict[str, Any]],
    stream: Sequence[str],
    args: argparse.Namespace,
    tree: Path = ROOT,
) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="bench-mix-"))
    workers = 2 if setup == "2w" else 1
    server = Server(db, workers, folder, root=tree).start()
    try:
        register(server.url, hosts)
        for _ in range(workers * 2):  # every worker builds its index on its first request
            httpx.post(
                server.url + "/v1/placements",
                json={"vm": json.loads(stream[0])["vm"], "dry_run": True},
                headers=HEADERS,
                timeout=600,
            )
        times, statuses = latency(server.url, stream, args.latency)
        cpu_before = server.cpu_s()
        phases_before = server.phase_cpu_s()
        postgres = db if db.startswith("postgresql") else None
        with measured(server.cpu_s, postgres) as burst:
            elapsed, counts = throughput(
                server.url, stream, args.latency, args.clients, args.seconds, folder
            )
        cpu = server.cpu_s() - cpu_before
        phases = {k: v - phases_before.get(k, 0.0) for k, v in server.phase_cpu_s().items()}
        rss = server.max_rss_mib()
    finally:
        server.stop()
    answered = counts["placed"] + counts["refused"]
    engine_cpu, engine_claim_cpu, engine_placed = engine_on(hosts, stream, args.latency, answered)
    return {
        "setup": setup,
        "latency_p50_ms": statistics.median(times),
        "latency_p99_ms": pct(times, 0.99),
        "latency_statuses": dict(statuses),
        "placements_per_s": counts["placed"] / elapsed,
        "requests_per_s": answered / elapsed,
        "answers": dict(counts),
        "engine_placed": engine_placed,
        "server_cpu_ms_per_request": 1000 * cpu / max(answered, 1),
        "engine_cpu_ms_per_request": engine_cpu,
        "engine_with_index_cpu_ms_per_request": engine_claim_cpu,
        "phase_cpu_ms_per_request": {
            k: 1000 * v / max(answered, 1) for k, v in sorted(phases.items())
        },
        "max_worker_rss_mib": rss,
        "load": load(),
        "machine_cpu_ms_per_request": burst.per_request_ms(answered),
        "backend_activity": burst.activity_shares(),
    }


def report(label: str, result: dict[str, Any]) -> str:
    ratio = result["server_cpu_ms_per_request"] / result["engine_cpu_ms_per_request"]
    with_index = result["engine_with_index_cpu_ms_per_request"]
    split = ", ".join(f"{k} {v:.2f}" for k, v in result["phase_cpu_ms_per_request"].items())
    return (
        f"{label:8} {result['setup']}: {result['placements_per_s']:.0f} placements/s "
        f"({result['requests_per_s']:.0f} requests/s; {result['answers']}; the engine placed "
        f"{result['engine_placed']} of them); server CPU {result['server_cpu_ms_per_request']:.2f} "
        f"ms per request, x{ratio:.2f} the engine's {result['engine_cpu_ms_per_request']:.2f} ms "
        f"on the same requests (x{result['server_cpu_ms_per_request'] / with_index:.2f} its "
        f"{with_index:.2f} ms with its index updated; x{_inside(result)} the engine's phase inside "
        f"the server, at the same time; server phases: {split}); one client p50 "
        f"{result['latency_p50_ms']:.1f} ms, p99 {result['latency_p99_ms']:.1f} ms; worker RSS "
        f"{result['max_worker_rss_mib']:.0f} MiB; load {result['load']}\n"
        f"    the machine's 2 cores per request (ms): {_shares(result['machine_cpu_ms_per_request'])}"
        + (
            f"\n    PostgreSQL's backends, sampled: {_shares(result['backend_activity'], '%')}"
            if result["backend_activity"]
            else ""
        )
    )


def _inside(result: dict[str, Any]) -> str:
    """The server's CPU per request over its own engine phase: the engine on the same requests
    in the same process at the same time. The engine apart runs after the server stopped, when
    the machine's other users may load it more or less: on this shared machine, paired request
    by request over one run (same requests, same decisions), the engine's calls inside the server
    took 0.85-0.92 x the engine apart measured right after, and the phase against the apart figure
    0.91-1.19 x over three runs; the garbage collector made no difference (frozen or not)."""
    engine = result["phase_cpu_ms_per_request"].get("engine", 0.0)
    return f"{result['server_cpu_ms_per_request'] / engine:.2f}" if engine else "-"


def _shares(values: dict[str, float], unit: str = "") -> str:
    if unit == "%":
        return ", ".join(f"{k} {100 * v:.0f} %" for k, v in values.items())
    return ", ".join(f"{k} {v:.2f}" for k, v in values.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--latency", type=int, default=200, help="sequential POSTs for p50/p99")
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--setups", default="1w,2w")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every setup, interleaved")
    parser.add_argument(
        "--compare",
        type=Path,
        help="another source tree: each setup runs its server and then this tree's, on fresh "
        "databases, so that both see the same machine",
    )
    args = parser.parse_args()
    hosts = [h.model_dump(mode="json", by_alias=True) for h in iter_fleet(args.hosts, args.seed)]
    stream = bodies(args.seed + 1)
    results = []
    trees = [args.compare.resolve(), ROOT] if args.compare else [ROOT]
    with contextlib.ExitStack() as stack:
        pg = stack.enter_context(postgres_server()) if "postgres" in args.db else ""
        rounds = [
            (label, setup, tree)
            for _ in range(args.repeat)
            for label in args.db.split(",")
            for setup in args.setups.split(",")
            for tree in trees  # the tree compared with first, then this one
        ]
        for label, setup, tree in rounds:
            if label == "sqlite":
                db = f"sqlite:///{tempfile.mkdtemp(prefix='bench-sqlite-')}/nfvplace.db"
            else:
                db = fresh_postgres(pg)
            result = run_setup(db, setup, hosts, stream, args, tree)
            result |= {"db": label, "tree": str(tree)}
            results.append(result)
            name = label if tree == ROOT else f"{label} ({tree.name})"
            print(report(name, result), flush=True)
    print_medians(results, trees)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def print_medians(results: Sequence[dict[str, Any]], trees: Sequence[Path]) -> None:
    """Per database, setup and tree: the medians of the rounds; 2 workers against one."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault((r["db"], r["setup"], r["tree"]), []).append(r)
    for (label, setup, tree), rs in groups.items():
        rate = statistics.median(r["placements_per_s"] for r in rs)
        cpu = statistics.median(r["server_cpu_ms_per_request"] for r in rs)
        ratio = statistics.median(
            r["server_cpu_ms_per_request"] / r["engine_cpu_ms_per_request"] for r in rs
        )
        inside = statistics.median(float(_inside(r)) if _inside(r) != "-" else 0.0 for r in rs)
        name = label if Path(tree) == ROOT else f"{label} ({Path(tree).name})"
        print(
            f"median of {len(rs)}: {name:8} {setup}: {rate:.0f} placements/s, server CPU "
            f"{cpu:.2f} ms per request, x{ratio:.2f} the engine (x{inside:.2f} its engine phase)"
        )
    rates = {
        (r[0], r[1], r[2]): statistics.median(x["placements_per_s"] for x in rs)
        for r, rs in groups.items()
    }
    for label, setup, tree in rates:
        if setup == "2w" and (label, "1w", tree) in rates:
            print(
                f"{label} ({Path(tree).name}): 2 workers / 1 worker = "
                f"{rates[label, '2w', tree] / rates[label, '1w', tree]:.2f}"
            )


if __name__ == "__main__":
    main()
