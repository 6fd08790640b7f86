"""Batches of copies of one VM (issue 37): a batch of N, against N single placements in a loop.

    .venv/bin/python -m bench.bench_copies [--sizes 100 300] [--most 300] [--seed 0]

For the bundled fleets (`examples/fleet`, `examples/hosts`) and generated fleets of `--sizes` hosts
(bench/hostgen.py), and a few VMs: what-if capacity's count C, then a batch of N = min(C, `--most`)
copies (`nfvplace.place(hosts, vm, count=N)`, all or nothing), timed against the baseline measured
in the same run: N single placements one after the other on a `Fleet` (`fleet.place(vm)` in a
loop, what a caller without batches does). Then a batch of C + 1, which must be refused: its time
is against the same baseline. Targets: the batch of N places all N (issue 37: it failed after
10 s); batch / loop ≤ 1; a refusal a small fraction of the loop. Wall and CPU seconds are printed
(the machine is shared), with its load average.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Sequence
from pathlib import Path

import nfvplace
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor

from .hostgen import cloud_vm, make_fleet, small_sriov, vran_du

ROOT = Path(__file__).resolve().parents[1]
TINY = VmDescriptor.model_validate(
    {"schema": "nfvplace/vmd/v1", "name": "tiny", "vcpus": 1, "memory_mib": 256}
)


class Clock:
    """Wall and CPU seconds of one block (the machine is shared: CPU time is what it costs)."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *_: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu

    def __str__(self) -> str:
        return f"{self.wall:6.2f} s ({self.cpu:5.2f} s CPU)"


def _row(name: str, hosts: Sequence[ComputeHostDescriptor], vm: VmDescriptor, most: int) -> None:
    nfvplace.place(hosts, vm)  # the index of these host objects, built once for every door
    with Clock() as counted:
        count = nfvplace.capacity(hosts, vm).count
    n = min(count, most)
    fleet = nfvplace.Fleet(list(hosts))
    with Clock() as loop:
        placed = sum(1 for _ in range(n) if fleet.place(vm).ok)
    with Clock() as batch:
        configurations = nfvplace.place(hosts, vm, count=n).configurations
    with Clock() as refusal:
        refused = not nfvplace.place(hosts, vm, count=count + 1).ok
    print(
        f"{name} {vm.name}: capacity {count} in {counted}\n"
        f"  batch of {n}: {len(configurations)} placed in {batch} = "
        f"{batch.wall / loop.wall:.2f} x loop ({batch.cpu / loop.cpu:.2f} x in CPU); "
        f"loop: {placed} placed in {loop}\n"
        f"  batch of {count + 1}: {'refused' if refused else 'PLACED (wrong)'} in {refusal} = "
        f"{refusal.wall / loop.wall:.3f} x loop"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300])
    parser.add_argument("--most", type=int, default=300, help="largest batch timed")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}")
    for folder in ("fleet", "hosts"):
        hosts = nfvplace.load(ROOT / "examples" / folder)
        assert isinstance(hosts, list)
        _row(f"examples/{folder}", hosts, TINY, args.most)
    rng = random.Random(args.seed)
    for size in args.sizes:
        hosts = make_fleet(size, seed=args.seed)
        for maker in (small_sriov, vran_du, cloud_vm):
            _row(f"generated {size} hosts", hosts, maker(rng, 0), args.most)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
