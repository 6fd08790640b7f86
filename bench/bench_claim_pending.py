"""Claims kept pending against claims made at once, in one process (issue 38, the twelfth round).

    .venv/bin/python -m bench.bench_claim_pending            # 10,000 hosts, 1,000 requests
    .venv/bin/python -m bench.bench_claim_pending --hosts 2000 --requests 600

Two `nfvplace.Fleet`s of the same hostgen hosts place the same requests of the mix in alternating
blocks (`--block`, the first fleet first in one block, the second in the next): one keeps the
claims pending (`placement/index/pending.py`), the other makes every claim at once, as the engine
did before (`free_pending` answering None sends each claim to `claims.claim` on the built host and
the index update to `FleetIndex.claimed`). Both see the same machine at the same moments, so the
ratio holds where the load moves the absolute figures. Wall-clock per `Fleet.place`: p50, mean,
placements per second, per kind of request; at the end both fleets' hosts are read and must be
equal.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import nfvplace
from nfvplace.placement.engine import attempt

from .hostgen import make_fleet, request_stream


def _at_once(*_: Any) -> None:
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=1_000)
    parser.add_argument("--block", type=int, default=20)
    args = parser.parse_args()
    pending: Callable[..., Any] = attempt.free_pending
    hosts = make_fleet(args.hosts, seed=0)
    fleets = {"kept pending": nfvplace.Fleet(hosts), "made at once": nfvplace.Fleet(hosts)}
    modes = {"kept pending": pending, "made at once": _at_once}
    vms = request_stream(args.requests + 20, seed=1)
    for name, fleet in fleets.items():  # warm-up
        attempt.free_pending = modes[name]  # type: ignore[assignment]
        for vm in vms[:20]:
            fleet.place(vm)
    gc.collect()
    gc.freeze()
    times: dict[str, list[float]] = {name: [] for name in fleets}
    kinds: dict[tuple[str, str], list[float]] = {}
    for k, start in enumerate(range(20, len(vms), args.block)):
        order = list(fleets) if k % 2 == 0 else list(reversed(fleets))
        for name in order:
            attempt.free_pending = modes[name]  # type: ignore[assignment]
            for vm in vms[start : start + args.block]:
                t0 = time.perf_counter()
                fleets[name].place(vm)
                ms = (time.perf_counter() - t0) * 1000
                times[name].append(ms)
                kinds.setdefault((name, vm.name.split("-")[0]), []).append(ms)
    attempt.free_pending = pending  # type: ignore[assignment]
    print(f"{args.hosts} hosts, {args.requests} requests of the mix, blocks of {args.block}")
    for name, spent in times.items():
        print(
            f"  {name}: p50 {statistics.median(spent):.3f} ms, mean {statistics.mean(spent):.3f}"
            f" ms, {len(spent) / sum(spent) * 1000:.0f} placements+claims/s"
        )
    a, b = times["kept pending"], times["made at once"]
    print(
        f"  kept pending / made at once: p50 {statistics.median(a) / statistics.median(b):.3f},"
        f" mean {statistics.mean(a) / statistics.mean(b):.3f}"
    )
    for kind in sorted({kind for _, kind in kinds}):
        pair = [statistics.mean(kinds[(name, kind)]) for name in fleets]
        print(f"  {kind}: mean {pair[0]:.2f} ms kept pending, {pair[1]:.2f} ms made at once")
    first, second = fleets.values()
    assert first.hosts == second.hosts, "the two fleets differ"
    print(f"  both fleets' hosts equal; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
