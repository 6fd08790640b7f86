"""The Kubernetes door's filter and prioritize in a burst: thousands of pods assumed (bound, not yet
in their nodes' NodeResourceTopology), this checkout against another one in the same run.

    .venv/bin/python -m bench.bench_k8s_assumed [--compare /path/to/other/checkout] [--nodes 5000]
        [--assumed 500,2000,5000] [--sizes 500,5000] [--calls 15] [--rounds 2] [--db postgres]

`--nodes` NodeResourceTopology nodes (`bench_k8s.nrt`) are registered once, by the compared tree
(or this one), into an SQLite file (or a PostgreSQL database, `--db postgres`) as the door stores
them; each child process, of either tree, starts from a copy of it (migrated to its own schema), assumes `--assumed` pods through the bind
path (`assumed_there`, pod i on node i modulo the nodes: 4 CPUs, 1 GiB, a VF each), then times the
calls in-process, for each size of `--sizes` (the first nodes by name):

- `filter`: a new pod of the burst's shape each call, with the nodes by name;
- `prioritize`: the same pod with the nodes that passed (kube-scheduler's next call: it scores
  from what filter saw, reading no assumed pod);
- `prioritize alone`: a pod no filter call saw (a prioritize on another worker: it reads them);

each in two modes: `still` (nothing written between calls) and `moving` (one more pod assumed
between two calls, untimed: a burst's bind landing between two scheduling cycles). The children
run alternately, `--rounds` times each; printed are the medians over the rounds of each child's
p50 and p95, with the load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VERBS = ("filter", "prioritize", "prioritize alone")


def register(url: str, nodes: int) -> None:
    """`nodes` NodeResourceTopology nodes stored as the door stores them."""
    import random

    from nfvplace.integrations.kubernetes.calls import reconcile
    from nfvplace.models.chd import ComputeHostDescriptor
    from nfvplace.models.loading import SourceDocument
    from nfvplace.reader import load_document
    from nfvplace.store import Store

    from .bench_k8s import nrt

    store = Store.open(url)
    rng = random.Random(0)
    for i in range(nodes):
        name = f"node-{i:04d}"
        host = load_document(SourceDocument(data=nrt(name, rng), source=name))
        assert isinstance(host, ComputeHostDescriptor)
        put = store.put_host(host)
        reconcile(store, put.id, put.generation, put.availability)
    store.close()


def child(url: str, nodes: int, assumed: int, sizes: list[int], calls: int) -> dict[str, Any]:
    from nfvplace.integrations.kubernetes.calls import (
        Door,
        assumed_there,
        filter_call,
        prioritize_call,
    )
    from nfvplace.integrations.kubernetes.extender import read_args
    from nfvplace.store import Store
    from nfvplace.store.parsed import ParsedHosts

    from .bench_k8s import pod

    store = Store.open(url)
    door = Door(store, ParsedHosts(store))
    names = [f"node-{i:04d}" for i in range(nodes)]
    held = [0]

    def assume_one() -> None:
        i = held[0]
        held[0] += 1
        args = read_args({"Pod": pod(i, "held"), "NodeNames": []})
        assumed_there(door, args.pod, f"held-{i}", names[i % nodes], 3600.0)

    for _ in range(assumed):
        assume_one()
    out: dict[str, Any] = {}
    serial = [0]

    def args_of(some: list[str]) -> Any:
        serial[0] += 1
        return read_args({"Pod": pod(10**6 + serial[0], "burst"), "NodeNames": some})

    filter_call(door, args_of(names))  # the nodes parsed, as in a worker that served before
    for size in sizes:
        for mode in ("still", "moving"):
            times: dict[str, list[float]] = {v: [] for v in VERBS}
            for _ in range(calls):
                if mode == "moving":
                    assume_one()
                args = args_of(names[:size])
                start = time.perf_counter()
                result = filter_call(door, args)
                times["filter"].append(time.perf_counter() - start)
                passed = args_of(list(result["NodeNames"] or []))
                scored = type(args)(args.pod, args.pools, passed.node_names, None, args.raw_pod)
                start = time.perf_counter()
                prioritize_call(door, scored, "pack")
                times["prioritize"].append(time.perf_counter() - start)
                start = time.perf_counter()
                prioritize_call(door, passed, "pack")
                times["prioritize alone"].append(time.perf_counter() - start)
            for verb, spent in times.items():
                ordered = sorted(t * 1000 for t in spent)
                p95 = ordered[min(int(0.95 * len(ordered)), len(ordered) - 1)]
                out[f"{size} names {mode} {verb}"] = (statistics.median(ordered), p95)
    store.close()
    return out


def run_child(tree: Path, code: str) -> Any:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    prefix = (
        f"import sys; sys.path.insert(0, {str(tree)!r}); import nfvplace; "
        f"sys.path.insert(0, {str(ROOT)!r}); import json; "
    )
    done = subprocess.run(
        [sys.executable, "-c", prefix + code], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise RuntimeError(done.stderr[-4000:])
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else None


def copied(template: str, folder: Path, label: str) -> str:
    """A copy of the registered nodes' database: an SQLite file copied, or a PostgreSQL
    database created from the template database."""
    if template.startswith("sqlite"):
        target = folder / f"{label}.db"
        shutil.copyfile(template.removeprefix("sqlite:///"), target)
        return f"sqlite:///{target}"
    import psycopg
    from sqlalchemy import make_url

    parsed = make_url(template)
    info: dict[str, Any] = {"dbname": "postgres", "autocommit": True, **parsed.query}
    for key in ("host", "port", "password"):
        if getattr(parsed, key):
            info[key] = getattr(parsed, key)
    if parsed.username:
        info["user"] = parsed.username
    name = f"{parsed.database}_{label}".replace("-", "_")
    with psycopg.connect(**info) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{parsed.database}"')
    return parsed.set(database=name).render_as_string(False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", type=Path, help="another checkout, measured in turns")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--assumed", default="500,2000,5000")
    parser.add_argument("--sizes", default="500,5000")
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args()
    trees = [("this", ROOT)] + ([("other", args.compare.resolve())] if args.compare else [])
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"filter and prioritize in a burst: {args.nodes} NRT nodes, {args.calls} calls a case, "
        f"{args.rounds} rounds, {args.db} (load {os.getloadavg()[0]:.1f})"
    )
    with tempfile.TemporaryDirectory() as name, contextlib.ExitStack() as stack:
        folder = Path(name)
        template = f"sqlite:///{folder / 'template.db'}"
        if args.db == "postgres":
            from .bench_service import fresh_postgres, postgres_server

            template = fresh_postgres(stack.enter_context(postgres_server()))
        start = time.perf_counter()
        code = f"from bench.bench_k8s_assumed import register; register({template!r}, {args.nodes})"
        run_child(trees[-1][1], code)
        print(f"  {args.nodes} nodes registered in {time.perf_counter() - start:.0f} s")
        for count in (int(n) for n in args.assumed.split(",")):
            rounds: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
            for r in range(args.rounds):
                for label, tree in trees:
                    url = copied(template, folder, f"{label}-{count}-{r}")
                    code = (
                        "from bench.bench_k8s_assumed import child; "
                        f"print(json.dumps(child({url!r}, {args.nodes}, {count}, {sizes!r}, "
                        f"{args.calls})))"
                    )
                    rounds[label].append(run_child(tree, code))
            report(count, rounds, bool(args.compare))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


def report(count: int, rounds: dict[str, list[dict[str, Any]]], compare: bool) -> None:
    print(f"{count} pods assumed (p50 / p95 ms, medians of the rounds)")
    for key in rounds["this"][0]:
        cells = []
        for label in rounds:
            p50 = statistics.median(x[key][0] for x in rounds[label])
            p95 = statistics.median(x[key][1] for x in rounds[label])
            cells.append((label, p50, p95))
        line = f"  {key:<40}" + "".join(f" {lb} {a:7.1f} / {b:7.1f}" for lb, a, b in cells)
        if compare:
            line += f"   this/other p50 {cells[0][1] / cells[1][1]:.2f}"
        print(line)


if __name__ == "__main__":
    main()
