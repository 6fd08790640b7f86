"""Simulation speed: 10,000 events on 300 hosts (target ≤ 60 s), with the per-event baseline.

    .venv/bin/python -m bench.bench_simulation [--events 10000] [--copies 30]

The fleet is the 10 example hosts (examples/fleet) copied 30 times; the VMs are the example cloud VM,
small SR-IOV VM and vRAN DU. Baseline in the same run: one placement on the same fleet (the ratio says
how many single placements the whole replay costs).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path

import nfvplace
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.simulation import make_trace, simulate

ROOT = Path(__file__).resolve().parents[1]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--copies", type=int, default=30)
    parser.add_argument("--policy", default="pack")
    args = parser.parse_args(argv)
    base = nfvplace.load(ROOT / "examples" / "fleet")
    assert isinstance(base, list)
    hosts = [
        h.model_copy(update={"id": f"{h.id}-{k}"})
        for k in range(args.copies)
        for h in base
        if isinstance(h, ComputeHostDescriptor)
    ]
    vms = [
        vm
        for name in ("cloud-vm.yaml", "sriov-small.yaml", "vran-du.yaml")
        if isinstance(vm := nfvplace.load(ROOT / "examples" / "vms" / name), VmDescriptor)
    ]
    trace = make_trace([v.name for v in vms], args.events, seed=1, lifetime=2000.0)
    began = time.perf_counter()
    nfvplace.place(hosts, vms[0])
    one = time.perf_counter() - began
    (run,) = simulate(hosts, vms, trace, [args.policy], samples=50)
    print(
        f"load average {os.getloadavg()[0]:.1f}; {len(trace)} events on {len(hosts)} hosts "
        f"({args.policy}): {run.seconds:.1f} s (target ≤ 60 s) = {run.seconds / one:.0f} x one "
        f"placement ({one * 1000:.0f} ms, index built); acceptance {run.acceptance:.1%}, "
        f"p95 latency at the end {run.samples[-1].latency_p95_ms:g} ms"
    )


if __name__ == "__main__":
    main()
