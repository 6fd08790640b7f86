"""L3 cache ways (Intel RDT Cache Allocation Technology): exclusive ways for a cpu-set's vCPUs.

vRAN and packet-core deployments reserve last-level cache ways for their pinned cores, so that
noisy neighbours cannot evict their working set (FlexRAN lists RDT CAT among its platform needs).
A host states its L3 caches (`cache_allocation.domains`: the NUMA nodes whose PUs share each cache,
its ways, and the ways already given out) and its classes of service; a cpu-set asks for
`cache_ways`.

- a cpu-set asking ways needs, in the cache of its node, that many free *contiguous* ways (a
  capacity bitmask is contiguous), at least the host's `min_ways`;
- cpu-sets of one VM whose nodes share a cache stack their ways in its largest free run;
- a VM asking ways takes one class of service (CLOSID) of the host: a resctrl group named after the
  instance, holding the pinned PUs of its cpu-sets;
- the ways are taken from the top of the cache's largest free run (the default class keeps the low
  ways), and given back when the VM is released.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ..reasons import Reason
from ..request import CpuSetDemand, Part, Request
from ..result import ExplainRow
from .base import HostFree, IndexedFleet, IntArray, Table, Vocabulary
from .cache_free import CacheFree, CachesFree, caches_free
from .direct import NOTHING, Assignment, DirectPart, NoAnswer
from .draft import ConfigurationDraft, DescriptorDraft, HostDraft
from .filtering import FilterInput, HostCheck, NodeNeed
from .holding import CACHE_WAY, HeldUnit
from .kind import Decisions, Kind, RelaxModel
from .model import Layout, ModelContext


@dataclass(frozen=True, slots=True)
class CacheTable(Table):
    largest: IntArray  # hosts x slots: largest free run of ways in the node's cache
    free_ways: IntArray  # hosts x slots: free ways of the node's cache
    cache_id: IntArray  # hosts x slots: id of the node's cache (-1: none)
    classes_free: IntArray  # per host (-1: no cache allocation stated)
    min_ways: IntArray  # per host


def asked(request: Request, cs: CpuSetDemand) -> int:
    """The ways a cpu-set asks (0: none)."""
    described = request.cpu_set_of(cs.id)
    return (described.cache_ways or 0) if described is not None else 0


def _asking(request: Request) -> list[tuple[CpuSetDemand, int]]:
    return [(cs, n) for cs in request.cpu_sets if (n := asked(request, cs))]


class CacheWaysKind(Kind):
    name = "cache_ways"
    reasons = (Reason.cache_allocation, Reason.cache_classes, Reason.cache_ways)
    family = "L3 cache ways of the caches the cpu-sets share"

    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> CacheTable:
        grid = np.zeros((hosts, nodes), dtype=np.int64)
        return CacheTable(
            grid,
            grid.copy(),
            np.full((hosts, nodes), -1, dtype=np.int64),
            np.full(hosts, -1, dtype=np.int64),
            np.ones(hosts, dtype=np.int64),
        )

    def fill(
        self, t: CacheTable, i: int, host: ComputeHostDescriptor, free: HostFree, vocab: Vocabulary
    ) -> None:
        caches = free.of(self)
        t.classes_free[i] = caches.classes_free
        t.min_ways[i] = caches.min_ways
        for j, node_id in enumerate(free.node_ids):
            cache = caches.of_node(node_id)
            t.largest[i, j] = cache.largest[1] if cache else 0
            t.free_ways[i, j] = cache.free_ways if cache else 0
            t.cache_id[i, j] = cache.id if cache else -1

    def free(self, host: ComputeHostDescriptor) -> CachesFree:
        return caches_free(host.cache_allocation)

    def free_claimed(
        self,
        before: ComputeHostDescriptor,
        free_before: CachesFree,
        config: VmConfiguration,
        after: ComputeHostDescriptor | None,
    ) -> CachesFree | None:
        return None if any(cs.cache_ways for cs in config.cpu_sets) else free_before

    def free_again(
        self, host: ComputeHostDescriptor, before: ComputeHostDescriptor, free_before: CachesFree
    ) -> CachesFree:
        if host.cache_allocation is before.cache_allocation:
            return free_before
        return self.free(host)

    def host_checks(self, inp: FilterInput) -> list[HostCheck]:
        if not _asking(inp.request):
            return []
        t = inp.fleet.table(self)
        return [
            HostCheck(
                Reason.cache_allocation,
                "state no L3 cache allocation (Intel RDT CAT)",
                t.classes_free < 0,
                lambda i: (
                    "the host states no cache_allocation; the VM asks cache ways",
                    None,
                    None,
                ),
            ),
            HostCheck(
                Reason.cache_classes,
                "have no cache class of service left (or state none)",
                t.classes_free == 0,
                lambda i: (_classes_message(inp.fleet.free(i).of(self)), 1.0, 0.0),
            ),
        ]

    def node_needs(self, inp: FilterInput, part: Part) -> list[NodeNeed]:
        if not isinstance(part, CpuSetDemand) or not (ways := asked(inp.request, part)):
            return []
        t = inp.fleet.table(self)
        need = np.maximum(ways, t.min_ways)[:, None]
        return [
            NodeNeed(
                Reason.cache_ways,
                f"{ways} free contiguous L3 cache ways",
                t.largest >= need,
                t.largest,
                ways,
                "free contiguous ways in its L3 cache",
            )
        ]

    def post_limits(self, ctx: ModelContext) -> None:
        caches = ctx.free.of(self)
        for cache in caches.caches:
            terms = [
                max(ways, caches.min_ways) * y
                for cs, ways in _asking(ctx.request)
                for node in cache.node_ids
                if (y := ctx.node_var(cs.id, node)) is not None
            ]
            if terms:
                ctx.model.add(sum(terms) <= cache.largest[1])

    def direct(self, a: Assignment) -> DirectPart | NoAnswer:
        """`post_limits` with the nodes fixed: the ways asked by each cache's cpu-sets."""
        caches = a.free.of(self)
        asking = _asking(a.request)
        for cache in caches.caches:
            taken = sum(
                max(ways, caches.min_ways)
                for cs, ways in asking
                if a.nodes[cs.id] in cache.node_ids
            )
            if taken > cache.largest[1]:
                return NoAnswer.infeasible
        return NOTHING

    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None:
        caches = free.of(self)
        top: dict[int, int] = {}  # cache id -> the next free way from the top of its largest run
        for cs, ways in _asking(request):
            cache = caches.of_node(draft.cpu_sets[cs.id]["numa_node"])
            assert cache is not None  # the filter and the model put the cpu-set by a cache
            first, length = cache.largest
            n = max(ways, caches.min_ways)
            end = top.get(cache.id, first + length)
            top[cache.id] = end - n
            draft.cpu_sets[cs.id]["cache_ways"] = {
                "domain": cache.id,
                "first_way": end - n,
                "ways": n,
                "way_kib": cache.way_kib,
            }

    def explain(
        self, free: HostFree, request: Request, layout: Layout | None, decisions: Decisions
    ) -> list[ExplainRow]:
        if layout is None:
            return []
        caches = free.of(self)
        rows = []
        for cs, ways in _asking(request):
            cache = caches.of_node(layout.nodes[cs.id])
            if cache is not None:
                rows.append(
                    ExplainRow(
                        f"cache ways of cpu-set {cs.id}",
                        f"{max(ways, caches.min_ways)} of L3 cache {cache.id}",
                        f"its largest free run had {cache.largest[1]} ways (from way "
                        f"{cache.largest[0]}); the VM's class of service holds them alone",
                    )
                )
        return rows

    def counts(self, request: Request) -> bool:
        return not _asking(request)

    def relax_add(
        self,
        model: RelaxModel,
        host: int,
        slot: int,
        x: cp_model.IntVar,
        request: Request,
        part: Part | None,
    ) -> None:
        if not isinstance(part, CpuSetDemand) or not (ways := asked(request, part)):
            return
        t = model.fleet.table(self)
        need = max(ways, int(t.min_ways[host]))
        model.use(self.name, host, -1, f"ways{int(t.cache_id[host, slot])}", need * x)

    def relax_host(
        self, model: RelaxModel, host: int, z: cp_model.IntVar, request: Request
    ) -> None:
        if _asking(request):
            model.use(self.name, host, -1, "classes", z)

    def relax_capacity(self, fleet: IndexedFleet, host: int, slot: int, name: str) -> int | None:
        t = fleet.table(self)
        if name == "classes":
            return max(int(t.classes_free[host]), 0)
        cache = int(name[4:])
        return max(
            (
                int(w)
                for w, c in zip(t.free_ways[host], t.cache_id[host], strict=True)
                if c == cache
            ),
            default=0,
        )

    def describe(self, draft: DescriptorDraft, config: VmConfiguration) -> None:
        for cs in config.cpu_sets:
            if cs.cache_ways is not None and cs.cache_ways.ways:
                draft.cpu_sets[cs.id]["cache_ways"] = cs.cache_ways.ways

    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None:
        wanted = [(k, cs.cache_ways) for k, cs in enumerate(config.cpu_sets) if cs.cache_ways]
        if not wanted:
            return
        section = draft.section("cache_allocation")
        if section is None:
            if sign > 0:
                draft.fail(f"host {draft.host.id} states no cache_allocation", "cpu_sets")
            return
        domains = _domains(section)
        if (
            sign > 0
            and config.owner not in _owners(domains)
            and _classes_left(section, domains) < 1
        ):
            draft.fail(f"every class of service of {draft.host.id}'s L3 cache is taken", "cpu_sets")
        for k, ways in wanted:
            assert ways is not None
            path = f"cpu_sets[{k}].cache_ways"
            domain = next((d for d in domains if d["id"] == ways.domain), None)
            if domain is None:
                draft.fail(f"L3 cache {ways.domain} does not exist on {draft.host.id}", path)
            elif sign > 0:
                _take(draft, domain, ways.first_way, ways.ways, config.owner, path)
            else:
                domain["allocations"] = [
                    a
                    for a in domain["allocations"]
                    if not (a["owner"] == config.owner and a["first_way"] == ways.first_way)
                ]

    def held_units(self, config: VmConfiguration) -> Iterable[HeldUnit]:
        """Its L3 cache ways, as "<cache id>/<way>"."""
        for cs in config.cpu_sets:
            if cs.cache_ways is not None:
                first, domain = cs.cache_ways.first_way, cs.cache_ways.domain
                for way in range(first, first + cs.cache_ways.ways):
                    yield HeldUnit(CACHE_WAY, f"{domain}/{way}")

    def owners(self, host: ComputeHostDescriptor) -> Iterable[str]:
        allocation = host.cache_allocation
        if allocation is None:
            return ()
        return (a.owner for d in allocation.domains for a in d.allocations if a.owner)


def _classes_message(caches: CachesFree) -> str:
    if not caches.classes_known:
        return (
            "the host does not state its classes of service (cache_allocation.classes: "
            "resctrl's num_closids)"
        )
    return "every class of service (CLOSID) of the host's L3 cache is taken"


def _domains(section: dict[str, Any]) -> list[dict[str, Any]]:
    """The section's domains as mutable dicts (their allocations as dicts too)."""
    domains = [
        d if isinstance(d, dict) else d.model_dump(mode="python") for d in section["domains"]
    ]
    section["domains"] = domains
    return domains


def _owners(domains: list[dict[str, Any]]) -> set[str]:
    return {a["owner"] for d in domains for a in d["allocations"] if a["owner"]}


def _classes_left(section: Mapping[str, Any], domains: list[dict[str, Any]]) -> int:
    if section["classes"] is None:
        return 0
    return int(section["classes"]) - 1 - int(section["classes_used"]) - len(_owners(domains))


def _take(
    draft: HostDraft, domain: dict[str, Any], first: int, ways: int, owner: str, path: str
) -> None:
    if first + ways > domain["ways"]:
        draft.fail(
            f"ways {first}-{first + ways - 1} are beyond L3 cache {domain['id']}'s {domain['ways']}",
            path,
        )
        return
    for a in domain["allocations"]:
        if a["first_way"] < first + ways and first < a["first_way"] + a["ways"]:
            draft.fail(
                f"ways {first}-{first + ways - 1} of L3 cache {domain['id']} are taken "
                f"(by {a['owner'] or 'the operator'})",
                path,
            )
            return
    domain["allocations"] = [
        *domain["allocations"],
        {"first_way": first, "ways": ways, "owner": owner},
    ]


CACHE_WAYS = CacheWaysKind()

__all__ = ["CACHE_WAYS", "CacheFree", "CacheWaysKind", "CachesFree", "caches_free"]
