"""The store's commit path alone: placements committed one after another, against another source
tree in the same run (each round runs that tree's store, then this one's, on fresh databases).

    .venv/bin/python bench/bench_commit.py --compare /tmp/base          # PostgreSQL, 3 rounds
    .venv/bin/python bench/bench_commit.py --db sqlite --commits 2000 --compare /tmp/base

The configurations are made first, by the engine, on `--hosts` seeded realistic hosts
(bench/hostgen.py): `bench_service.VM` placed and claimed `--commits` times. Each tree's store then
registers the hosts and commits the configurations in that order through
`Store.commit_placement` (the service's call: generations only, JSON made once), and reports per
commit: wall time (p50, mean), the client's CPU, and on PostgreSQL the server's CPU (every backend
of the database, from /proc). Wall time on a shared machine moves with the load; CPU less so.

PostgreSQL: $NFVPLACE_TEST_POSTGRES_URL (a server where we may CREATE DATABASE) or a throwaway
durable cluster started here.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")


def configurations(hosts: int, commits: int, seed: int) -> dict[str, Any]:
    """The hosts, and `commits` placements of `bench_service.VM` on them, as JSON data."""
    sys.path.insert(0, str(ROOT))
    from bench.bench_service import VM, prebuilt_fleet
    from bench.hostgen import iter_fleet
    from nfvplace.models.vmd import VmDescriptor
    from nfvplace.placement import place

    chds = [h.model_dump(mode="json", by_alias=True) for h in iter_fleet(hosts, seed)]
    fleet = prebuilt_fleet(chds)
    vm = VmDescriptor.model_validate(VM)
    placed = []
    for k in range(commits):
        result = place(fleet, vm, instance=f"bench-{k}")
        if not result.ok:
            break
        fleet.update_many(result.hosts.values())
        placed.append([c.model_dump(mode="json", by_alias=True) for c in result.configurations])
    return {"hosts": chds, "placements": placed}


def backend_cpu_s(engine: Any) -> float:
    """CPU seconds of every server process of the engine's database so far (PostgreSQL)."""
    from sqlalchemy import text

    with engine.connect() as conn:
        pids = conn.execute(
            text("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        ).scalars()
        total = 0
        for pid in pids:
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def child(data_file: str, url: str) -> None:
    """Run in the compared tree (PYTHONPATH): commit every placement, print the figures."""
    from nfvplace.models.chd import ComputeHostDescriptor
    from nfvplace.models.configuration import VmConfiguration
    from nfvplace.store import Snapshot, Store

    data = json.loads(Path(data_file).read_text())
    store = Store.open(url)
    generations = {}
    for chd in data["hosts"]:
        put = store.put_host(ComputeHostDescriptor.model_validate(chd))
        generations[put.id] = put.generation
    placements = [[VmConfiguration.model_validate(c) for c in p] for p in data["placements"]]
    postgres = store.engine.dialect.name == "postgresql"
    server_before = backend_cpu_s(store.engine) if postgres else 0.0
    walls = []
    started_cpu = time.process_time()
    for k, configs in enumerate(placements):
        touched = {c.host for c in configs}
        snapshot = Snapshot(hosts={}, generations={h: generations[h] for h in touched})
        start = time.perf_counter()
        store.commit_placement(
            placement_id=f"p-{k}",
            idempotency_key=f"key-{k}",
            request_hash="bench",
            response={"id": f"p-{k}"},
            configurations=configs,
            snapshot=snapshot,
        )
        walls.append(time.perf_counter() - start)
        for h in touched:
            generations[h] += 1
    client = time.process_time() - started_cpu
    server = backend_cpu_s(store.engine) - server_before if postgres else 0.0
    store.close()
    count = len(walls)
    print(
        json.dumps(
            {
                "commits": count,
                "wall_p50_ms": statistics.median(walls) * 1000,
                "wall_mean_ms": sum(walls) * 1000 / count,
                "client_cpu_ms": client * 1000 / count,
                "server_cpu_ms": server * 1000 / count,
            }
        )
    )


def run_tree(tree: Path, data_file: str, url: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, __file__, "--child", data_file, url],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=tree,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def database(kind: str, server: str) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tempfile.mkdtemp(prefix='bench-commit-')}/nfvplace.db"
    sys.path.insert(0, str(ROOT))
    from bench.bench_service import fresh_postgres

    return fresh_postgres(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--commits", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--db", default="postgres", choices=["postgres", "sqlite"])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--compare", type=Path, help="another source tree, run first each round")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    data = configurations(args.hosts, args.commits, args.seed)
    trees = [args.compare.resolve(), ROOT] if args.compare else [ROOT]
    figures: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    with contextlib.ExitStack() as stack:
        server = ""
        if args.db == "postgres":
            sys.path.insert(0, str(ROOT))
            from bench.bench_service import postgres_server

            server = stack.enter_context(postgres_server())
        data_file = stack.enter_context(tempfile.NamedTemporaryFile("w", suffix=".json"))
        data_file.write(json.dumps(data))
        data_file.flush()
        for round_ in range(args.rounds):
            for tree in trees:
                found = run_tree(tree, data_file.name, database(args.db, server))
                figures[tree].append(found)
                print(f"round {round_ + 1} {tree.name}: {json.dumps(found)} (load {load()})")
    print_medians(figures, trees)


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def print_medians(figures: dict[Path, list[dict[str, float]]], trees: list[Path]) -> None:
    keys = ("wall_p50_ms", "wall_mean_ms", "client_cpu_ms", "server_cpu_ms")
    medians = {t: {k: statistics.median(f[k] for f in figures[t]) for k in keys} for t in trees}
    for tree in trees:
        shown = ", ".join(f"{k} {medians[tree][k]:.3f}" for k in keys)
        print(f"median {tree.name}: {shown}")
    if len(trees) == 2:
        base, this = trees
        ratios = ", ".join(
            f"{k} {medians[this][k] / medians[base][k]:.2f} x" for k in keys if medians[base][k] > 0
        )
        print(f"{this.name} / {base.name}: {ratios}")


if __name__ == "__main__":
    main()
