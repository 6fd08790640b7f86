"""Joint placement of batches: VMs placed against greedy first fit and an upper bound; hosts used.

    .venv/bin/python -m bench.bench_joint [--sizes 50 100 200] [--seed 0]

Overloaded fleets (more demand than room): the batch is placed with `mode="max"` (as many as fit,
search limit 10 s) and compared, in the same run, with greedy first fit in batch order
(bench/firstfit.py, Nova-like) and with two upper bounds: the node-count relaxation's proven optimum
(nfvplace/placement/joint/relaxation.py: per NUMA node free cores, threads, hugepages, memory, VFs and port
bandwidth, solved to optimality here) and a resource-volume bound: the largest k such that the k
smallest demands of the VMs that fit the fleet on their own fit the fleet's free threads, free 1 GiB
pages and free VFs, each on its own. No assignment of more VMs than either can exist. Empty fleets: the VMs first fit places are placed again jointly (`mode="all"`)
and the hosts used are compared with first fit's. Targets (issue 12): ≥ first fit + 5 %, ≥ 98 % of the bound within
10 s; ≥ 25 % fewer hosts than first fit on empty fleets.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence

import nfvplace
from nfvplace.models.chd import ComputeHostDescriptor, CpuState
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.placement.joint.batch import of_batch
from nfvplace.placement.joint.relaxation import relax
from nfvplace.placement.options import Options
from nfvplace.placement.request import build_request

from .firstfit import first_fit
from .hostgen import make_fleet, request_stream

GIB_KIB = 1024 * 1024


def demand(vm: VmDescriptor) -> tuple[int, int, int]:
    """Least threads, 1 GiB pages and VFs one instance needs."""
    request = build_request(vm)
    threads = sum(2 * len(cs.pairs) + len(cs.singles) for cs in request.cpu_sets)
    threads += int(request.emulator)
    pages = sum(
        cs.hugepage_count * (cs.hugepage_size_kib or 0) // GIB_KIB for cs in request.cpu_sets
    )
    vfs = sum(1 for i in request.interfaces if i.mode.value != "vswitch")
    return threads, pages, vfs


def room(hosts: Sequence[ComputeHostDescriptor]) -> tuple[int, int, int]:
    threads = pages = vfs = 0
    for host in hosts:
        for node in host.numa_nodes:
            threads += sum(1 for c in node.cpus if c.eligible and c.state is CpuState.free)
            pages += sum(p.free * p.size_kib // GIB_KIB for p in node.memory.hugepages)
            vfs += sum(
                1
                for nic in node.nics
                for port in nic.ports
                for vf in port.vfs
                if port.eligible and not vf.in_use
            )
    return threads, pages, vfs


def volume_bound(hosts: Sequence[ComputeHostDescriptor], vms: Sequence[VmDescriptor]) -> int:
    """Among the VMs the engine places on the fleet alone (no other can ever be placed), the
    largest k whose k smallest demands fit the free threads, 1 GiB pages and VFs."""
    fleet = FleetIndex(hosts)
    needs = [demand(vm) for vm in vms if nfvplace.place(fleet, vm).ok]
    have = room(hosts)
    bound = len(needs)
    for r in range(3):
        total = k = 0
        for need in sorted(n[r] for n in needs):
            if total + need > have[r]:
                break
            total += need
            k += 1
        bound = min(bound, k)
    return bound


def first_fit_all(
    hosts: Sequence[ComputeHostDescriptor], vms: Sequence[VmDescriptor]
) -> tuple[list[VmDescriptor], int]:
    """The VMs first fit places (in batch order) and the number of hosts it uses."""
    current = list(hosts)
    placed = []
    used: set[str] = set()
    for vm in vms:
        got = first_fit(current, vm)
        if got is None:
            continue
        _, updated = got
        current = [updated if h.id == updated.id else h for h in current]
        placed.append(vm)
        used.add(updated.id)
    return placed, len(used)


def overloaded(size: int, seed: int) -> None:
    hosts = make_fleet(max(size // 6, 4), seed=seed, max_use=0.7)
    vms = request_stream(size, seed=seed + 1)
    began = time.perf_counter()
    ff = len(first_fit_all(hosts, vms)[0])
    ff_s = time.perf_counter() - began
    volume = volume_bound(hosts, vms)
    began = time.perf_counter()
    bound = relax(FleetIndex(hosts), of_batch(vms).members, Options(), 60.0)
    bound_s = time.perf_counter() - began
    began = time.perf_counter()
    result = nfvplace.place(FleetIndex(hosts), vms, mode="max", search_limit_s=10.0)
    ours_s = time.perf_counter() - began
    ours = len(result.configurations)
    print(
        f"overloaded  {size:3d} VMs on {len(hosts):3d} hosts: joint {ours:3d} in {ours_s:5.1f} s, "
        f"first fit {ff:3d} in {ff_s:4.1f} s, bounds: relaxation {bound.bound:3d} "
        f"({'proven' if bound.optimal else 'not proven'}, {bound_s:.1f} s), volume {volume:3d}: "
        f"joint/first fit {ours / max(ff, 1):.3f} (target ≥ 1.05), joint/bound "
        f"{ours / max(bound.bound, 1):.3f} (target ≥ 0.98; /volume {ours / max(volume, 1):.3f})"
    )


def empty(size: int, seed: int) -> None:
    hosts = make_fleet(max(size // 2, 8), seed=seed + 7, max_use=0.0)
    vms = request_stream(size, seed=seed + 1)
    ff, ff_hosts = first_fit_all(hosts, vms)
    began = time.perf_counter()
    result = nfvplace.place(FleetIndex(hosts), ff, search_limit_s=10.0)  # the same VMs, all
    ours_s = time.perf_counter() - began
    ours_hosts = len(result.hosts)
    print(
        f"empty       {len(ff):3d} VMs (of {size}) on {len(hosts):3d} hosts: joint placed "
        f"{len(result.configurations)} on {ours_hosts} hosts in {ours_s:5.1f} s, first fit "
        f"{len(ff)} on {ff_hosts} hosts: hosts used joint/first fit "
        f"{ours_hosts / max(ff_hosts, 1):.3f} (target ≤ 0.75)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}")
    for size in args.sizes:
        overloaded(size, args.seed)
    for size in args.sizes:
        empty(size, args.seed)


if __name__ == "__main__":
    main()
