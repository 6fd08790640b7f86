"""Pictures of hosts and fleets: pure functions from descriptors to SVG text (PNG through `to_png`).

`host_svg(host, configurations)` draws a host the way lstopo does, with placed VMs overlaid;
`heatmap_svg(hosts)` draws a fleet's free resources per NUMA node; `to_png(svg)` rasterises either.
"""

from __future__ import annotations

from .heatmap import NodeUsage, heatmap_svg, node_usage
from .host import host_svg, hosts_svg
from .png import to_png

__all__ = ["NodeUsage", "heatmap_svg", "host_svg", "hosts_svg", "node_usage", "to_png"]
