"""Hugepages, normal memory and memory bandwidth of each cpu-set, from its node's free pools.

- hugepages of the requested size come from the node's pool of that size (never oversubscribed);
- the rest of the cpu-set's memory comes from the node's free normal memory; the node's
  `normal.oversubscription_ratio` only counts when the VM allows memory oversubscription too;
- `memory_bandwidth_gbps` of a cpu-set is charged to its node when the node states its bandwidth
  (a node without a bandwidth figure is not limited).
"""

from __future__ import annotations

import numpy as np

from ...exact import KBPS_PER_GBPS, gbps_text
from ...models.units import format_memory_kib
from ..request import CpuSetDemand
from .base import FilterInput, ModelContext, NodeNeed


def page_label(size_kib: int) -> str:
    text = format_memory_kib(size_kib)
    return text.replace("GiB", " GiB").replace("MiB", " MiB").replace("KiB", " KiB")


def node_needs(inp: FilterInput, cs: CpuSetDemand) -> list[NodeNeed]:
    f = inp.fleet
    out = []
    if cs.hugepage_size_kib is not None and cs.hugepage_count:
        label = page_label(cs.hugepage_size_kib)
        col = f.page_column(cs.hugepage_size_kib)
        free = f.hugepages[:, :, col] if col is not None else np.zeros_like(f.whole)
        out.append(
            NodeNeed(
                "hugepages",
                f"{cs.hugepage_count} free {label} pages",
                free >= cs.hugepage_count,
                free,
                cs.hugepage_count,
                f"free {label} pages",
            )
        )
    if cs.normal_mib:
        free_mem = f.normal_over if inp.request.memory_oversubscription else f.normal
        out.append(
            NodeNeed(
                "memory",
                f"{cs.normal_mib} MiB free memory",
                free_mem >= cs.normal_mib,
                free_mem,
                cs.normal_mib,
                "MiB free memory",
            )
        )
    if cs.memory_bandwidth_kbps:
        out.append(
            NodeNeed(
                "memory_bandwidth",
                f"{gbps_text(cs.memory_bandwidth_kbps)} Gbps free memory bandwidth",
                f.membw >= cs.memory_bandwidth_kbps,
                f.membw / KBPS_PER_GBPS,
                cs.memory_bandwidth_kbps / KBPS_PER_GBPS,
                "Gbps free memory bandwidth",
            )
        )
    return out


def post(ctx: ModelContext) -> None:
    m = ctx.model
    req = ctx.request
    for node in ctx.view.nodes:
        on_node = [(cs, ctx.placed(cs.id, node.id)) for cs in req.cpu_sets]
        placed = [(cs, y) for cs, y in on_node if y is not None]
        if len(placed) < 2:
            continue  # a lone cpu-set's node already passed the filter's count checks
        sizes = {cs.hugepage_size_kib for cs, _ in placed if cs.hugepage_size_kib}
        for size in sizes:
            m.add(
                sum(cs.hugepage_count * y for cs, y in placed if cs.hugepage_size_kib == size)
                <= node.hugepages_free.get(size, 0)
            )
        free = node.normal_free_over_mib if req.memory_oversubscription else node.normal_free_mib
        m.add(sum(cs.normal_mib * y for cs, y in placed) <= free)
        if node.memory_bandwidth_free_kbps is not None:
            m.add(
                sum(cs.memory_bandwidth_kbps * y for cs, y in placed)
                <= node.memory_bandwidth_free_kbps
            )
