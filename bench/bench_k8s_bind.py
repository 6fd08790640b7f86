"""The Kubernetes door's bind verb under concurrent binding cycles: binds a second and their
latency, this checkout against another one in the same run.

    .venv/bin/python -m bench.bench_k8s_bind [--compare /path/to/other/checkout] [--nodes 50]
        [--pods 400] [--threads 16] [--api-ms 20] [--rounds 3] [--db sqlite|postgres]

kube-scheduler runs its binding cycles concurrently, and each bind nfvplace serves ends in one call
to the API server that creates the pod's Binding. Each tree's `bind_call` runs in a child process
of its own, over `--nodes` NodeResourceTopology nodes stored as the door stores them (SQLite file or
a fresh PostgreSQL database), with `--threads` threads binding `--pods` pods to nodes round-robin.
The API server is a function that waits `--api-ms` before the Binding lands: the time an API
server (and its etcd) takes to answer, which costs the extender nothing but the wait. The children
run alternately, `--rounds` times each; printed are the medians of the rounds, with the load.
"refused or failed" counts the binds answered with an `Error` (no node room left: the nodes'
free counts are random, as in `bench_k8s`) and those that raised (a server's 500: the pool or the
database gave up waiting).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def child(url: str, nodes: int, pods: int, threads: int, api_s: float) -> dict[str, float]:
    from nfvplace.integrations.kubernetes.calls import Door, bind_call, reconcile
    from nfvplace.integrations.kubernetes.extender import BindingArgs
    from nfvplace.models.chd import ComputeHostDescriptor
    from nfvplace.models.loading import SourceDocument
    from nfvplace.reader import load_document
    from nfvplace.store import Store
    from nfvplace.store.parsed import ParsedHosts

    from .bench_k8s import nrt, pod

    store = Store.open(url)
    rng = random.Random(0)
    names = [f"node-{i:04d}" for i in range(nodes)]
    for name in names:
        host = load_document(SourceDocument(data=nrt(name, rng), source=name))
        assert isinstance(host, ComputeHostDescriptor)
        put = store.put_host(host)
        reconcile(store, put.id, put.generation, put.availability)
    door = Door(store, ParsedHosts(store))
    raw = {f"cnf-{i}": pod(i, "dp") for i in range(pods)}

    def api_binding(args: BindingArgs) -> None:
        time.sleep(api_s)

    def read(namespace: str, name: str) -> dict[str, Any]:
        return raw[name]

    latencies: list[float] = []
    failed: list[str] = []
    raised = [0]
    todo = list(range(pods))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop(0)
            args = BindingArgs(f"cnf-{i}", "bench", f"bench-{i}", names[i % nodes])
            start = time.perf_counter()
            try:
                error = bind_call(door, args, read, api_binding, 300.0)["Error"]
            except Exception as exc:  # the pool or the database gave up: the server's 500
                error, raised[0] = f"{type(exc).__name__}: {exc}", raised[0] + 1
            elapsed = (time.perf_counter() - start) * 1000
            with lock:
                latencies.append(elapsed)
                if error:
                    failed.append(error)

    start = time.perf_counter()
    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wall = time.perf_counter() - start
    store.close()
    latencies.sort()
    return {
        "binds a second": pods / wall,
        "bind p50 ms": latencies[len(latencies) // 2],
        "bind p95 ms": latencies[int(len(latencies) * 0.95)],
        "refused or failed": float(len(failed)),
        "of which raised": float(raised[0]),
    }


def fresh_url(server: str | None, folder: Path, label: str) -> str:
    if server is None:
        return f"sqlite:///{folder / f'{label}.db'}"
    from .bench_service import fresh_postgres

    return fresh_postgres(server)


def run_child(tree: Path, url: str, args: argparse.Namespace) -> dict[str, float]:
    code = (
        f"import sys; sys.path.insert(0, {str(tree)!r}); import nfvplace; "
        f"sys.path.insert(0, {str(ROOT)!r}); import json; from bench.bench_k8s_bind import child; "
        f"print(json.dumps(child({url!r}, {args.nodes}, {args.pods}, {args.threads}, "
        f"{args.api_ms / 1000})))"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", type=Path, help="another checkout, measured in turns")
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--pods", type=int, default=400)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--api-ms", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args()
    trees = [("this", ROOT)] + ([("other", args.compare.resolve())] if args.compare else [])
    rounds: dict[str, list[dict[str, float]]] = {label: [] for label, _ in trees}
    print(
        f"bind: {args.nodes} nodes, {args.pods} pods, {args.threads} threads, the API server "
        f"{args.api_ms:.0f} ms a Binding, {args.db} (load {os.getloadavg()[0]:.1f})"
    )
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        server = None
        if args.db == "postgres":
            from .bench_service import postgres_server

            server = stack.enter_context(postgres_server())
        for r in range(args.rounds):
            for label, tree in trees:
                url = fresh_url(server, Path(folder), f"{label}{r}")
                rounds[label].append(run_child(tree, url, args))
    for key in rounds["this"][0]:
        medians = {label: statistics.median(x[key] for x in rounds[label]) for label, _ in trees}
        line = f"  {key:<22} this {medians['this']:9.1f}"
        if args.compare:
            ratio = medians["this"] / medians["other"] if medians["other"] else float("nan")
            line += f"   other {medians['other']:9.1f}   this/other {ratio:.2f}"
        print(line)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
