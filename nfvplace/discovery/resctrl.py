"""L3 cache allocation (Intel RDT CAT) from Linux resctrl and the CPU cache topology in sysfs.

- `sys/fs/resctrl/info/L3/`: `cbm_mask` (the ways, one bit each), `num_closids` (classes of
  service, the default class included), `min_cbm_bits` (the fewest ways a class may have);
- `sys/fs/resctrl/schemata`: the L3 cache ids (resctrl's domains);
- `sys/devices/system/cpu/cpuN/cache/index3/`: each PU's L3 cache `id` and `size`, and
  `sys/devices/system/node/nodeK/cpulist`: the NUMA nodes whose PUs share each cache;
- every resctrl group (`sys/fs/resctrl/<group>/`) in `exclusive` mode holds its ways: an allocation
  owned by the group's name (nfvplace's host tuning names a VM's group after its instance); every
  other group takes a class (`classes_used`).

Pure over a `root` prefix, so that tests run it on fixture trees. Returns None where resctrl is not
mounted or has no L3 resource.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

from .sysfs import node_ids, parse_cpulist, read_text

RESCTRL = "sys/fs/resctrl"


def parse_schemata(text: str) -> dict[int, int]:
    """The L3 line of a schemata file: cache id -> capacity bitmask."""
    for line in text.splitlines():
        resource, _, masks = line.strip().partition(":")
        if resource.strip() == "L3":
            out = {}
            for part in masks.split(";"):
                key, _, mask = part.partition("=")
                if key.strip().isdigit() and mask.strip():
                    out[int(key)] = int(mask.strip(), 16)
            return out
    return {}


def _runs(mask: int) -> list[tuple[int, int]]:
    """The contiguous runs of set bits of a mask: (first bit, length)."""
    runs, bit = [], 0
    while mask >> bit:
        if mask >> bit & 1:
            start = bit
            while mask >> bit & 1:
                bit += 1
            runs.append((start, bit - start))
        else:
            bit += 1
    return runs


def _cache_nodes(root: Path) -> dict[int, tuple[set[int], int | None]]:
    """L3 cache id -> (NUMA nodes whose PUs share it, its size in KiB)."""
    node_of: dict[int, int] = {}
    for node in node_ids(root):
        cpus = read_text(root / f"sys/devices/system/node/node{node}/cpulist") or ""
        node_of.update((cpu, node) for cpu in parse_cpulist(cpus))
    out: dict[int, tuple[set[int], int | None]] = {}
    for cpu, node in sorted(node_of.items()):
        base = root / f"sys/devices/system/cpu/cpu{cpu}/cache/index3"
        ident = read_text(base / "id")
        if ident is None or not ident.strip().isdigit():
            continue
        size = (read_text(base / "size") or "").strip().upper().removesuffix("K")
        out.setdefault(int(ident), (set(), int(size) if size.isdigit() else None))[0].add(node)
    return out


def _groups(base: Path) -> tuple[list[dict[str, Any]], int]:
    """(allocations of the exclusive groups, by cache id; the number of other groups)."""
    allocations: list[dict[str, Any]] = []
    others = 0
    for group in sorted(p for p in base.iterdir() if p.is_dir()):
        if group.name in ("info", "mon_data", "mon_groups"):
            continue
        mode = (read_text(group / "mode") or "").strip()
        masks = parse_schemata(read_text(group / "schemata") or "")
        if mode != "exclusive" or not masks:
            others += 1
            continue
        for cache, mask in masks.items():
            for first, ways in _runs(mask):
                owner = unquote(group.name)  # host tuning names a VM's group after its instance
                allocations.append(
                    {"cache": cache, "first_way": first, "ways": ways, "owner": owner}
                )
    return allocations, others


def read_cache_allocation(root: Path) -> dict[str, Any] | None:
    """The host's `cache_allocation` (as CHD data), or None without resctrl's L3 resource."""
    base = root / RESCTRL
    mask = read_text(base / "info/L3/cbm_mask")
    if mask is None or not mask.strip():
        return None
    ways = int(mask.strip(), 16).bit_count()
    classes = read_text(base / "info/L3/num_closids")
    min_ways = read_text(base / "info/L3/min_cbm_bits")
    caches = _cache_nodes(root)
    allocations, others = _groups(base)
    domains = []
    for cache in sorted(parse_schemata(read_text(base / "schemata") or "")):
        nodes, size_kib = caches.get(cache, (set(), None))
        domains.append(
            {
                "id": cache,
                "numa_nodes": sorted(nodes),
                "ways": ways,
                "way_kib": size_kib // ways if size_kib else None,
                "allocations": [
                    {k: v for k, v in a.items() if k != "cache"}
                    for a in allocations
                    if a["cache"] == cache
                ],
            }
        )
    if not domains or not all(d["numa_nodes"] for d in domains):
        return None
    return {
        "classes": int(classes) if classes and classes.strip().isdigit() else None,
        "classes_used": others,
        "min_ways": int(min_ways) if min_ways and min_ways.strip().isdigit() else 1,
        "domains": domains,
    }
