"""Where each kind of request of the mix spends its time in `Fleet.place`, stage by stage, and
how often each stage runs per request (issue 38: the vBRAS worker is a tenth of the mix and a
quarter of the time).

    .venv/bin/python -m bench.kind_stages                               # 10,000 hosts
    .venv/bin/python -m bench.kind_stages --compare /work/wt/base       # another tree alongside

`Fleet.place` on `bench.hostgen`'s fleet and mix (the engine bench's seeds), 40 requests to warm
up, then each request's stages timed in CPU time (`process_time`) and charged to the kind of the
request (its name's prefix: vran-du, vbras, sriov, cloud). Stages nest (an indented stage is
part of the one above it), and each is counted: hosts tried, exact-stage calls, CP-SAT models
built and solved, hosts read from their descriptors (a host's first read, or one whose view was
let go). With `--compare`, each tree runs in its own child process, alternately, `--rounds`
times, and the median of the rounds is printed with the ratio this tree / the other.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.compare_trees import run_child

ROOT = Path(__file__).resolve().parents[1]


def _stages() -> list[tuple[Any, str, str]]:
    """(owner, attribute, label) of each stage timed, in the order printed (nesting by indent)."""
    from ortools.sat.python import cp_model

    import nfvplace
    from nfvplace.placement.engine import attempt, place, solver
    from nfvplace.placement.index import FleetIndex
    from nfvplace.placement.index import fleet as index_fleet

    return [
        (nfvplace.Fleet, "place", "Fleet.place"),
        (nfvplace.Fleet, "_gate", "  lint gate"),
        (place, "rank", "  filter and rank"),
        (place, "run_filter", "    filter"),
        (place, "host_keys", "    policy keys"),
        (place, "attempt", "  a host tried (attempt)"),
        (FleetIndex, "free", "    free view (FleetIndex.free)"),
        (index_fleet, "free_of", "      host read from its descriptor"),
        (attempt, "solve", "    exact stage"),
        (solver, "direct_layout", "      direct path"),
        (solver, "build", "      model built"),
        (cp_model.CpSolver, "solve", "      CP-SAT's solve"),
        (solver, "_layout", "      read-back"),
        (attempt, "build_configuration", "    ids"),
        (attempt, "free_pending", "    claim kept pending"),
        (attempt, "claim", "    claim on the descriptor"),
        (FleetIndex, "take", "  index update"),
    ]


def _timed(
    fn: Callable[..., Any], label: str, kind: list[str], spent: dict[str, Counter[str]]
) -> Callable[..., Any]:
    clock = time.process_time

    def run(*args: Any, **kwargs: Any) -> Any:
        t0 = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            row = spent[kind[0]]
            row[label] += clock() - t0
            row[label + " #"] += 1

    return run


def child(hosts: int, requests: int, seed: int) -> dict[str, dict[str, float]]:
    """Per kind: requests, placed, p50 of `Fleet.place` (ms), and each stage's ms and calls a
    request, over `requests` requests after 40 to warm up."""
    import nfvplace

    from .hostgen import make_fleet, request_stream

    fleet = nfvplace.Fleet(make_fleet(hosts, seed=seed))
    gc.collect()
    gc.freeze()  # as the engine bench: a worker keeps its fleet out of the cyclic GC's way
    kind = ["warm-up"]
    spent: dict[str, Counter[str]] = defaultdict(Counter)
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in _stages()]
    for (owner, name, fn), (_, _, label) in zip(saved, _stages(), strict=True):
        setattr(owner, name, _timed(fn, label, kind, spent))
    times: dict[str, list[float]] = defaultdict(list)
    placed: Counter[str] = Counter()
    try:
        for k, vm in enumerate(request_stream(requests + 40, seed=seed + 1)):
            kind[0] = vm.name.rsplit("-", 1)[0] if k >= 40 else "warm-up"
            t0 = time.process_time()
            result = fleet.place(vm)
            times[kind[0]].append(time.process_time() - t0)
            placed[kind[0]] += bool(result.configurations)
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)
    out: dict[str, dict[str, float]] = {}
    for name, row in spent.items():
        if name == "warm-up":
            continue
        n = len(times[name])
        figures = {"requests": float(n), "placed": float(placed[name])}
        figures["p50 ms"] = statistics.median(times[name]) * 1000
        for label, value in row.items():
            figures[label] = value / n * (1 if label.endswith(" #") else 1000)
        out[name] = figures
    return out


def _median(runs: list[dict[str, dict[str, float]]], kind: str, label: str) -> float:
    return statistics.median(run.get(kind, {}).get(label, 0.0) for run in runs)


def report(runs: dict[str, list[dict[str, dict[str, float]]]], requests: int) -> None:
    """Per kind, each stage's ms and calls a request (median of the rounds) for each tree."""
    trees = list(runs)
    labels = [label for _, _, label in _stages()]
    first = runs[trees[0]][0]
    total = {
        t: sum(_median(runs[t], k, "Fleet.place") * first[k]["requests"] for k in first)
        for t in trees
    }
    for t in trees:
        print(f"  {t}: {total[t] / requests:.3f} ms of CPU a request over the mix")
    for kind in sorted(first, key=lambda k: -first[k]["requests"]):
        n, placed = first[kind]["requests"], first[kind]["placed"]
        shares = ", ".join(
            f"{t} {_median(runs[t], kind, 'Fleet.place') * n / total[t] * 100:.0f} %" for t in trees
        )
        p50s = " / ".join(f"{_median(runs[t], kind, 'p50 ms'):.3f}" for t in trees)
        print(
            f"\n{kind}: {n:.0f} requests, {placed:.0f} placed; share of the CPU {shares}; p50 {p50s} ms"
        )
        head = "".join(f"{t[:14]:>16}" for t in trees)
        print(
            f"  {'stage (ms a request, calls a request)':<40}{head}"
            + ("   ratio" if len(trees) == 2 else "")
        )
        for label in labels:
            ms = [_median(runs[t], kind, label) for t in trees]
            calls = [_median(runs[t], kind, label + " #") for t in trees]
            if not any(calls):
                continue
            cells = "".join(f"{m:8.3f} ({c:4.2f})" for m, c in zip(ms, calls, strict=True))
            ratio = f"  {ms[1] / ms[0]:6.2f}" if len(trees) == 2 and ms[0] else ""
            print(f"  {label:<40}{cells}{ratio}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=10, help="the engine bench's fleet seed")
    parser.add_argument("--compare", type=Path, help="another checkout, run alternately")
    args = parser.parse_args(argv)
    trees = {"this tree": ROOT}
    if args.compare:
        trees = {"other": args.compare.resolve(), "this tree": ROOT}
    print(
        f"{args.hosts} hosts, {args.requests} requests of the mix, {args.rounds} rounds a tree, "
        f"CPU time (load average {os.getloadavg()[0]:.1f})"
    )
    runs: dict[str, list[dict[str, dict[str, float]]]] = {name: [] for name in trees}
    for k in range(args.rounds):
        order = list(trees.items()) if k % 2 == 0 else list(reversed(trees.items()))
        for name, tree in order:
            runs[name].append(
                run_child(tree, args.hosts, args.requests, args.seed, "bench.kind_stages")
            )
    report(runs, args.requests)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
