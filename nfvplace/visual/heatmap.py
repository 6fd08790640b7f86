"""A fleet's free resources as a heatmap: hosts x NUMA nodes, one panel per resource (free cores,
free core pairs, free hugepages, free VFs), each cell coloured by the free fraction and labelled with
the free amount. Counted the way placement counts them (`placement.index.free_of`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from ..models.chd import ComputeHostDescriptor, NumaNode
from .svg import Box, document, group, rect, text

if TYPE_CHECKING:
    from ..placement.resources.base import HostFree

METRICS = ("free cores", "free pairs", "hugepages GiB", "free VFs")
CELL_W, CELL_H, LABEL_W, GAP = 46.0, 18.0, 150.0, 14.0


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """What is free on one NUMA node, next to what could be free (totals of eligible resources)."""

    host: str
    node: int
    free_cores: int
    cores: int
    free_pairs: int
    pairs: int
    hugepages_free_mib: int
    hugepages_mib: int
    free_vfs: int
    vfs: int

    def metric(self, name: str) -> tuple[float, float]:
        """(free, total) of one of `METRICS`."""
        return {
            "free cores": (self.free_cores, self.cores),
            "free pairs": (self.free_pairs, self.pairs),
            "hugepages GiB": (self.hugepages_free_mib / 1024, self.hugepages_mib / 1024),
            "free VFs": (self.free_vfs, self.vfs),
        }[name]


def _usage(host_id: str, node: NumaNode, free: HostFree, slot: int) -> NodeUsage:
    from ..placement.resources.cpu import CPU
    from ..placement.resources.nics import NICS

    threads, ports_free = free.of(CPU).nodes[slot], free.of(NICS).nodes[slot].ports
    cores: dict[int, list[bool]] = {}
    for cpu in node.cpus:
        cores.setdefault(cpu.core, []).append(cpu.eligible)
    eligible = [threads for threads in cores.values() if all(threads)]
    pools = node.memory.hugepages
    ports = [port for nic in node.nics for port in nic.ports if port.eligible]
    return NodeUsage(
        host=host_id,
        node=node.id,
        free_cores=len(threads.whole_cores) + len(threads.single_cores),
        cores=len(eligible),
        free_pairs=sum(1 for c in threads.whole_cores if len(c) >= 2),
        pairs=sum(1 for threads in eligible if len(threads) >= 2),
        hugepages_free_mib=sum(p.free * p.size_kib // 1024 for p in pools),
        hugepages_mib=sum(p.total_mib for p in pools),
        free_vfs=sum(len(p.free_vfs) for p in ports_free if p.sriov_ok),
        vfs=sum(len(p.vfs) for p in ports),
    )


def node_usage(hosts: Sequence[ComputeHostDescriptor]) -> list[NodeUsage]:
    """One `NodeUsage` per host and NUMA node, in the hosts' order."""
    from ..placement.index import free_of

    rows: list[NodeUsage] = []
    for host in hosts:
        free = free_of(host)
        rows.extend(_usage(host.id, node, free, k) for k, node in enumerate(host.numa_nodes))
    return rows


def colour(fraction: float) -> str:
    """Red (nothing free) through yellow to green (all free)."""
    stops = ((0.0, (215, 48, 39)), (0.5, (254, 224, 139)), (1.0, (26, 152, 80)))
    f = min(max(fraction, 0.0), 1.0)
    for (a, ca), (b, cb) in pairwise(stops):
        if f <= b:
            t = (f - a) / (b - a)
            rgb = tuple(round(x + (y - x) * t) for x, y in zip(ca, cb, strict=True))
            return "#{:02x}{:02x}{:02x}".format(*rgb)
    return "#1a9850"


def _cell(usage: NodeUsage | None, metric: str) -> str:
    if usage is None:
        return rect(0, 0, CELL_W, CELL_H, "#f0f0f0", stroke="#ffffff")
    free, total = usage.metric(metric)
    tip = f"{usage.host} NUMA {usage.node}: {metric} {free:g} of {total:g}"
    if total <= 0:
        return rect(0, 0, CELL_W, CELL_H, "#d9d9d9", stroke="#ffffff", title=tip) + text(
            CELL_W / 2, 12.5, "-", size=9, anchor="middle"
        )
    value = f"{free:.0f}" if float(free).is_integer() or free >= 10 else f"{free:.1f}"
    return group(
        [
            rect(0, 0, CELL_W, CELL_H, colour(free / total), stroke="#ffffff", title=tip),
            text(CELL_W / 2, 12.5, value, size=9, anchor="middle"),
        ],
        class_="cell",
        data_host=usage.host,
        data_node=usage.node,
        data_metric=metric,
        data_free=f"{free:g}",
        data_total=f"{total:g}",
    )


def _panel(
    metric: str, hosts: list[str], cells: dict[tuple[str, int], NodeUsage], nodes: int
) -> Box:
    parts = [text(0, 11, metric, size=10, weight="bold")]
    for n in range(nodes):
        parts.append(text(n * CELL_W + CELL_W / 2, 26, f"N{n}", size=8.5, anchor="middle"))
    for row, host in enumerate(hosts):
        for n in range(nodes):
            x, y = n * CELL_W, 30 + row * CELL_H
            parts.append(
                f'<g transform="translate({x:g},{y:g})">{_cell(cells.get((host, n)), metric)}</g>'
            )
    return Box("".join(parts), nodes * CELL_W, 30 + len(hosts) * CELL_H)


def heatmap_svg(hosts: Sequence[ComputeHostDescriptor], *, title: str = "fleet") -> str:
    """The fleet heatmap of `hosts` as SVG text (columns are NUMA nodes by position on the host)."""
    from ..placement.index import free_of

    ids = [host.id for host in hosts]
    position: dict[tuple[str, int], NodeUsage] = {}
    for host in hosts:
        free = free_of(host)
        for k, node in enumerate(host.numa_nodes):
            position[(host.id, k)] = _usage(host.id, node, free, k)
    nodes = max((len(h.numa_nodes) for h in hosts), default=1)
    parts = [
        text(
            0,
            14,
            f"{title}: {len(ids)} hosts, free resources per NUMA node",
            size=12,
            weight="bold",
        )
    ]
    top = 24.0
    for row, host_id in enumerate(ids):
        parts.append(
            text(LABEL_W - 6, top + 30 + row * CELL_H + 12.5, host_id[:24], size=9, anchor="end")
        )
    x = LABEL_W
    for metric in METRICS:
        panel = _panel(metric, ids, position, nodes)
        parts.append(group([panel.at(x, top)], class_="panel", data_metric=metric))
        x += panel.width + GAP
    height = top + 30 + len(ids) * CELL_H + 34
    legend_y = height - 22
    for k in range(11):
        parts.append(rect(LABEL_W + k * 16, legend_y, 16, 10, colour(k / 10), stroke="none"))
    parts.append(text(LABEL_W + 180, legend_y + 9, "free fraction: 0 (red) to 1 (green)", size=9))
    return document(
        x + 10, height, [group(parts, transform="translate(6,0)")], title=f"{title} heatmap"
    )
