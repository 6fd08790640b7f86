"""What-if capacity on 1,000 hosts (target ≤ 1 s), against one placement on the same fleet.

    .venv/bin/python -m bench.bench_capacity [--hosts 1000] [--seed 0]

Baseline in the same run: the time of one `nfvplace.place` of the same VM on the same fleet (the
FleetIndex built from the same descriptors). The machine's load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Sequence

import nfvplace
from nfvplace.placement import FleetIndex

from .hostgen import cloud_vm, make_fleet, small_sriov, vran_du


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    hosts = make_fleet(args.hosts, seed=args.seed)
    rng = random.Random(args.seed)
    print(f"load average {os.getloadavg()[0]:.1f}; {len(hosts)} hosts")
    for maker in (small_sriov, vran_du, cloud_vm):
        vm = maker(rng, 0)
        fleet = FleetIndex(hosts)
        began = time.perf_counter()
        nfvplace.place(fleet, vm)
        one = time.perf_counter() - began
        began = time.perf_counter()
        report = nfvplace.capacity(fleet, vm)
        took = time.perf_counter() - began
        print(
            f"{maker.__name__:12s} capacity {report.count:5d} instances on {len(report.hosts):4d} "
            f"hosts in {took:6.2f} s (target ≤ 1 s) = {took / one:6.1f} x one placement "
            f"({one * 1000:.1f} ms)"
        )


if __name__ == "__main__":
    main()
