"""The Kubernetes scheduler extender at cluster scale: `POST /k8s/v1/filter` and `/prioritize` over
HTTP, against baselines measured in the same run.

    .venv/bin/python bench/bench_k8s.py [--nodes 100] [--calls 30] [--db sqlite|postgres]

One `nfvplace serve` (1 worker) gets `--nodes` NodeResourceTopology objects (two NUMA zones of 32
allocatable CPUs, 64 GiB, 8 SR-IOV VFs; 0-70 % taken, seeded) through `PUT /v1/hosts/{node}`,
as a feeder would send them. The scheduler's calls are then timed one after the other, as
kube-scheduler makes them for each pod: `filter` with every node by name (`nodeCacheCapable:
true`; a Guaranteed pod of 4 CPUs, 1 GiB and a VF, each call a new pod) and `prioritize` with the
nodes that passed. Baselines in the same run: `GET /healthz` (the HTTP floor) and, in process,
`nfvplace.placement.evaluate` on the same CHDs (the engine's score of every node, index prebuilt).
The figures are p50 and p90 of `--calls` calls, wall time, with the load average.
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

from bench.bench_service import HEADERS, Server, fresh_postgres, postgres_server

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


def pod(index: int) -> dict[str, Any]:
    limits = {"cpu": "4", "memory": "1Gi", VF: "1"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"cnf-{index}", "namespace": "bench", "uid": f"bench-{index}"},
        "spec": {"containers": [{"name": "dp", "resources": {"limits": limits}}]},
    }


def timed(call: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = call()
    return (time.perf_counter() - start) * 1000, out


def summary(label: str, times: list[float]) -> str:
    ordered = sorted(times)
    p90 = ordered[min(int(0.9 * len(ordered)), len(ordered) - 1)]
    return f"{label}: p50 {statistics.median(times):.1f} ms, p90 {p90:.1f} ms"


def engine_baseline(objects: list[dict[str, Any]], calls: int) -> list[float]:
    """`evaluate` of the pod's VM Descriptor on every node's CHD, in process, index prebuilt."""
    from nfvplace.dialects.k8s_pod import vm_of
    from nfvplace.dialects.kubernetes import read_pod_spec
    from nfvplace.models.chd import ComputeHostDescriptor
    from nfvplace.models.loading import SourceDocument
    from nfvplace.models.vmd import VmDescriptor
    from nfvplace.placement import FleetIndex, evaluate
    from nfvplace.reader import load_document

    hosts = []
    for obj in objects:
        host = load_document(SourceDocument(data=obj, source=obj["metadata"]["name"]))
        assert isinstance(host, ComputeHostDescriptor)
        hosts.append(host)
    fleet = FleetIndex(hosts)
    spec = pod(0)
    parsed = read_pod_spec(spec["metadata"], spec["spec"], None, ("Pod", "spec"))
    vm = VmDescriptor.model_validate(vm_of(parsed, None, [], pod_scope=False, memory=False))
    return [timed(lambda: evaluate(fleet, vm))[0] for _ in range(calls)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    objects = [nrt(f"worker-{k:04d}", rng) for k in range(args.nodes)]
    folder = Path(tempfile.mkdtemp(prefix="bench-k8s-"))
    if args.db == "postgres":
        with postgres_server() as pg:
            run(fresh_postgres(pg), objects, folder, args)
    else:
        run(f"sqlite:///{folder / 'k8s.db'}", objects, folder, args)


def run(db: str, objects: list[dict[str, Any]], folder: Path, args: argparse.Namespace) -> None:
    names = [o["metadata"]["name"] for o in objects]
    server = Server(db, 1, folder).start()
    try:
        with httpx.Client(base_url=server.url, headers=HEADERS, timeout=600) as client:
            for obj in objects:
                answer = client.put(f"/v1/hosts/{obj['metadata']['name']}", json=obj)
                assert answer.status_code in (200, 201), answer.text
            health = [timed(lambda: client.get("/healthz"))[0] for _ in range(args.calls)]
            filters, priorities, passed = [], [], []
            for k in range(args.calls + 1):
                body = {"Pod": pod(k), "NodeNames": names}
                took, answer = timed(lambda b=body: client.post("/k8s/v1/filter", json=b))
                fits = answer.json()["NodeNames"]
                body = {"Pod": pod(k), "NodeNames": fits}
                took_p, scored = timed(lambda b=body: client.post("/k8s/v1/prioritize", json=b))
                assert scored.status_code == 200, scored.text
                if k:  # the first call of each builds what the worker keeps
                    filters.append(took)
                    priorities.append(took_p)
                    passed.append(len(fits))
                client.delete(f"/k8s/v1/assumptions/bench-{k}")
    finally:
        server.stop()
    baseline = engine_baseline(objects, args.calls)
    print(f"{args.nodes} NRT nodes, {args.db}, load {os.getloadavg()}")
    print(summary("GET /healthz (HTTP floor)", health))
    print(summary("engine: evaluate() on every node's CHD, in process (baseline)", baseline))
    print(
        summary(f"POST /k8s/v1/filter, {args.nodes} nodes by name", filters)
        + f" ({statistics.median(filters) / statistics.median(baseline):.1f} x the engine)"
    )
    print(
        summary(
            f"POST /k8s/v1/prioritize, the {statistics.median(passed):.0f} nodes that passed",
            priorities,
        )
        + f" ({statistics.median(priorities) / statistics.median(baseline):.1f} x the engine)"
    )


if __name__ == "__main__":
    main()
