"""Placing a VNF template: every member, `count` instances each, jointly (see `joint.py`).

Anti-affinity groups keep every instance of their members on distinct hosts (`scope: host`) or on
distinct NUMA nodes (`scope: numa_node`); a link with `locality: same_host` puts its endpoints'
members on one host, `different_host` keeps them apart, and the bandwidth of a link whose two ends
share a host is charged to that host's vSwitch. All or nothing by default: if any instance finds no
host in every assignment tried, the result carries the diagnosis and no configuration at all.
"""

from __future__ import annotations

from ...models.vnf import VnfTemplate
from ..index import FleetIndex
from ..options import Options
from ..result import PlacementResult
from .batch import of_template
from .place import place_joint


def place_vnf(
    fleet: FleetIndex, template: VnfTemplate, options: Options, mode: str = "all"
) -> PlacementResult:
    return place_joint(
        fleet, of_template(template), options, mode=mode, limit_s=options.search_limit_s
    )
