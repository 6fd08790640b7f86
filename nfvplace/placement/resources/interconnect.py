"""Cpu-set to cpu-set bandwidth over the NUMA interconnect (`cpu_set_bandwidth`), and NUMA distance.

Two cpu-sets on different nodes need the stated bandwidth free on the link between those nodes when
the host describes that link in `interconnect` (a link the host does not describe is not limited); on
the same node they need nothing. When the host gives `numa_distances`, every two cpu-sets on different
nodes cost their distance in the objective (`DISTANCE` per unit above the local 10), so that nearer
nodes win over farther ones at equal fit. Only the exact model sees node pairs, so this kind has no
filter part.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from ...exact import kbps, kbps_of_mbps
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.units import MAX_GBPS, stored_gbps
from ..request import Request
from .base import HostFree
from .direct import Assignment, DirectPart, NoAnswer
from .draft import ConfigurationDraft, DescriptorDraft, HostDraft
from .kind import Decisions, Kind
from .model import Layout, ModelContext

DISTANCE = 20  # objective weight per unit of SLIT distance above 10 (local)


@dataclass(frozen=True, slots=True)
class Interconnect:
    links_free_kbps: dict[tuple[int, int], int] = field(default_factory=dict)  # by node ids
    distances: dict[tuple[int, int], int] = field(default_factory=dict)  # by node ids, when known
    # the Gbps of each link the host describes once, and in use (what a claim adds to)
    links_gbps: dict[tuple[int, int], tuple[float, float]] = field(default_factory=dict)


def _distances(host: ComputeHostDescriptor) -> dict[tuple[int, int], int]:
    table = host.numa_distances
    ids = [node.id for node in host.numa_nodes]
    if not table or len(table) != len(ids) or any(len(row) != len(ids) for row in table):
        return {}
    return {(a, b): table[i][j] for i, a in enumerate(ids) for j, b in enumerate(ids)}


class InterconnectKind(Kind):
    name = "interconnect"
    family = "bandwidth of the NUMA interconnect between the cpu-sets"
    costs = {
        "distance": "NUMA distance between the nodes of every two cpu-sets (20 per unit of SLIT "
        "distance above 10)"
    }

    def free(self, host: ComputeHostDescriptor) -> Interconnect:
        links = {
            (min(link.nodes), max(link.nodes)): max(
                kbps(link.bandwidth_gbps) - kbps(link.bandwidth_used_gbps), 0
            )
            for link in host.interconnect
        }
        keys = Counter((min(link.nodes), max(link.nodes)) for link in host.interconnect)
        gbps = {
            key: (link.bandwidth_gbps, link.bandwidth_used_gbps)
            for link in host.interconnect
            if keys[key := (min(link.nodes), max(link.nodes))] == 1
        }
        return Interconnect(links, _distances(host), gbps)

    def free_claimed(
        self,
        before: ComputeHostDescriptor,
        free_before: Interconnect,
        config: VmConfiguration,
        after: ComputeHostDescriptor | None,
    ) -> Interconnect | None:
        """The links' bandwidth in use raised as `claim` raises it, stored as the descriptor
        validates it; None for a pair of nodes the host describes twice, or beyond the figure a
        descriptor holds (the claim would conflict)."""
        if not config.cpu_set_links:
            return free_before
        free, gbps = dict(free_before.links_free_kbps), dict(free_before.links_gbps)
        for link in config.cpu_set_links:
            key = (min(link.numa_nodes), max(link.numa_nodes))
            if key not in free:
                continue  # not described: not limited, nothing to charge
            if key not in gbps:
                return None
            total, used = gbps[key]
            used = stored_gbps(max(used + link.bandwidth_mbps / 1000, 0.0))
            if used > MAX_GBPS:
                return None
            gbps[key] = (total, used)
            free[key] = max(kbps(total) - kbps(used), 0)
        return Interconnect(free, free_before.distances, gbps)

    def free_again(
        self, host: ComputeHostDescriptor, before: ComputeHostDescriptor, free_before: Interconnect
    ) -> Interconnect:
        return self.free(host)  # cheap to read again: nothing worth keeping

    def post_limits(self, ctx: ModelContext) -> None:
        free = ctx.free.of(self)
        need = _needs(ctx.request, free)
        load: dict[tuple[int, int], list[Any]] = {}
        for (a, b), kbit in need.items():
            for na in ctx.free.node_ids:
                for nb in ctx.free.node_ids:
                    _pair(ctx, free, (a, b), (na, nb), kbit, load)
        for key, terms in load.items():
            ctx.model.add(sum(terms) <= free.links_free_kbps[key])

    def direct(self, a: Assignment) -> DirectPart | NoAnswer:
        """`post_limits` with the nodes fixed: the links' loads, and the distance costs."""
        free = a.free.of(self)
        load: dict[tuple[int, int], int] = {}
        posted, cost = False, 0
        for (x, y), kbit in _needs(a.request, free).items():
            for na in a.allowed.get(x, ()):
                for nb in a.allowed.get(y, ()):
                    if na == nb:
                        continue
                    chosen = a.nodes[x] == na and a.nodes[y] == nb
                    key = (min(na, nb), max(na, nb))
                    if chosen and kbit and key in free.links_free_kbps:
                        load[key] = load.get(key, 0) + kbit
                    distance = free.distances.get((na, nb), 10)
                    posted = posted or distance > 10
                    cost += DISTANCE * (distance - 10) * (chosen and distance > 10)
        if any(kbit > free.links_free_kbps[key] for key, kbit in load.items()):
            return NoAnswer.infeasible
        return DirectPart(costs={"distance": cost} if posted and a.optimize else {})

    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None:
        nodes = layout.nodes if layout else {}
        draft.fields["cpu_set_links"] = tuple(
            {
                "cpu_sets": link.cpu_sets,
                "numa_nodes": (nodes[link.cpu_sets[0]], nodes[link.cpu_sets[1]]),
                "bandwidth_mbps": link.bandwidth_mbps,
            }
            for link in request.links
            if link.cpu_sets[0] in nodes
            and link.cpu_sets[1] in nodes
            and nodes[link.cpu_sets[0]] != nodes[link.cpu_sets[1]]
        )

    def counts(self, request: Request) -> bool:
        return not request.links

    def describe(self, draft: DescriptorDraft, config: VmConfiguration) -> None:
        if config.cpu_sets:
            draft.fields["cpu_set_bandwidth"] = [
                {"cpu_sets": list(link.cpu_sets), "bandwidth_mbps": link.bandwidth_mbps}
                for link in config.cpu_set_links
            ]

    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None:
        if not config.cpu_set_links:
            return
        entries = draft.entries("interconnect")
        for link in config.cpu_set_links:
            a, b = sorted(link.numa_nodes)
            for entry in entries:
                if sorted(entry["nodes"]) == [a, b]:
                    entry["bandwidth_used_gbps"] = max(
                        entry.get("bandwidth_used_gbps", 0.0) + sign * link.bandwidth_mbps / 1000,
                        0.0,
                    )


def _needs(request: Request, free: Interconnect) -> dict[tuple[int, int], int]:
    """The kbit/s between every two cpu-sets the model links: the stated bandwidth, or 0 for
    every other two when the host gives distances (to cost them)."""
    need: dict[tuple[int, int], int] = {}
    for link in request.links:
        a, b = link.cpu_sets
        need[(a, b)] = need.get((a, b), 0) + kbps_of_mbps(link.bandwidth_mbps)
    if free.distances:
        for a, b in combinations([cs.id for cs in request.cpu_sets], 2):
            if (a, b) not in need and (b, a) not in need:
                need[(a, b)] = 0
    return need


def _pair(
    ctx: ModelContext,
    free: Interconnect,
    cpu_sets: tuple[int, int],
    nodes: tuple[int, int],
    kbit: int,
    load: dict[tuple[int, int], list[Any]],
) -> None:
    """Cpu-sets a and b on nodes na and nb: the link between them carries `kbit`, at a cost."""
    (a, b), (na, nb) = cpu_sets, nodes
    ya, yb = ctx.node_var(a, na), ctx.node_var(b, nb)
    if ya is None or yb is None or na == nb:
        return
    m = ctx.model
    z = m.new_bool_var(f"link[cs{a}@n{na}<->cs{b}@n{nb}]")
    m.add(z >= ya + yb - 1)
    m.add(z <= ya)
    m.add(z <= yb)
    key = (min(na, nb), max(na, nb))
    if kbit and key in free.links_free_kbps:
        load.setdefault(key, []).append(kbit * z)
    distance = free.distances.get((na, nb), 10)
    if distance > 10:
        ctx.cost("distance", DISTANCE * (distance - 10) * z)


INTERCONNECT = InterconnectKind()

__all__ = ["DISTANCE", "INTERCONNECT", "Interconnect", "InterconnectKind"]
