"""The index update after a claim (issue 38): each claimed host read again, against the claim
worked out from its configuration (`FleetIndex.claimed(hosts, configurations)`, `FreeClaimed`,
`ColumnsClaimed`), on the same claims in the same process.

    .venv/bin/python -m bench.bench_index_claims              # 10,000 hosts, 600 placements
    .venv/bin/python -m bench.bench_index_claims --quick      # 2,000 hosts

`Fleet.place` places the realistic mix of `bench.hostgen` and records every claim (the hosts a
placement changed, and its configuration); each path then replays them on a copy of the index
as it was before the first, with each claimed host's free resources read first (as the
placement that chose it had), in alternated blocks. CPU time (`time.process_time`), best of the
blocks: the machine's other work moves both paths alike. Both paths must leave the same columns.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence

import numpy as np

import nfvplace
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.placement import FleetIndex

from .bench_placement import line
from .hostgen import make_fleet, request_stream

Claims = list[tuple[list[ComputeHostDescriptor], tuple[VmConfiguration, ...]]]


def replay(
    start: FleetIndex, claims: Claims, from_configurations: bool
) -> tuple[float, FleetIndex]:
    """CPU ms per placement of the index update on a copy of `start`, and the copy."""
    index = start.copy()
    spent = 0.0
    for hosts, configurations in claims:
        for host in hosts:
            index.free(index.positions[host.id])
        t0 = time.process_time()
        index.claimed(hosts, configurations if from_configurations else ())
        spent += time.process_time() - t0
    return spent * 1000 / len(claims), index


def same_columns(a: FleetIndex, b: FleetIndex) -> bool:
    for name, table in a.tables.items():
        for field, value in vars(table).items():
            other = getattr(b.tables[name], field)
            if isinstance(value, np.ndarray) and not np.array_equal(value, other):
                return False
    return True


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 hosts")
    parser.add_argument("--placements", type=int, default=600)
    parser.add_argument("--blocks", type=int, default=5)
    args = parser.parse_args(argv)
    size = 2000 if args.quick else 10000
    fleet = nfvplace.Fleet(make_fleet(size, seed=10))
    start = fleet.index.copy()
    claims: Claims = []
    for vm in request_stream(args.placements, seed=11):
        result = fleet.place(vm)
        claims.append((list(result.hosts.values()), result.configurations))
    print(
        f"index update after a claim, {size} hosts, {len(claims)} placements "
        f"(load average {os.getloadavg()[0]:.1f})"
    )
    best = {False: float("inf"), True: float("inf")}
    last: dict[bool, FleetIndex] = {}
    for _ in range(args.blocks):
        for path in (False, True):
            ms, last[path] = replay(start, claims, path)
            best[path] = min(best[path], ms)
    line("each claimed host read again (CPU, best block)", f"{best[False]:.3f} ms")
    line("worked out from the configuration (CPU, best block)", f"{best[True]:.3f} ms")
    line("configuration / read again", f"{best[True] / best[False]:.2f}")
    line("the same columns", str(same_columns(last[False], last[True])))


if __name__ == "__main__":
    main()
