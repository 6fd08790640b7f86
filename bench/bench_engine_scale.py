"""The engine at scale (issue 38): placing and claiming on 10,000 hosts, and the memory of a
worker's index, through the doors a user calls.

    .venv/bin/python -m bench.bench_engine_scale            # 10,000 hosts (a few minutes)
    .venv/bin/python -m bench.bench_engine_scale --quick    # 2,000 hosts

- speed: `nfvplace.Fleet.place` (lint gate, filter, rank, exact model, ids, claim, index update)
  over the realistic mix of `bench.hostgen`, p50 / p99 and placements+claims per second; the same
  requests through a first-fit greedy placer (`bench.firstfit`, claiming with `claims.claim`) on
  the same hosts in the same run; then a pass with every stage timed (where the time goes);
- memory: the index a worker holds (`FleetIndex` as the service builds it: compact from
  `COMPACT_FROM` hosts) against the plain index of the same hosts, each built in a fresh process
  from hosts handed over one at a time, measured with tracemalloc (live Python objects) and as RSS
  growth, right after the build and after placing and claiming on it.

Targets (issue 38) are printed next to the figures, with the machine's load average: other work on
the two cores moves latencies, never decisions.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nfvplace
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.placement.engine import attempt as attempt_module
from nfvplace.placement.engine import place as place_module
from nfvplace.placement.index import claimed_alone
from nfvplace.placement.index import pending as pending_module

from .bench_placement import line, pct, rss_mib
from .firstfit import first_fit
from .hostgen import iter_fleet, make_fleet, request_stream

ROOT = Path(__file__).resolve().parents[1]


def steal_ticks() -> int:
    """The machine's CPU time taken by the hypervisor for other guests (/proc/stat), in ticks."""
    try:
        with open("/proc/stat") as stat:
            return int(stat.readline().split()[8])
    except (OSError, IndexError, ValueError):
        return 0


def timed_fleet(fleet: nfvplace.Fleet, vms: Sequence[VmDescriptor]) -> tuple[list[float], float]:
    """Per-call milliseconds of `Fleet.place` (placing and claiming) and the calls per second."""
    times = []
    start = time.perf_counter()
    for vm in vms:
        t0 = time.perf_counter()
        fleet.place(vm)
        times.append((time.perf_counter() - t0) * 1000)
    return times, len(vms) / (time.perf_counter() - start)


@contextmanager
def machine_use(spent: dict[str, float]) -> Iterator[None]:
    """The block's process CPU seconds (`cpu`), and the share of the machine's time the
    hypervisor stole meanwhile (`stolen`): the wall-clock rate moves with both, the code's CPU
    time with neither."""
    ticks, cpu, wall = steal_ticks(), time.process_time(), time.perf_counter()
    yield
    wall = time.perf_counter() - wall
    spent["cpu"] = time.process_time() - cpu
    stolen = (steal_ticks() - ticks) / os.sysconf("SC_CLK_TCK")
    spent["stolen"] = stolen / (wall * (os.cpu_count() or 1))


def timed_first_fit(
    hosts: list[ComputeHostDescriptor], vms: Sequence[VmDescriptor]
) -> tuple[list[float], float]:
    index = {h.id: i for i, h in enumerate(hosts)}
    times = []
    start = time.perf_counter()
    for vm in vms:
        t0 = time.perf_counter()
        fitted = first_fit(hosts, vm)
        if fitted is not None:
            hosts[index[fitted[1].id]] = fitted[1]
        times.append((time.perf_counter() - t0) * 1000)
    return times, len(vms) / (time.perf_counter() - start)


STAGES: list[tuple[Any, str, str]] = [
    (nfvplace.fleet.Fleet, "_gate", "lint gate"),  # the shape looked up, and lint on a miss
    (place_module, "rank", "filter and rank (numpy over the fleet)"),
    (attempt_module, "solve", "exact model (CP-SAT), built and solved"),
    (attempt_module, "build_configuration", "ids: the VM Configuration"),
    (attempt_module, "free_pending", "claim kept pending (free resources after it)"),
    (attempt_module, "claim", "claim on the host descriptor (not kept pending)"),
    (pending_module, "built", "claims pending built (a host read)"),
]


@contextmanager
def stage_clock(spent: Counter[str]) -> Iterator[None]:
    """Charge the time of each stage's function (and the index update) to `spent`."""

    def timed(fn: Callable[..., Any], label: str) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - t0

        return run

    saved = [(module, name, getattr(module, name)) for module, name, _ in STAGES]
    update = FleetIndex.take
    for (module, name, label), (_, _, fn) in zip(STAGES, saved, strict=True):
        setattr(module, name, timed(fn, label))
    FleetIndex.take = timed(update, "index update after the claim")  # type: ignore[method-assign]
    try:
        yield
    finally:
        for module, name, fn in saved:
            setattr(module, name, fn)
        FleetIndex.take = update  # type: ignore[method-assign]


def speed_section(size: int, n_requests: int, seed: int) -> dict[str, float]:
    t0 = time.perf_counter()
    hosts = make_fleet(size, seed=seed)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    fleet = nfvplace.Fleet(hosts)
    indexed = time.perf_counter() - t0
    gc.collect()
    gc.freeze()  # a long-running worker keeps its fleet out of the cyclic GC's way
    compact = fleet.index.store is not None and getattr(fleet.index.store, "compact", False)
    print(
        f"\n{size} hosts (generated in {built:.1f} s, indexed in {indexed:.1f} s, "
        f"{'compact' if compact else 'plain'} index); {n_requests} requests of the mix"
    )
    vms = request_stream(n_requests + 40, seed=seed + 1)
    timed_fleet(fleet, vms[:20])  # warm-up
    use: dict[str, float] = {}
    with machine_use(use):
        times, rate = timed_fleet(fleet, vms[20 : 20 + n_requests])
    p50, p99 = pct(times, 0.5), pct(times, 0.99)
    line("Fleet.place (place + claim) p50 / p99", f"{p50:.2f} / {p99:.2f} ms", "p50 ≤ 1 ms")
    line("placements + claims per second", f"{rate:.0f} /s", "≥ 1,000 /s")
    line("  the same per second of the process's CPU", f"{n_requests / use['cpu']:.0f} /s")
    line("  the machine's time stolen by the hypervisor meanwhile", f"{use['stolen'] * 100:.1f} %")
    ff_times, ff_rate = timed_first_fit(list(hosts), vms[20 : 20 + n_requests])
    ff_p50 = pct(ff_times, 0.5)
    line(
        "first fit (same hosts, same requests) p50 / p99",
        f"{ff_p50:.2f} / {pct(ff_times, 0.99):.2f} ms",
    )
    line("first fit placements + claims per second", f"{ff_rate:.0f} /s")
    line("nfvplace p50 / first-fit p50", f"{p50 / ff_p50:.2f}")
    line("nfvplace rate / first-fit rate", f"{rate / ff_rate:.2f}")
    spent: Counter[str] = Counter()
    rest = vms[20 + n_requests :] + request_stream(n_requests, seed=seed + 2)
    with stage_clock(spent):
        staged, _ = timed_fleet(fleet, rest[:n_requests])
    total = sum(staged)
    print(f"  where the time goes ({n_requests} more requests, each stage timed):")
    for label, seconds in spent.most_common():
        ms = seconds * 1000 / n_requests
        line(f"  {label}", f"{ms:.3f} ms", f"{ms * n_requests / total * 100:.0f} %")
    del hosts
    return {"p50": p50, "p99": p99, "rate": rate, "first_fit_p50": ff_p50}


def _memory_child(size: int, seed: int, compact: bool, placements: int) -> str:
    """In a fresh process: index `size` hosts handed over one at a time, as the service's worker
    streams them from its store; live MiB (tracemalloc) and RSS growth after the build, and again
    after `placements` placements and claims on it (recently used hosts are kept as objects)."""
    gc.collect()
    before = rss_mib()
    tracemalloc.start()
    index = FleetIndex(iter_fleet(size, seed=seed), compact=compact)
    gc.collect()
    built, built_rss = tracemalloc.get_traced_memory()[0] / 2**20, rss_mib() - before
    for vm in request_stream(placements, seed=seed + 3):  # as `Fleet.place` and the worker do
        result = nfvplace.place(index, vm)
        index.take(result.hosts, claimed_alone(vm, {}, result.configurations))
    gc.collect()
    used, used_rss = tracemalloc.get_traced_memory()[0] / 2**20, rss_mib() - before
    return f"{built:.1f} {built_rss:.1f} {used:.1f} {used_rss:.1f}"


def memory_section(size: int, seed: int, placements: int) -> dict[str, float]:
    print(f"\nmemory of a worker's index of {size} hosts (each in a fresh process)")
    out: dict[str, tuple[float, float]] = {}
    for label, compact in (("worker (compact)", True), ("plain", False)):
        proc = subprocess.run(
            [sys.executable, "-m", "bench.bench_engine_scale", "--memory-child"]
            + [str(value) for value in (size, seed, int(compact), placements)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        built, built_rss, used, used_rss = map(float, proc.stdout.split()[-4:])
        out[label] = (built, used)
        target = "≤ 50 MiB" if compact else ""
        line(f"{label}: live objects after the build (tracemalloc)", f"{built:.1f} MiB", target)
        line(f"{label}: RSS growth of the build", f"{built_rss:.1f} MiB")
        line(
            f"{label}: live objects after {placements} placements + claims",
            f"{used:.1f} MiB",
            target,
        )
        line(f"{label}: RSS growth by then", f"{used_rss:.1f} MiB")
    ratio = out["worker (compact)"][0] / out["plain"][0]
    line("worker index / plain index (live objects)", f"{ratio:.2f}")
    return {"worker_mib": out["worker (compact)"][0], "plain_mib": out["plain"][0]}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 hosts, fewer requests")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--requests", type=int, default=0, help="requests timed (default 1000)")
    parser.add_argument("--memory-child", nargs=4, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        size, seed, compact, placements = args.memory_child
        print(_memory_child(size, seed, bool(compact), placements))
        return
    size = 2000 if args.quick else 10000
    requests = args.requests or (300 if args.quick else 1000)
    print(
        f"nfvplace engine at scale (seed {args.seed}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f})"
    )
    speed_section(size, requests, args.seed + 10)
    memory_section(size, args.seed + 10, min(requests, 300))
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
