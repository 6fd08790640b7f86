"""NfvplaceFilter over a thousand realistic HostStates, against Nova's NUMATopologyFilter on the
same HostStates in the same run (Nova's `max_placement_results` is 1,000 by default).

Runs in the Nova virtualenv with this repository on PYTHONPATH, against a live `nfvplace serve`;
reads JSON on stdin: {"url", "token_file", "hosts": N, "seed": S, "flavors": [k, ...]} (indexes
of FLAVORS, all by default), "service_session" (the service's session id, for its CPU time);
prints JSON.
`bench/nova_scale.py` (nfvplace's side) starts the service and prints the ratios.

Hosts: two (one in five: four) NUMA cells of 12-32 SMT cores, the first core of each cell for the
host, two more shared (`cpu_shared_set`), the rest dedicated and partly pinned; 1 GiB and 2 MiB
pages partly used; one host in three with a pool of SR-IOV VFs per cell: CHDs of 4-27 KB (2-10 KB
with their PUs and VFs as columns, as the plug-in sends them).

Per flavor (pinned, pinned isolate, pinned with 1 GiB pages over two nodes, shared with a NUMA
topology), each timed on fresh HostStates of the same fleet:
- `nova`: NUMATopologyFilter.host_passes over every host (what the scheduler runs today);
- `cold`: NfvplaceFilter.filter_all, the plug-in new (no host's CHD written, none sent before);
- `warm`: the same again after one host changed (the next boot);
- `warm_other`: another flavor over the same hosts (hosts held, answers not).
`nova`, `cold` and `warm` are also timed in CPU time (this process's, and for NfvplaceFilter the
service's too: every process of `service_session`, read from /proc), which a shared machine's load
moves less than the wall clock.
`bench/nova_scale.py` runs each flavor against a service of its own, so that its cold pass finds
the service holding none of the hosts and none of the answers (answered once before, about a host
of another fleet: the service's first request loads the solver).
"""

from __future__ import annotations

import gc
import json
import logging
import os
import random
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

FLAVORS = [
    {
        "name": "pinned",
        "vcpus": 4,
        "ram": 4096,
        "extra_specs": {"hw:cpu_policy": "dedicated", "hw:mem_page_size": "1GB"},
    },
    {
        "name": "isolate",
        "vcpus": 4,
        "ram": 4096,
        "extra_specs": {"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "isolate"},
    },
    {
        "name": "two-nodes",
        "vcpus": 16,
        "ram": 16384,
        "extra_specs": {
            "hw:cpu_policy": "dedicated",
            "hw:numa_nodes": "2",
            "hw:mem_page_size": "1GB",
        },
    },
    {
        "name": "shared",
        "vcpus": 4,
        "ram": 4096,
        "extra_specs": {"hw:numa_nodes": "1", "hw:mem_page_size": "2MB"},
    },
]

OTHER = {  # the flavor of `warm_other`, never timed cold (the service holds none of its answers)
    "name": "pinned-two",
    "vcpus": 2,
    "ram": 2048,
    "extra_specs": {"hw:cpu_policy": "dedicated"},
}


def host(rng: random.Random, name: str) -> dict[str, Any]:
    """A realistic Nova host view (siblings as the libvirt driver reports them)."""
    cells = 4 if rng.random() < 0.2 else 2
    cores = rng.randint(12, 32)
    total = cells * cores
    view_cells = []
    for c in range(cells):
        siblings = [[c * cores + k, c * cores + k + total] for k in range(cores)]
        shared = {pu for core in siblings[1:3] for pu in core}
        dedicated = {pu for core in siblings[3:] for pu in core}
        busy = rng.choice((0.0, 0.3, 0.6, 0.9))
        pinned = {pu for core in siblings[3:] if rng.random() < busy for pu in core}
        memory = rng.choice((64, 96, 128, 192)) * 1024
        giga = memory // 1024 // 2
        two_m = 2048
        used_giga = rng.randint(0, giga)
        small = (memory - giga * 1024 - two_m * 2) * 256
        view_cells.append(
            {
                "id": c,
                "cpuset": sorted(shared),
                "pcpuset": sorted(dedicated),
                "pinned_cpus": sorted(pinned),
                "siblings": siblings[1:],  # the host's core is in neither set
                "memory": memory,
                "memory_usage": used_giga * 1024,
                "cpu_usage": rng.randint(0, len(shared) * 4),
                "mempages": [
                    {"size_kb": 4, "total": small, "used": 0, "reserved": 0},
                    {"size_kb": 2048, "total": two_m, "used": rng.randint(0, two_m), "reserved": 0},
                    {"size_kb": 1048576, "total": giga, "used": used_giga, "reserved": 0},
                ],
                "socket": c // (cells // 2),
            }
        )
    pools = []
    if rng.random() < 1 / 3:
        pools = [
            {
                "vendor_id": "8086",
                "product_id": "154c",
                "numa_node": c,
                "dev_type": "type-VF",
                "physical_network": f"physnet{c % 2}",
                "count": rng.randint(8, 64),
            }
            for c in range(cells)
        ]
    return {
        "host": name,
        "nodename": name,
        "cpu_allocation_ratio": 4.0,
        "ram_allocation_ratio": 1.0,
        "cpu_info": {"vendor": "Intel", "model": "Icelake-Server", "features": ["avx512f"]},
        "cells": view_cells,
        "pci_pools": pools,
    }


def _timed(call: Any, *args: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = call(*args)
    return (time.perf_counter() - start) * 1000, out


def _session_cpu(session: int | None) -> float:
    """CPU seconds used so far by every process of the service's session (its workers too), from
    Linux's /proc; 0 without a session."""
    if session is None:
        return 0.0
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # a process gone meanwhile
        if int(fields[3]) == session:  # session id; then utime and stime in clock ticks
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _cpu(session: int | None, call: Any, *args: Any) -> tuple[float, float, Any]:
    """Wall ms, CPU ms (this process's and the service's) and the answer of one call. A full
    collection first: building the HostStates leaves garbage whose collection (300-600 ms) would
    otherwise land in whichever side's window comes next. The service's CPU is read before this
    process's clock starts and after it stops: reading it scans /proc (about 10 ms), the bench's
    own work, not the plug-in's."""
    gc.collect()
    service = _session_cpu(session)
    cpu = time.process_time()
    wall, out = _timed(call, *args)
    used = time.process_time() - cpu
    used += _session_cpu(session) - service
    return wall, used * 1000, out


def _nova(states: list[Any], spec: Any) -> list[bool]:
    from nova.scheduler.filters.numa_topology_filter import NUMATopologyFilter

    numa = NUMATopologyFilter()
    return [numa.host_passes(h, spec) for h in states]


def main() -> None:
    warnings.simplefilter("ignore")
    from nova import conf, context, objects

    objects.register_all()
    from bench.nova_scheduler_probe import Lines, _spec, _states
    from nfvplace.integrations.nova import NfvplaceFilter, scheduler
    from nfvplace.integrations.nova.chds import SentHosts
    from nfvplace.integrations.nova.client import CHUNK_BYTES
    from nfvplace.integrations.nova.hosts import chd_of, host_view

    lines = Lines()
    plugin_log = logging.getLogger("nfvplace.integrations.nova.scheduler")
    plugin_log.addHandler(lines)
    plugin_log.setLevel(logging.INFO)
    data = json.load(sys.stdin)
    settings = conf.CONF
    settings.set_override("url", data["url"], group="nfvplace")
    settings.set_override("token_file", data["token_file"], group="nfvplace")
    settings.set_override("timeout", 600.0, group="nfvplace")
    rng = random.Random(data.get("seed", 1))
    views = [host(rng, f"compute-{k:04d}") for k in range(int(data["hosts"]))]
    ctx = context.get_admin_context()
    # as the plug-in sends them: PUs and VFs as columns
    sizes = [len(json.dumps(chd_of(host_view(s), columns=True))) for s in _states(views[:50])]
    out: dict[str, Any] = {
        "hosts": len(views),
        "chd_bytes": {"median": statistics.median(sizes), "max": max(sizes)},
        "chunk_bytes": CHUNK_BYTES,
        "flavors": [],
    }
    # the service up and answering (its first request loads the solver and the readers), on a
    # host of another fleet: it holds none of these hosts, and none of their answers
    warm_up = host(random.Random(-1), "warm-up")
    NfvplaceFilter().filter_all(_states([warm_up]), _spec(ctx, {"flavor": OTHER}))
    for n in data.get("flavors", range(len(FLAVORS))):
        flavor = FLAVORS[n]
        spec = _spec(ctx, {"flavor": flavor})
        states = _states(views)
        nova_ms, nova_cpu_ms, nova = _cpu(None, _nova, states, spec)
        ours = NfvplaceFilter()
        scheduler._CLIENTS.clear()  # a new client: every host goes in full
        scheduler.SENT = SentHosts()  # and a new plug-in: every host's CHD is written
        session = data.get("service_session")
        cold_ms, cold_cpu_ms, cold = _cpu(session, ours.filter_all, _states(views), spec)
        views[n]["cells"][0]["pinned_cpus"] = []  # the next boot: one host changed
        warm_ms, warm_cpu_ms, warm = _cpu(session, ours.filter_all, _states(views), spec)
        other = _spec(ctx, {"flavor": OTHER})
        other_ms, other_pass = _timed(ours.filter_all, _states(views), other)
        out["flavors"].append(
            {
                "flavor": flavor["name"],
                "nova_ms": nova_ms,
                "cold_ms": cold_ms,
                "warm_ms": warm_ms,
                "nova_cpu_ms": nova_cpu_ms,
                "cold_cpu_ms": cold_cpu_ms,
                "warm_cpu_ms": warm_cpu_ms,
                "warm_other_ms": other_ms,
                "nova_pass": sum(nova),
                "cold_pass": len(cold),
                "warm_pass": len(warm),
                "warm_other_pass": len(other_pass),
            }
        )
    out["warnings"] = [line for line in lines.lines if line.startswith("WARNING")]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
