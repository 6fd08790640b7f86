"""Placement latency of this checkout against another one, in the same run (for refactors).

    .venv/bin/python -m bench.compare_trees --before /path/to/other/checkout [--hosts 1000 10000]

Each tree's `nfvplace` is imported in its own child process, on the same seeded fleet
(`bench/hostgen.py`) and request stream, through the library's doors: `nfvplace.placement.place` on a
prebuilt index (the engine), `nfvplace.place` on a list of hosts (the library door, index kept), and
`nfvplace.Fleet.place` (placing and claiming, the index updated). The children run alternately,
`--rounds` times each, so that both see the same machine; the median of the rounds is printed with
the ratio after/before and the load average. Times are the child's CPU time (`process_time`), so
that other work on the machine, which delays a placement without costing it anything, does not skew
the comparison.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def module_of_tree(base: Path, ours: ModuleType) -> ModuleType:
    """The checkout `base`'s file of the module `ours`, loaded as a sibling of it (its relative
    imports are this tree's), for benches that run two versions of one module in one process."""
    name = f"{ours.__name__}_other"
    path = base / Path(*ours.__name__.split(".")).with_suffix(".py")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def child(hosts: int, requests: int, seed: int) -> dict[str, float]:
    import nfvplace
    from nfvplace.placement import FleetIndex, place

    from .hostgen import make_fleet, request_stream

    fleet = make_fleet(hosts, seed=seed)
    stream = request_stream(requests, seed=seed + 1)
    index = FleetIndex(fleet)
    out: dict[str, float] = {}

    def p50(call: object) -> float:
        times = []
        for vm in stream:
            start = time.process_time()
            call(vm)  # type: ignore[operator]
            times.append(time.process_time() - start)
        return statistics.median(times) * 1000

    out["engine on an index, p50 CPU ms"] = p50(lambda vm: place(index, vm))
    nfvplace.place(fleet, stream[0])  # the list door keeps its index: build it once
    out["nfvplace.place(list), p50 CPU ms"] = p50(lambda vm: nfvplace.place(fleet, vm))
    kept = nfvplace.Fleet(fleet)
    out["Fleet.place (claims), p50 CPU ms"] = p50(lambda vm: kept.place(vm))
    return out


def run_child(
    tree: Path, hosts: int, requests: int, seed: int, bench: str = "bench.compare_trees"
) -> Any:
    """`bench`'s `child` in a fresh process that imports `tree`'s nfvplace: the tree's nfvplace
    first (its submodules then load from there), this checkout's bench package after it."""
    code = (
        f"import sys; sys.path.insert(0, {str(tree)!r}); import nfvplace; "
        f"sys.path.insert(0, {str(ROOT)!r}); import json; "
        f"from {bench} import child; "
        f"print(json.dumps(child({hosts}, {requests}, {seed})))"
    )
    env = {**os.environ, "PYTHONPATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the other checkout")
    parser.add_argument("--hosts", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for hosts in args.hosts:
        runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for _ in range(args.rounds):
            for name, tree in (("before", args.before.resolve()), ("after", ROOT)):
                runs[name].append(run_child(tree, hosts, args.requests, args.seed))
        print(
            f"{hosts} hosts, {args.requests} requests, {args.rounds} rounds each "
            f"(load average {os.getloadavg()[0]:.1f})"
        )
        for figure in runs["after"][0]:
            before = statistics.median(r[figure] for r in runs["before"])
            after = statistics.median(r[figure] for r in runs["after"])
            print(
                f"  {figure:<34} before {before:8.3f}  after {after:8.3f}  after/before "
                f"{after / before:5.2f}"
            )


if __name__ == "__main__":
    main()
