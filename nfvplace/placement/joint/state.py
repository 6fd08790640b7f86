"""The state of a joint search: a working copy of the fleet with the units placed so far claimed.

`place` claims a unit's configuration on the working copy (so the next unit on the same host sees
the PUs, hugepages, VFs and ports already given away: resources are checked jointly), `undo` puts the
host back exactly as it was. `consider` says which hosts a unit may go to given the others: anti-
affinity (host scope), link locality; `forbidden_nodes` gives the NUMA nodes a numa-scope anti-
affinity group keeps a unit away from. `link_room` checks the bandwidth of links whose two ends
share a host (carried by that host's vSwitch; a host without a vSwitch is not charged).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...exact import kbps
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.vnf import AntiAffinityScope, Locality
from ..index import FleetIndex
from ..resources import implementing
from ..resources.base import UNLIMITED_KBPS, BoolArray
from ..resources.stages import Links
from .batch import Group, Unit

AFFINITY = "already host a member of the same anti-affinity group"

_LINKING: tuple[Links[Any], ...] = implementing(Links)
"""The kinds that carry links between members of a VNF on one host (the vSwitch)."""


def _nodes(config: VmConfiguration) -> set[int]:
    nodes = {cs.numa_node for cs in config.cpu_sets}
    if config.shared is not None and config.shared.numa_node is not None:
        nodes.add(config.shared.numa_node)
    return nodes


@dataclass
class Placed:
    unit: int
    host: int
    configuration: VmConfiguration
    before: ComputeHostDescriptor  # the host as it was before this unit was claimed on it
    link_gbps: float  # link bandwidth this unit added on its host


@dataclass
class JointState:
    fleet: FleetIndex  # the working copy
    group: Group
    units: list[Unit]
    placed: dict[int, Placed] = field(default_factory=dict)
    on_host: dict[int, list[int]] = field(default_factory=dict)  # host -> units on it
    link_gbps: dict[int, float] = field(default_factory=dict)  # host -> colocated link traffic
    _signatures: dict[int, str] = field(default_factory=dict)

    @classmethod
    def start(cls, fleet: FleetIndex, group: Group, units: list[Unit]) -> JointState:
        return cls(fleet.copy(), group, units)

    def hosts_of(self, member: str) -> list[int]:
        return [p.host for p in self.placed.values() if self.units[p.unit].member.name == member]

    def consider(self, unit: int) -> tuple[BoolArray, dict[str, list[int]]]:
        """Hosts the unit may go to, and the hosts each joint rule excludes (by phrase)."""
        name = self.units[unit].member.name
        n = len(self.fleet)
        consider: BoolArray = np.ones(n, dtype=np.bool_)
        excluded: dict[str, list[int]] = {}

        def exclude(mask: BoolArray, phrase: str) -> None:
            hit = consider & mask
            if hit.any():
                excluded.setdefault(phrase, []).extend(np.flatnonzero(hit).tolist())
                consider[hit] = False

        for apart in self.group.apart:
            if name not in apart.members or apart.scope is not AntiAffinityScope.host:
                continue
            mask = np.zeros(n, dtype=np.bool_)
            for other in apart.members:
                mask[self.hosts_of(other)] = True
            exclude(mask, AFFINITY)
        for link in self.group.links:
            if name not in link.members or link.locality is Locality.any:
                continue
            others = [h for m in link.members - {name} for h in self.hosts_of(m)]
            if not others:
                continue
            mask = np.zeros(n, dtype=np.bool_)
            mask[others] = True
            if link.locality is Locality.same_host:
                exclude(~mask, f"are not the host of link {link.name}'s other end (same_host)")
            else:
                exclude(mask, f"host the other end of link {link.name} (different_host)")
        return consider, excluded

    def forbidden_nodes(self, unit: int, host: int) -> set[int]:
        name = self.units[unit].member.name
        nodes: set[int] = set()
        for apart in self.group.apart:
            if name in apart.members and apart.scope is AntiAffinityScope.numa_node:
                for other in self.on_host.get(host, ()):
                    if self.units[other].member.name in apart.members:
                        nodes |= _nodes(self.placed[other].configuration)
        return nodes

    def numa_hosts(self, unit: int) -> list[int]:
        """Hosts where a numa-scope anti-affinity group narrows the nodes the unit may use."""
        return [h for h in self.on_host if self.forbidden_nodes(unit, h)]

    def link_traffic(self, unit: int, host: int) -> float:
        """Bandwidth of the links between `unit` and the units already on `host`."""
        name = self.units[unit].member.name
        total = 0.0
        for link in self.group.links:
            if name not in link.members or not link.bandwidth_gbps:
                continue
            for other in self.on_host.get(host, ()):
                other_name = self.units[other].member.name
                if other_name in link.members and other_name != name:
                    total += link.bandwidth_gbps
        return total

    def link_room(self, host: int, extra: float) -> bool:
        """Whether `host` (with the unit claimed) still carries its colocated links plus `extra`."""
        if extra <= 0:
            return True
        needed = kbps(self.link_gbps.get(host, 0.0) + extra)
        for kind in _LINKING:
            free = kind.link_kbps(self.fleet.table(kind), host)  # kbit/s, exact
            if free is not None and free < UNLIMITED_KBPS and needed > free:
                return False
        return True

    def place(
        self, unit: int, host: int, config: VmConfiguration, updated: ComputeHostDescriptor
    ) -> bool:
        """Claim `unit` on `host`; False (and nothing changed) if its links do not fit there."""
        before = self.fleet.hosts[host]
        extra = self.link_traffic(unit, host)
        self.fleet.update(updated)
        if not self.link_room(host, extra):
            self.fleet.update(before)
            return False
        self.placed[unit] = Placed(unit, host, config, before, extra)
        self.on_host.setdefault(host, []).append(unit)
        self.link_gbps[host] = self.link_gbps.get(host, 0.0) + extra
        return True

    def undo(self, unit: int) -> Placed:
        placed = self.placed.pop(unit)
        self.fleet.update(placed.before)
        self.on_host[placed.host].remove(unit)
        if not self.on_host[placed.host]:
            del self.on_host[placed.host]
        self.link_gbps[placed.host] -= placed.link_gbps
        return placed

    def signature(self, host: int) -> str:
        """What makes two hosts interchangeable for the rest of the search: the host's descriptor
        without its id and owner names, and the members of this search already on it."""
        descriptor = self.fleet.hosts[host]
        key = self._signatures.get(host)
        if key is None or not key.startswith(f"{id(descriptor)}:"):
            key = f"{id(descriptor)}:{host_signature(descriptor)}"
            self._signatures[host] = key
        members = sorted(self.units[u].member.name for u in self.on_host.get(host, ()))
        return key.partition(":")[2] + "|" + ",".join(members)


def host_signature(host: ComputeHostDescriptor) -> int:
    """Equal for hosts that differ only in id, labels and owner names (interchangeable hosts)."""
    data = host.model_dump(mode="json", exclude={"id", "labels", "provenance"})
    data["instances"] = sorted(
        (i["vm"], i.get("memory_bandwidth_gbps", 0)) for i in data.get("instances", [])
    )
    return hash(json.dumps(_strip_owners(data), sort_keys=True))


def _strip_owners(value: object) -> object:
    if isinstance(value, dict):
        return {k: _strip_owners(v) for k, v in value.items() if k != "owner"}
    if isinstance(value, list):
        return [_strip_owners(v) for v in value]
    return value
