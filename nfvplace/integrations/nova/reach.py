"""How far a shared guest without a NUMA topology reaches in Nova: over the whole host.

Nova gives a flavor a guest NUMA topology only when it asks for one (`hw:numa_nodes`, a page
size, pinned or realtime vCPUs...). A shared flavor without one floats over all of the host's
shared CPUs (`cpu_shared_set`), and its memory comes from the host as a whole: NUMATopologyFilter
does not look at it, and the compute's claim has no cell to check. nfvplace floats a VM over one
NUMA node's shared PUs; so for such a request the door gives the service each host as one node
(`host_wide`): its cells merged, every PU, page pool and PCI pool on it, which is how Nova counts
that guest.

Standard library only, duck-typed on the Nova request document (`requests.request_document`)
and the host view (`hosts.host_view`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# extra specs (and image properties, `hw_...`) that give a flavor a guest NUMA topology in Nova
# (nova.virt.hardware.numa_get_constraints)
NUMA_SPECS = (
    "hw:numa_nodes",
    "hw:numa_cpus.",
    "hw:numa_mem.",
    "hw:mem_page_size",
    "hw:cpu_realtime",
    "hw:emulator_threads_policy",
    "hw:pmem",
    "resources:PCPU",
)


def floats_host_wide(document: Mapping[str, Any]) -> bool:
    """Whether Nova runs this request's guest without a NUMA topology: shared vCPUs and no spec
    that asks for guest NUMA nodes."""
    flavor = document.get("flavor") or {}
    specs = {str(k): str(v) for k, v in (flavor.get("extra_specs") or {}).items()}
    image = (document.get("image") or {}).get("properties") or {}
    for key, value in image.items():  # the image's `hw_numa_nodes` is the flavor's hw:numa_nodes
        if str(key).startswith("hw_"):
            specs.setdefault("hw:" + str(key)[3:], str(value))
    if specs.get("hw:cpu_policy", "shared").lower() != "shared":
        return False
    return not any(key.startswith(NUMA_SPECS) for key in specs)


def host_wide(view: Mapping[str, Any]) -> dict[str, Any]:
    """The host view with its NUMA cells merged into one (cell 0): CPUs, sibling sets, memory and
    its use, page pools summed by size; PCI pools on that cell."""
    cells = list(view.get("cells") or ())
    if len(cells) < 2:
        return dict(view)
    pages: dict[int, dict[str, int]] = {}
    for cell in cells:
        for pool in cell.get("mempages") or ():
            size = int(pool["size_kb"])
            into = pages.setdefault(size, {"size_kb": size, "total": 0, "used": 0, "reserved": 0})
            for key in ("total", "used", "reserved"):
                into[key] += int(pool.get(key, 0) or 0)
    merged = {
        "id": 0,
        "cpuset": sorted(c for cell in cells for c in cell.get("cpuset") or ()),
        "pcpuset": sorted(c for cell in cells for c in cell.get("pcpuset") or ()),
        "pinned_cpus": sorted(c for cell in cells for c in cell.get("pinned_cpus") or ()),
        "siblings": [s for cell in cells for s in cell.get("siblings") or ()],
        "memory": sum(int(cell.get("memory", 0)) for cell in cells),
        "memory_usage": sum(int(cell.get("memory_usage", 0)) for cell in cells),
        "cpu_usage": sum(int(cell.get("cpu_usage", 0)) for cell in cells),
        "mempages": [pages[size] for size in sorted(pages)],
        "socket": None,
    }
    pools = [
        dict(p, numa_node=None if p.get("numa_node") is None else 0)
        for p in view.get("pci_pools") or ()
    ]
    return {**view, "cells": [merged], "pci_pools": pools}
