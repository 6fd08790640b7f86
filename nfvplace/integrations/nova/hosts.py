"""Nova's view of a compute host (a scheduler `HostState`) as an nfvplace Compute Host Descriptor.

Two steps, both plain data and the standard library only:

- `host_view(host_state)` reads what the scheduler holds for one host into a JSON "host view":
  its NUMA cells (`cpuset` shared, `pcpuset` dedicated, `pinned_cpus`, `siblings`, `memory`,
  `memory_usage`, `cpu_usage`, `mempages`, `socket`), its PCI pools by NUMA node, its allocation
  ratios and CPU flags. The differential bench generates host views directly.
- `chd_of(view)` writes the CHD: a node per cell (its socket as its PUs' package); a PU per CPU of
  the cell, dedicated-capable
  (`pcpuset`: free, or dedicated when pinned), shared (`cpuset`: state shared with the cell's CPU
  allocation ratio and usage) or host-reserved (in neither set: not eligible); the smallest page
  pool as normal memory and the others as hugepage pools (reserved pages counted as used); PCI
  pools as devices of class `other` named by vendor and product id, or, with a physical network,
  as a port with that many free VFs.

A cell whose `cpuset` equals its `pcpuset` is Nova's legacy `vcpu_pin_set` configuration: its free
PUs take pinned and floating vCPUs alike (free, with the allocation ratio), and hold the cell's
whole room for floating vCPUs (Nova lets floating vCPUs run on pinned CPUs there; nfvplace does
not).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .columns import rows
from .cpu_flags import kernel_flags
from .layout import CellLayout, layout_of, threads_per_core
from .pci import devices_of, nic_of, pools_on

SMALL_PAGE_KIB = 4
LIBVIRT_CAPABILITIES = ("cpu_pinning", "numa_memory_pinning", "hugepage_numa_pinning")
VENDORS = {"intel": "GenuineIntel", "amd": "AuthenticAMD"}


def _ints(values: Any) -> list[int]:
    return sorted(map(int, values or ()))


def host_inputs(host_state: Any) -> tuple[Any, ...]:
    """What `host_view` reads of a HostState, as a hashable tuple (equal inputs, equal view): the
    scheduler plug-in keeps each host's CHD by it (`chds.SentHosts`). Sets are read in their own
    order: equal sets read in another order only cost a CHD built again."""
    topology = getattr(host_state, "numa_topology", None)
    cells = tuple(
        (
            cell.id,
            tuple(cell.cpuset or ()),
            tuple(getattr(cell, "pcpuset", ()) or ()),
            tuple(getattr(cell, "pinned_cpus", ()) or ()),
            tuple(map(tuple, getattr(cell, "siblings", ()) or ())),
            cell.memory,
            getattr(cell, "memory_usage", 0),
            getattr(cell, "cpu_usage", 0),
            tuple(
                (p.size_kb, p.total, getattr(p, "used", 0), getattr(p, "reserved", 0))
                for p in getattr(cell, "mempages", ()) or ()
            ),
            getattr(cell, "socket", None),
        )
        for cell in getattr(topology, "cells", None) or ()
    )
    stats = getattr(host_state, "pci_stats", None)
    pools = tuple(
        tuple(pool.get(k, d) for k, d in POOL_KEYS) for pool in getattr(stats, "pools", None) or ()
    )
    info = getattr(host_state, "cpu_info", None)
    return (
        host_state.host,
        getattr(host_state, "nodename", None),
        getattr(host_state, "cpu_allocation_ratio", None),
        getattr(host_state, "ram_allocation_ratio", None),
        getattr(host_state, "vcpus_total", 0),
        getattr(host_state, "total_usable_ram_mb", 0),
        info if info is None or isinstance(info, str) else json.dumps(info, sort_keys=True),
        cells,
        pools,
    )


POOL_KEYS = (
    ("vendor_id", ""),
    ("product_id", ""),
    ("numa_node", None),
    ("dev_type", "type-PCI"),
    ("physical_network", None),
    ("count", 0),
)


def host_view(host_state: Any) -> dict[str, Any]:
    """What Nova's scheduler knows of one host (a `nova.scheduler.host_manager.HostState`)."""
    return view_of(host_inputs(host_state))


def inputs_host_id(inputs: tuple[Any, ...]) -> str:
    """The CHD id of a host by its `host_inputs` (`host_id` of its view, without the view)."""
    host, nodename = inputs[0], inputs[1]
    return host_id({"host": str(host), "nodename": str(nodename or host)})


def cell_pages(inputs: tuple[Any, ...]) -> tuple[tuple[int, tuple[Any, ...]], ...]:
    """Each NUMA cell's id and page pools `(size_kb, total, used, reserved)`, by a host's
    `host_inputs` (without its view)."""
    return tuple((int(cell[0]), cell[8]) for cell in inputs[7])


def view_of(inputs: tuple[Any, ...]) -> dict[str, Any]:
    """The host view of a HostState's `host_inputs`."""
    host, nodename, cpu_ratio, ram_ratio, vcpus, ram, info, cells, pools = inputs
    return {
        "host": str(host),
        "nodename": str(nodename or host),
        "cpu_allocation_ratio": float(cpu_ratio or 1.0),
        "ram_allocation_ratio": float(ram_ratio or 1.0),
        "vcpus_total": int(vcpus or 0),
        "memory_mb": int(ram or 0),
        "cpu_info": _cpu_info(info),
        "cells": [_cell(cell) for cell in cells],
        "pci_pools": [p for p in map(_pool, pools) if p["count"] > 0],
    }


def _cell(cell: tuple[Any, ...]) -> dict[str, Any]:
    cell_id, cpuset, pcpuset, pinned, siblings, memory, memory_usage, cpu_usage, pages, socket = (
        cell
    )
    return {
        "id": int(cell_id),
        "cpuset": _ints(cpuset),
        "pcpuset": _ints(pcpuset),
        "pinned_cpus": _ints(pinned),
        "siblings": _cores(siblings),
        "memory": int(memory),
        "memory_usage": int(memory_usage or 0),
        "cpu_usage": int(cpu_usage or 0),
        "mempages": [
            {
                "size_kb": int(size),
                "total": int(total),
                "used": int(used or 0),
                "reserved": int(reserved or 0),
            }
            for size, total, used, reserved in pages
        ],
        "socket": socket,
    }


def _cores(siblings: tuple[Any, ...]) -> list[list[int]]:
    """A cell's siblings (a tuple of each core's, `host_inputs`), each core's sorted: worked out
    once per topology (a cold pass sorted 60,000 cores of a few topologies), a new list each."""
    try:
        cores = _sorted_cores(siblings)
    except TypeError:  # a value Nova never gives (an unhashable one): not kept
        cores = _sorted_cores.__wrapped__(siblings)
    return [list(core) for core in cores]


@functools.lru_cache(maxsize=256)
def _sorted_cores(siblings: tuple[Any, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(sorted(map(int, s))) for s in siblings)


def _pool(pool: tuple[Any, ...]) -> dict[str, Any]:
    vendor, product, node, dev_type, network, count = pool
    return {
        "vendor_id": str(vendor),
        "product_id": str(product),
        "numa_node": None if node is None else int(node),
        "dev_type": str(dev_type),
        "physical_network": network,
        "count": int(count),
    }


def _cpu_info(raw: Any) -> dict[str, Any]:
    """The compute node's `cpu_info` (a JSON string from the libvirt driver), or {}."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    if not isinstance(raw, Mapping):
        return {}
    return {
        "vendor": str(raw.get("vendor", "")),
        "model": str(raw.get("model", "")),
        "features": sorted(str(f) for f in raw.get("features", ()) or ()),
    }


def host_id(view: Mapping[str, Any]) -> str:
    """The CHD id of a host view: its node name (or host), as an nfvplace identifier."""
    text = re.sub(r"[^A-Za-z0-9._:@/-]+", "-", str(view.get("nodename") or view["host"]))
    text = text.strip("-")[:253]
    return text if text[:1].isalnum() else f"h-{text}"[:253]


def chd_of(
    view: Mapping[str, Any],
    unpinnable: Mapping[int, Iterable[int]] | None = None,
    columns: bool = False,
) -> dict[str, Any]:
    """The Compute Host Descriptor (plain data) of a host view; the free `unpinnable` PUs (per
    cell: those nova-compute would not pin this request's vCPUs to, `isolate_refused`) are not
    eligible. `columns`: its PUs and VFs as columns (`columns.py`), as the plug-in sends it."""
    cells = list(view.get("cells") or ())
    info = view.get("cpu_info") or {}
    vendor = str(info.get("vendor") or "")
    processor: dict[str, Any] = {
        "vendor": VENDORS.get(vendor.lower(), vendor or "unknown"),
        "model": str(info.get("model") or "unknown"),
        "flags": kernel_flags(info.get("features") or ()),  # libvirt names -> /proc/cpuinfo
    }
    unknown = [f"processor.{k}" for k in ("vendor", "model") if not info.get(k)]
    if not cells:  # no NUMA topology: one node of floating PUs, and nothing can be pinned
        nodes = [_flat_node(view)]
        capabilities: tuple[str, ...] = ()
        unknown.append("numa_nodes (Nova reports no NUMA topology)")
    else:
        closed = unpinnable or {}
        nodes = [
            _node(cell, view, layout, pools_on(view, cell["id"]), closed.get(int(cell["id"])))
            for cell, layout in zip(cells, layout_of(cells), strict=True)
        ]
        capabilities = LIBVIRT_CAPABILITIES
    chd = {
        "schema": "nfvplace/chd/v1",
        "id": host_id(view),
        "processor": processor,
        "hypervisor": {"type": "kvm", "capabilities": list(capabilities)},
        "numa_nodes": nodes,  # no label naming the host: identical hosts share one answer
        "provenance": {"source": "manual", "tool": "nova-scheduler", "unknown": unknown},
    }
    return chd if columns else rows(chd)


def _flat_node(view: Mapping[str, Any]) -> dict[str, Any]:
    """A host without a NUMA topology: its vCPUs float on shared PUs of one node."""
    ratio = float(view.get("cpu_allocation_ratio") or 1.0)
    pus = list(range(max(int(view.get("vcpus_total") or 0), 1)))
    cpus = {
        "id": pus,
        "core": pus,
        "siblings": [[pu] for pu in pus],
        "template": [0] * len(pus),
        "templates": [{"state": "shared", "oversubscription_ratio": ratio}],
    }
    memory = {"total_mib": int(view.get("memory_mb") or 0)}
    return {"id": 0, "cpus": cpus, "memory": memory}


def isolate_refused(view: Mapping[str, Any]) -> dict[int, list[int]]:
    """Per cell, the dedicated PUs nova-compute's claim will not give an `isolate` request
    (`_pack_instance_onto_cores`): on a cell with SMT siblings configured with `cpu_dedicated_set`
    (`cpuset` differs from `pcpuset`), every one (Nova bug #1889633); in the legacy `vcpu_pin_set`
    layout (`cpuset` equal to `pcpuset`), those of cores with fewer threads in the set than the
    cell's largest core (Nova takes only cores of threads_per_core free threads). Worked out
    once per cell topology (its sets and siblings: what the refusal reads)."""
    out: dict[int, list[int]] = {}
    for cell in view.get("cells") or ():
        siblings = tuple(map(tuple, cell.get("siblings") or ()))
        topology = (tuple(cell["cpuset"]), tuple(cell["pcpuset"]), siblings)
        closed = _refused_on(topology)  # (an unhashable value fails here as in the sets)
        if closed:
            out[int(cell["id"])] = list(closed)
    return out


@functools.lru_cache(maxsize=256)
def _refused_on(topology: tuple[tuple[Any, ...], ...]) -> tuple[int, ...]:
    """`isolate_refused` of one cell, by its `cpuset`, `pcpuset` and `siblings`."""
    cpuset, pcpuset, siblings = topology
    cell = {"cpuset": cpuset, "pcpuset": pcpuset, "siblings": siblings}
    threads = threads_per_core(cell)
    dedicated = set(pcpuset)
    if threads == 1:
        return ()
    if set(cpuset) != dedicated:
        return tuple(sorted(dedicated))
    closed: set[int] = set()
    for core in siblings:
        if len(dedicated & set(core)) < threads:
            closed |= dedicated & set(core)
    return tuple(sorted(closed))


def _node(
    cell: Mapping[str, Any],
    view: Mapping[str, Any],
    layout: CellLayout,
    pools: list[Mapping[str, Any]],
    unpinnable: Iterable[int] | None = None,
) -> dict[str, Any]:
    shared, dedicated = layout.shared, layout.dedicated
    pinned = set(cell.get("pinned_cpus") or ())
    closed = set(unpinnable or ())
    ratio = float(view.get("cpu_allocation_ratio") or 1.0)
    legacy = bool(shared) and shared == dedicated
    usage = _usage(cell, ratio, len(shared - pinned) if legacy else len(shared))
    socket = cell.get("socket")
    # the socket PCI affinity `socket` asks about
    at: dict[str, Any] = {} if socket is None else {"package": int(socket)}
    floating = {**at, "oversubscription_ratio": ratio, "usage_ratio": usage}
    pinned_pu = {**at, "state": "dedicated", "owner": "nova"}
    # not eligible: nova-compute would refuse to pin there, or in neither set (kept for the host)
    closed_pu = {**at, "eligible": False}
    free_pu = floating if legacy else at
    shared_pu = {**floating, "state": "shared"}
    pus = layout.pus
    states = (  # each PU's state, by sets (a host is a hundred PUs, a fleet a thousand hosts)
        (pinned_pu, dedicated & pinned),
        (closed_pu, (dedicated - pinned) & closed | pus - dedicated - shared),
        (free_pu, dedicated - pinned - closed),
        (shared_pu, shared - dedicated),
    )
    templates: list[dict[str, Any]] = []
    template_of: dict[int, int] = {}
    for state, group in states:
        if group:
            template_of.update(dict.fromkeys(group, len(templates)))
            templates.append(state)
    cpus = {  # as columns (`columns.py`); the layout's own tuples, whose JSON it keeps
        "id": layout.order,
        "core": layout.cores,
        "siblings": layout.siblings,
        "template": list(map(template_of.__getitem__, layout.order)),
        "templates": templates,
    }
    node: dict[str, Any] = {
        "id": int(cell["id"]),
        "cpus": cpus,
        "memory": _memory(cell, view),
    }
    devices = [p for p in pools if not p.get("physical_network")]
    ports = [p for p in pools if p.get("physical_network")]
    if devices:
        node["pci_devices"] = [d for p in devices for d in devices_of(p)]
    if ports:
        node["nics"] = [nic_of(p) for p in ports]
    return node


def _usage(cell: Mapping[str, Any], ratio: float, pool: int) -> float:
    """The usage of each of the `pool` PUs that take floating vCPUs, such that their room adds up
    to Nova's count for the cell: `len(cpuset) x ratio - cpu_usage` vCPUs (in the legacy layout
    the pinned CPUs are in the cpuset but take no floating vCPU, so the others hold the room)."""
    room = len(cell["cpuset"]) * ratio - float(cell.get("cpu_usage", 0))
    if not pool:
        return 0.0
    return min(max(1.0 - room / (pool * ratio), 0.0), 1.0)


def _memory(cell: Mapping[str, Any], view: Mapping[str, Any]) -> dict[str, Any]:
    """The smallest page pool is normal memory; the others are hugepage pools."""
    total = int(cell["memory"])
    pages = sorted(cell.get("mempages") or (), key=lambda p: p["size_kb"])
    ratio = float(view.get("ram_allocation_ratio") or 1.0)
    if not pages:
        used = int(cell.get("memory_usage", 0))
        return {"total_mib": total, "normal": {"oversubscription_ratio": ratio, "used_mib": used}}
    small, huge = pages[0], pages[1:]
    pools = [
        {
            "size_kib": p["size_kb"],
            "total": p["total"],
            "used": min(p["used"] + p.get("reserved", 0), p["total"]),
        }
        for p in huge
    ]
    huge_mib = sum(p["size_kb"] * p["total"] for p in huge) // 1024
    small_mib = small["size_kb"] * small["total"] // 1024
    # what the small-page pool does not cover of the node's memory outside hugepages is reserved
    reserved = max(total - huge_mib - small_mib, 0) + small["size_kb"] * small["reserved"] // 1024
    return {
        "total_mib": total,
        "hugepages": pools,
        "normal": {
            "oversubscription_ratio": ratio,
            "reserved_mib": reserved,
            "used_mib": small["size_kb"] * small["used"] // 1024,
        },
    }
