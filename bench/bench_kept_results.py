"""A notebook that keeps its results: what reading a refusal's rejections as of the refusal costs.

    .venv/bin/python -m bench.bench_kept_results --compare /work/wt/base    # 10,000 hosts
    .venv/bin/python -m bench.bench_kept_results --hosts 2000 --kept 200     # quicker

One process per tree and per way (alternated, in the same run): a `nfvplace.Fleet` of `--hosts`
`bench.hostgen` hosts; `--kept` rounds of a realistic placement (placed and claimed: a row of the
index rewritten) and a refusal over the whole fleet (a VM no node can take), then a release of
every fifth placement, then every refusal's rejections read. `keep`: every result kept in a list
until the end (a notebook); `drop`: each result dropped at once (the engine bench, the doors).
Figures: process CPU of the rounds and releases, of the reads, and the Python memory held after
the rounds (tracemalloc: the index's growth and the kept results).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def measure(hosts: Path, kept_n: int, keep: bool, memory: bool) -> dict[str, Any]:
    """One way on one tree: the CPU of the rounds and of the reads, or (`memory`, traced, which
    slows allocation) the Python memory held after the rounds."""
    import nfvplace  # of the tree measured (PYTHONPATH), and its bench's requests
    from bench.hostgen import impossible_requests, request_stream

    fleet = nfvplace.Fleet(pickle.loads(hosts.read_bytes()))
    vms = request_stream(kept_n, seed=12)
    refusals = impossible_requests(kept_n, seed=13)
    if memory:
        tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept: list[Any] = []
    placed: list[Any] = []
    start = time.process_time()
    for vm, huge in zip(vms, refusals, strict=True):
        result = fleet.place(vm)
        if result.ok:
            placed.append(result)
        refused = fleet.place(huge)
        if keep:
            kept.append(refused)
    for result in placed[::5]:
        fleet.release(result)
    rounds = time.process_time() - start
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    start = time.process_time()
    rows = sum(len(r.diagnosis.rejections) for r in kept)
    reads = time.process_time() - start
    return {"rounds_cpu_s": rounds, "reads_cpu_s": reads, "held_mib": held / 2**20, "rows": rows}


def child(tree: str, hosts: Path, kept_n: int, keep: bool, memory: bool) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=tree)
    args = [sys.executable, __file__, "--child", str(hosts)]  # this file, the tree's package
    args += ["--kept", str(kept_n)]
    args += (["--keep"] if keep else []) + (["--memory"] if memory else [])
    out = subprocess.run(args, env=env, cwd="/tmp", capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--kept", type=int, default=1_000)
    parser.add_argument("--compare", help="the baseline tree, measured in the same run")
    parser.add_argument("--repeat", type=int, default=1, help="alternated blocks per tree")
    parser.add_argument("--ways", default="drop,keep", help="drop, keep, or both (drop,keep)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--keep", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.kept, args.keep, args.memory)))
        return
    trees = [("this tree", str(ROOT))] + ([("baseline", args.compare)] if args.compare else [])
    from bench.hostgen import (
        make_fleet,
    )  # generated once, handed to every child (a minute at 10,000)

    fd, name = tempfile.mkstemp(suffix=".pickle")
    hosts = Path(name)
    with os.fdopen(fd, "wb") as out:
        pickle.dump(make_fleet(args.hosts, seed=11), out, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"{args.hosts} hosts, {args.kept} rounds; load {os.getloadavg()[0]:.2f}")
    for _ in range(args.repeat):
        for keep in (way == "keep" for way in args.ways.split(",")):
            for name, tree in trees:
                cpu = child(tree, hosts, args.kept, keep, memory=False)
                held = child(tree, hosts, args.kept, keep, memory=True)["held_mib"]
                print(
                    f"{'keep' if keep else 'drop'} {name:9}: rounds {cpu['rounds_cpu_s']:.2f} s "
                    f"CPU, reads {cpu['reads_cpu_s']:.2f} s ({cpu['rows']} rows), "
                    f"held {held:.1f} MiB",
                    flush=True,
                )
    print(f"load {os.getloadavg()[0]:.2f}")
    hosts.unlink()


if __name__ == "__main__":
    main()
