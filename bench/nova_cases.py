"""Seeded Nova hosts and flavors for the differential against Nova's own fitter (bench/nova_diff.py).

A host is a Nova host view (`nfvplace.integrations.nova.hosts`): NUMA cells with a dedicated
(`pcpuset`) and a shared (`cpuset`) set, host-reserved cores or single threads, pinned CPUs (whole
cores or single threads), 4 KiB / 2 MiB / 1 GiB page pools with used and reserved pages, PCI pools
by NUMA node; one host in seven uses the legacy `vcpu_pin_set` layout (`cpuset == pcpuset`), one
in ten has four threads per core. A flavor is what operators and OSM write: `hw:cpu_policy`
dedicated or shared (shared flavors always with a guest NUMA topology, else Nova's fitter is not
involved), thread policies, `hw:numa_nodes` with automatic or explicit (uneven) splits, page sizes
by number, unit and word, emulator threads, and a PCI alias with or without
`hw:pci_numa_affinity_policy`.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

PCI_ALIAS = {
    "name": "qat",
    "vendor_id": "8086",
    "product_id": "0443",
    "device_type": "type-PCI",
}
"""The one PCI alias of the generated cloud (nova.conf `[pci] alias`)."""

PAGE_WORDS = ("1GB", "1048576", "2MB", "2048", "large", "any", "small")


def _cell(
    rng: random.Random, cell: int, cores: int, threads: int, legacy: bool, total_cores: int
) -> dict[str, Any]:
    siblings = [[cell * cores + k + t * total_cores for t in range(threads)] for k in range(cores)]
    reserved: set[int] = set()
    if rng.random() < 0.3:
        reserved |= set(siblings[0])  # a whole core for the host
    if threads > 1 and rng.random() < 0.25:
        reserved.add(siblings[-1][-1])  # one thread of a core: its siblings stay dedicated
    usable = [[pu for pu in core if pu not in reserved] for core in siblings]
    shared: set[int] = set()
    if legacy:
        dedicated = {pu for core in usable for pu in core}
        shared = set(dedicated)
    else:
        for core in usable[1 : 1 + rng.choice((0, 0, 1, 2))]:
            shared |= set(core)
        dedicated = {pu for core in usable for pu in core} - shared
    pinned: set[int] = set()
    busy = rng.choice((0.0, 0.0, 0.2, 0.4, 0.7))
    for core in usable:
        free = [pu for pu in core if pu in dedicated]
        if free and rng.random() < busy:
            pinned |= set(free) if rng.random() < 0.7 else {free[0]}
    memory = rng.choice((4, 8, 12, 16, 24, 32, 64)) * 1024
    giga = rng.randint(memory // 8192, memory // 2048) if rng.random() < 0.75 else 0
    two_m = min(rng.choice((512, 1024, 2048)), memory // 8) if rng.random() < 0.4 else 0
    small_total = (memory - giga * 1024 - two_m * 2) * 256
    small_used = int(small_total * rng.choice((0.0, 0.1, 0.5, 0.9)))
    mempages = [{"size_kb": 4, "total": small_total, "used": small_used, "reserved": 0}]
    if rng.random() < 0.2:
        mempages[0]["reserved"] = rng.randint(0, (small_total - small_used) // 4)
    huge_used = 0
    for size, total in ((2048, two_m), (1048576, giga)):
        if total or rng.random() < 0.3:
            used = rng.randint(0, total) if total and rng.random() < 0.5 else 0
            reserved_pages = 1 if total - used > 1 and rng.random() < 0.1 else 0
            mempages.append(
                {"size_kb": size, "total": total, "used": used, "reserved": reserved_pages}
            )
            huge_used += used * size // 1024
    return {
        "id": cell,
        "cpuset": sorted(shared),
        "pcpuset": sorted(dedicated),
        "pinned_cpus": sorted(pinned),
        "siblings": siblings,
        "memory": memory,
        "memory_usage": small_used // 256 + huge_used,
        "cpu_usage": rng.randint(0, len(shared) * 2) if shared else 0,
        "mempages": mempages,
        "socket": cell // 2,
    }


def host(rng: random.Random, name: str) -> dict[str, Any]:
    cells = rng.choice((1, 2, 2, 2, 4))
    threads = rng.choices((1, 2, 4), weights=(2, 7, 1))[0]
    cores = rng.randint(3, 10 if threads < 4 else 4)
    legacy = rng.random() < 0.15
    view_cells = [_cell(rng, c, cores, threads, legacy, cells * cores) for c in range(cells)]
    pools = []
    for c in range(cells):
        if rng.random() < 0.35:
            pools.append(
                {
                    "vendor_id": PCI_ALIAS["vendor_id"],
                    "product_id": PCI_ALIAS["product_id"],
                    "numa_node": c,
                    "dev_type": "type-PCI",
                    "physical_network": None,
                    "count": rng.randint(1, 3),
                }
            )
    return {
        "host": name,
        "nodename": name,
        "cpu_allocation_ratio": rng.choice((1.0, 4.0, 16.0)),
        "ram_allocation_ratio": 1.0,
        "cpu_info": {"vendor": "Intel", "model": "Skylake-Server-IBRS", "features": []},
        "cells": view_cells,
        "pci_pools": pools,
    }


def _split(rng: random.Random, total: int, parts: int, unit: int) -> list[int]:
    """`total` split in `parts` positive multiples of `unit` (uneven)."""
    cuts = sorted(rng.sample(range(1, total // unit), parts - 1)) if total // unit > parts else []
    if len(cuts) != parts - 1:
        return [total // parts] * (parts - 1) + [total - total // parts * (parts - 1)]
    bounds = [0, *cuts, total // unit]
    sizes = [(b - a) * unit for a, b in itertools.pairwise(bounds)]
    sizes[-1] += total - sum(sizes)
    return sizes


def flavor(rng: random.Random, name: str) -> dict[str, Any]:
    dedicated = rng.random() < 0.75
    vcpus = rng.randint(1, 10)
    ram = rng.randint(1, 12) * 1024
    if rng.random() < 0.1:
        ram += rng.choice((512, 100))  # memory that is not a whole number of large pages
    specs: dict[str, str] = {"hw:cpu_policy": "dedicated" if dedicated else "shared"}
    nodes = rng.choices((0, 1, 2, 3), weights=(55, 10, 30, 5))[0]
    nodes = min(nodes, vcpus)
    if not dedicated and nodes == 0 and rng.random() < 0.6:
        nodes = 1  # a shared flavor needs a guest NUMA topology to reach Nova's fitter
    if nodes:
        specs["hw:numa_nodes"] = str(nodes)
        if nodes > 1 and rng.random() < 0.35:
            cpus = _split(rng, vcpus, nodes, 1)
            mems = _split(rng, ram, nodes, 1024 if ram % 1024 == 0 else 1)
            start = 0
            for k in range(nodes):
                specs[f"hw:numa_cpus.{k}"] = ",".join(str(v) for v in range(start, start + cpus[k]))
                specs[f"hw:numa_mem.{k}"] = str(mems[k])
                start += cpus[k]
    if dedicated:
        policy = rng.choices(("", "prefer", "isolate", "require"), weights=(30, 15, 30, 25))[0]
        if policy:
            specs["hw:cpu_thread_policy"] = policy
        if rng.random() < 0.1:
            specs["hw:emulator_threads_policy"] = "isolate"
    if rng.random() < 0.5 or (not dedicated and not nodes):
        specs["hw:mem_page_size"] = rng.choice(PAGE_WORDS)
    if rng.random() < 0.2:
        specs["pci_passthrough:alias"] = f"{PCI_ALIAS['name']}:{rng.choice((1, 1, 2))}"
        if rng.random() < 0.4:
            specs["hw:pci_numa_affinity_policy"] = rng.choice(
                ("required", "legacy", "preferred", "socket")
            )
    return {"name": name, "vcpus": vcpus, "ram": ram, "disk": 10, "extra_specs": specs}


def cases(seed: int, flavors: int, hosts_per_flavor: int) -> dict[str, Any]:
    """`flavors` flavors, each asked of its own `hosts_per_flavor` hosts."""
    rng = random.Random(seed)
    out = []
    for f in range(flavors):
        hosts = [host(rng, f"h{f}-{k}") for k in range(hosts_per_flavor)]
        out.append({"flavor": flavor(rng, f"f{f}"), "hosts": hosts})
    return {"pci_alias": [PCI_ALIAS], "cases": out}
