"""The hosts a request's hugepages rule out, answered by the plug-in without the service.

A flavor with one guest NUMA node and an explicit page size (`hw:mem_page_size=2MB`) puts all of
its memory in pages of that size on one host NUMA cell. A host none of whose cells has that many
free pages of that size fits the request in no placement: Nova's NUMATopologyFilter refuses it,
and so does the service (no NUMA node with the pages). A cold pass of such a flavor over a
thousand hosts, most of them without a cell of free pages, then sends the service only the few
that may fit, instead of writing, sending, validating and indexing every host's CHD; the others
get the service's reason for it, worded as the engine words it (the service may name another
shortfall first on a host short of several things).

Only requests read plainly: the flavor alone (no image properties, no PCI requests), one guest
node, a page size in KiB or with a unit, and no extra spec but the CPU policies; and only hosts
each cell of which has one pool of that size, larger than its smallest pool (which the CHD takes
as normal memory). Anything else goes to the service. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PLAIN_SPECS = frozenset(
    {"hw:cpu_policy", "hw:cpu_thread_policy", "hw:numa_nodes", "hw:mem_page_size"}
)
SIZE = re.compile(r"(\d+)(KB|MB|GB)?")
UNITS = {None: 1, "KB": 1, "MB": 1024, "GB": 1024 * 1024}


@dataclass(frozen=True, slots=True)
class PagesAsked:
    """`count` free pages of `size_kib` on one host NUMA cell."""

    size_kib: int
    count: int

    def refusal(self, cells: Iterable[tuple[int, tuple[Any, ...]]]) -> str | None:
        """Why a host with these cells (each one's id and page pools: `hosts.cell_pages`) cannot
        take the request, or None when it may (or when its cells are not plain enough to tell)."""
        best: tuple[int, int] | None = None  # (cell, free pages): the first with the most
        for cell_id, pools in cells:
            free = self._free(pools)
            if free is None or free >= self.count:
                return None
            if best is None or free > best[1]:
                best = (cell_id, free)
        if best is None:
            return None
        unit = f"free {_label(self.size_kib)} pages"
        return (
            f"cpu-set 0 needs {self.count} {unit}; the best NUMA node ({best[0]}) has {best[1]} "
            f"{unit}"
        )

    def _free(self, pools: tuple[Any, ...]) -> int | None:
        """Free pages of the size in a cell's pools `(size_kb, total, used, reserved)` as the CHD
        counts them (reserved as used), None unless one pool has the size and is not the
        smallest."""
        sized = [p for p in pools if int(p[0]) == self.size_kib]
        if len(sized) != 1 or min(int(p[0]) for p in pools) == self.size_kib:
            return None
        _, total, used, reserved = sized[0]
        total = int(total)
        return total - min(int(used or 0) + int(reserved or 0), total)


def pages_asked(document: Mapping[str, Any]) -> PagesAsked | None:
    """The pages on one host cell a Nova request document needs, when it says so plainly."""
    if set(document) != {"flavor"}:
        return None
    flavor = document["flavor"]
    specs = flavor.get("extra_specs") or {}
    if not set(specs) <= PLAIN_SPECS or specs.get("hw:numa_nodes", "1") != "1":
        return None
    match = SIZE.fullmatch(str(specs.get("hw:mem_page_size", "")))
    if match is None:
        return None
    kib = int(match.group(1)) * UNITS[match.group(2)]
    ram_kib = int(flavor.get("ram", 0)) * 1024
    if kib <= 4 or kib & (kib - 1) or ram_kib <= 0 or ram_kib % kib:
        return None  # small pages, or what the service refuses as written (it says why)
    return PagesAsked(kib, ram_kib // kib)


def _label(size_kib: int) -> str:
    for unit, kib in (("GiB", 1024 * 1024), ("MiB", 1024)):
        if size_kib % kib == 0:
            return f"{size_kib // kib} {unit}"
    return f"{size_kib} KiB"
