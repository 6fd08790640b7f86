"""Fleet heatmap: one cell per host, NUMA node and resource, counted as placement counts."""

from __future__ import annotations

from xml.etree import ElementTree

import nfvplace
from nfvplace.models import ComputeHostDescriptor, VmConfiguration
from nfvplace.visual import heatmap_svg, node_usage
from nfvplace.visual.heatmap import METRICS, colour

from .conftest import EXAMPLES

SVG = "{http://www.w3.org/2000/svg}"


def _cells(svg: str) -> dict[tuple[str, str, str], tuple[float, float]]:
    root = ElementTree.fromstring(svg)
    return {
        (g.get("data-host", ""), g.get("data-node", ""), g.get("data-metric", "")): (
            float(g.get("data-free", "nan")),
            float(g.get("data-total", "nan")),
        )
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "cell"
    }


def test_every_host_node_and_metric_has_a_cell() -> None:
    hosts = nfvplace.load(EXAMPLES / "fleet")
    assert isinstance(hosts, list)
    cells = _cells(heatmap_svg(hosts))
    for usage in node_usage(hosts):
        for metric in METRICS:
            free, total = usage.metric(metric)
            key = (usage.host, str(usage.node), metric)
            if total > 0:
                assert cells[key] == (free, total)
            else:
                assert key not in cells  # drawn grey, no fraction


def test_placing_lowers_the_free_counts(
    dell: ComputeHostDescriptor, placed: tuple[ComputeHostDescriptor, tuple[VmConfiguration, ...]]
) -> None:
    before = {(u.host, u.node): u for u in node_usage([dell])}
    after = {(u.host, u.node): u for u in node_usage([placed[0]])}
    du = placed[1][0].cpu_sets[0]
    key = (dell.id, du.numa_node)
    pairs = len(du.vcpu_pins) // 2
    assert after[key].free_pairs <= before[key].free_pairs - pairs
    assert du.hugepages is not None
    taken = du.hugepages.count * du.hugepages.size_kib // 1024
    assert after[key].hugepages_free_mib <= before[key].hugepages_free_mib - taken
    assert sum(u.free_vfs for u in after.values()) < sum(u.free_vfs for u in before.values())


def test_colour_scale_runs_red_to_green() -> None:
    assert colour(0) == "#d73027"
    assert colour(1) == "#1a9850"
    assert colour(0.5) == "#fee08b"
    assert colour(-3) == colour(0)
