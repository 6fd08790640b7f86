"""The Kubernetes scheduler extender at cluster scale: `POST /k8s/v1/filter` and `/prioritize` over
real HTTP on a running `nfvplace serve`, against the per-node scalar path in the same run.

    .venv/bin/python bench/bench_k8s.py [--nodes 5000] [--sizes 500,5000] [--calls 20]
                                        [--baseline-calls 3] [--db sqlite|postgres]

One `nfvplace serve` (1 worker) gets `--nodes` NodeResourceTopology objects (two NUMA zones of 32
allocatable CPUs, 64 GiB, 8 SR-IOV VFs; 0-70 % taken, seeded; Topology Manager single-numa-node)
through `PUT /v1/hosts/{node}`, one after the other on one keep-alive connection, as a feeder sends
them (timed: the registration figure). The scheduler's calls are then timed as kube-scheduler makes
them for each pod, for each size of `--sizes` (the first nodes by name): `filter` with the nodes by
name (`nodeCacheCapable: true`; a Guaranteed pod of 4 CPUs, 1 GiB and a VF) and `prioritize` with the
nodes that passed. Two kinds of pods:

- `new shape`: each call a pod no call had before (its container's name changes), so nothing
  decided for an earlier pod is reused: the cost of deciding every node;
- `burst`: pods of one shape, new pods each call (a ReplicaSet's): the answers kept per (pod shape,
  node generation) answer them.

The baseline is the same door deciding every node one by one with `decide` (a second server on the
same database with `NFVPLACE_K8S_SCALAR=1`), `--baseline-calls` new-shape calls per size. The
figures are p50 and p95 of wall time, with the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_service import HEADERS, ROOT, Server, fresh_postgres, postgres_server

VF = "intel.com/sriov_dp"


def nrt(name: str, rng: random.Random) -> dict[str, Any]:
    zones = []
    for n in (0, 1):
        cpus = 32 - rng.randint(0, 22)
        vfs = 8 - rng.randint(0, 5)
        resources = [
            {"name": "cpu", "capacity": "34", "allocatable": "32", "available": str(cpus)},
            {
                "name": "memory",
                "capacity": "68719476736",
                "allocatable": "68719476736",
                "available": str(rng.randint(16, 64) * 2**30),
            },
            {"name": VF, "capacity": "8", "allocatable": "8", "available": str(vfs)},
        ]
        zones.append({"name": f"node-{n}", "type": "Node", "resources": resources})
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": name},
        "attributes": [
            {"name": "topologyManagerPolicy", "value": "single-numa-node"},
            {"name": "topologyManagerScope", "value": "container"},
        ],
        "zones": zones,
    }


def pod(index: int, shape: str) -> dict[str, Any]:
    limits = {"cpu": "4", "memory": "1Gi", VF: "1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"cnf-{index}", "namespace": "bench", "uid": f"bench-{index}"},
        "spec": {"containers": [{"name": shape, "resources": {"limits": limits}}]},
    }


def timed(call: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = call()
    return (time.perf_counter() - start) * 1000, out


def p50(times: list[float]) -> float:
    return statistics.median(times)


def spread(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(int(0.95 * len(ordered)), len(ordered) - 1)]
    return f"p50 {p50(times):.1f} ms, p95 {p95:.1f} ms"


Figures = tuple[tuple[list[float], list[float], list[float]], int]
"""Filter, prioritize (`pack`, the deployed verb) and prioritize?policy=spread ms; nodes passed."""


def calls(client: httpx.Client, names: list[str], count: int, shape_of: Any, first: int) -> Figures:
    """`count` rounds of filter, then prioritize (and prioritize?policy=spread) of what passed."""
    filters: list[float] = []
    packs: list[float] = []
    spreads: list[float] = []
    passed = 0
    for k in range(first, first + count):
        body = {"Pod": pod(k, shape_of(k)), "NodeNames": names}
        took, answer = timed(lambda b=body: client.post("/k8s/v1/filter", json=b))
        assert answer.status_code == 200, answer.text
        filters.append(took)
        fits = answer.json()["NodeNames"]
        body = {"Pod": pod(k, shape_of(k)), "NodeNames": fits}
        for verb, out in (("prioritize", packs), ("prioritize?policy=spread", spreads)):
            took, scored = timed(lambda b=body, v=verb: client.post(f"/k8s/v1/{v}", json=b))
            assert scored.status_code == 200, scored.text
            out.append(took)
        passed = len(fits)
    return (filters, packs, spreads), passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--sizes", default="500,5000")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--baseline-calls", type=int, default=3)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--compare",
        type=Path,
        help="another source tree (an older commit, unpacked): its registration is timed too",
    )
    parser.add_argument("--compare-nodes", type=int, default=500)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    objects = [nrt(f"worker-{k:04d}", rng) for k in range(args.nodes)]
    folder = Path(tempfile.mkdtemp(prefix="bench-k8s-"))
    if args.db == "postgres":
        with postgres_server() as pg:
            run(fresh_postgres(pg), objects, folder, args)
    else:
        run(f"sqlite:///{folder / 'k8s.db'}", objects, folder, args)


def register(client: httpx.Client, objects: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    for obj in objects:
        answer = client.put(f"/v1/hosts/{obj['metadata']['name']}", json=obj)
        assert answer.status_code in (200, 201), answer.text
    return time.perf_counter() - start


def run(db: str, objects: list[dict[str, Any]], folder: Path, args: argparse.Namespace) -> None:
    names = [o["metadata"]["name"] for o in objects]
    sizes = [min(int(s), len(names)) for s in args.sizes.split(",")]
    figures: dict[tuple[int, str], Figures] = {}
    server = Server(db, 1, folder).start()
    try:
        with httpx.Client(base_url=server.url, headers=HEADERS, timeout=600) as client:
            registered = register(client, objects)
            health = [timed(lambda: client.get("/healthz"))[0] for _ in range(args.calls)]
            for size in sizes:
                first = 1000 * size
                figures[size, "new"] = calls(
                    client, names[:size], args.calls, lambda k: f"dp-{k}", first
                )
                figures[size, "burst"] = calls(
                    client, names[:size], args.calls, lambda k: "dp", first + args.calls
                )
    finally:
        server.stop()
    os.environ["NFVPLACE_K8S_SCALAR"] = "1"
    scalar = Server(db, 1, folder).start()
    os.environ.pop("NFVPLACE_K8S_SCALAR")
    try:
        with httpx.Client(base_url=scalar.url, headers=HEADERS, timeout=600) as client:
            restart = timed(lambda: client.post("/k8s/v1/filter", json=warm_up(names)))[0]
            for size in sizes:
                figures[size, "scalar"] = calls(
                    client, names[:size], args.baseline_calls, lambda k: f"dp-{k}", 7 * size
                )
    finally:
        scalar.stop()
    report(args, len(names), registered, health, restart, figures, sizes)
    if args.compare:
        compare_registration(objects[: args.compare_nodes], folder, args.compare)


def compare_registration(objects: list[dict[str, Any]], folder: Path, tree: Path) -> None:
    """The same objects registered by a server of `tree` and one of this tree (fresh SQLite
    databases), one after the other in this run."""
    took: dict[str, float] = {}
    for label, root in (("compared tree", tree.resolve()), ("this tree", ROOT)):
        db = f"sqlite:///{folder / f'register-{len(took)}.db'}"
        server = Server(db, 1, folder, root=root).start()
        try:
            with httpx.Client(base_url=server.url, headers=HEADERS, timeout=600) as client:
                took[label] = register(client, objects)
        finally:
            server.stop()
    before, after = took["compared tree"], took["this tree"]
    print(
        f"registering {len(objects)} objects, same run: {tree} {1000 * before / len(objects):.1f} "
        f"ms each, this tree {1000 * after / len(objects):.1f} ms each ({before / after:.1f}x)"
    )


def warm_up(names: list[str]) -> dict[str, Any]:
    return {"Pod": pod(0, "warm-up"), "NodeNames": names}


def report(
    args: argparse.Namespace,
    nodes: int,
    registered: float,
    health: list[float],
    restart: float,
    figures: dict[tuple[int, str], Figures],
    sizes: list[int],
) -> None:
    print(f"{nodes} NRT nodes, {args.db}, 1 worker, load {os.getloadavg()}")
    print(
        f"registering {nodes} NodeResourceTopology objects (PUT, one connection): "
        f"{registered:.1f} s ({1000 * registered / nodes:.1f} ms each)"
    )
    print(f"GET /healthz (HTTP floor): {spread(health)}")
    print(
        f"first filter of a restarted worker, {nodes} names (rows read from the store): "
        f"{restart:.0f} ms"
    )
    for size in sizes:
        base = figures[size, "scalar"][0]
        for kind in ("new", "burst"):
            mine, passed = figures[size, kind]
            label = "new shape" if kind == "new" else "burst"
            print(f"{size} names, {label} ({passed} nodes pass):")
            for index, verb in enumerate(VERBS):
                ratio = p50(base[index]) / p50(mine[index])
                print(f"  {verb}: {spread(mine[index])} ({ratio:.0f}x faster than scalar)")
        print(f"{size} names, scalar baseline (decide per node, new shape):")
        for index, verb in enumerate(VERBS):
            print(f"  {verb}: {spread(base[index])}")


VERBS = ("filter", "prioritize (policy=pack)", "prioritize?policy=spread")


if __name__ == "__main__":
    main()
