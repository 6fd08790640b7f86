"""Floating vCPUs: oversubscribed plain VMs, and floating cpu-sets, over shared PUs of one node.

A node's shared pool is its eligible PUs in state `shared` plus free PUs that carry an
`oversubscription_ratio` (PUs the operator designated for sharing). A PU with ratio r and usage u has
room for (1 - u) * r more vCPUs. V floating vCPUs are spread evenly over the largest set of pool PUs
on which V / |set| fits every PU's room (so shared load stays spread), and never over fewer than V
PUs: a VM does not overcommit against itself (two of its vCPUs time-sharing one PU), which Nova
refuses too. Their memory comes from the node (the memory kind).

A plain VM has nothing to optimise beyond the choice of node, so this kind decides it before the
exact model (`decide`). A floating cpu-set's node is chosen by the exact model with its memory,
hugepages and interfaces: the kind keeps it off nodes whose pool cannot take it, and off a node
another floating cpu-set of the VM took (each spreads over a pool of its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from operator import itemgetter

import numpy as np
from ortools.sat.python import cp_model

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ..options import Options, Policy
from ..reasons import Reason
from ..request import Part, Request
from ..result import ExplainRow
from .base import (
    FloatArray,
    HostFree,
    IndexedFleet,
    IntArray,
    Table,
    Vocabulary,
    node_parts,
    same_objects,
)
from .draft import AssignmentError, ConfigurationDraft, DescriptorDraft, HostDraft
from .filtering import FilterInput, NodeNeed
from .kind import Decisions, Kind, Refusal, RelaxModel
from .model import Layout, ModelContext
from .shared_charge import charge_pus
from .shared_pool import (
    Pool,
    SharedPu,
    charge,
    choose_pus,
    pools_charged,
    shared_pus,
    shared_pus_again,
    spare,
)

_ROOM, _NODE = itemgetter(0), itemgetter(1)


@dataclass(frozen=True, slots=True)
class SharedChoice:
    node: int
    pus: Pool
    room: Fraction  # the node's spare vCPUs before the VM


@dataclass(frozen=True, slots=True)
class SharedTable(Table):
    spare: FloatArray  # hosts x node slots: spare vCPUs of the shared pool
    pus: IntArray  # hosts x node slots: PUs of the shared pool with room


class SharedKind(Kind):
    name = "shared"
    reasons = (Reason.shared_pus, Reason.shared_cpu)
    family = "shared PUs of the nodes of the floating cpu-sets"

    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> SharedTable:
        return SharedTable(
            np.zeros((hosts, nodes), dtype=np.float64), np.zeros((hosts, nodes), dtype=np.int64)
        )

    def fill(
        self,
        table: SharedTable,
        i: int,
        host: ComputeHostDescriptor,
        free: HostFree,
        vocab: Vocabulary,
    ) -> None:
        table.spare[i] = 0.0
        table.pus[i] = 0
        for j, pool in enumerate(free.of(self)):
            table.spare[i, j] = float(spare(pool))
            table.pus[i, j] = sum(1 for p in pool if p.has_room)

    def free(self, host: ComputeHostDescriptor) -> tuple[Pool, ...]:
        return tuple(shared_pus(node) for node in host.numa_nodes)

    def free_again(
        self,
        host: ComputeHostDescriptor,
        before: ComputeHostDescriptor,
        free_before: tuple[Pool, ...],
    ) -> tuple[Pool, ...]:
        return node_parts(
            host,
            before,
            free_before,
            lambda node, old, _pool: same_objects(node.cpus, old.cpus),
            lambda slot, node: shared_pus_again(node, before.numa_nodes[slot], free_before[slot]),
        )

    def free_claimed(
        self,
        before: ComputeHostDescriptor,
        free_before: tuple[Pool, ...],
        config: VmConfiguration,
        after: ComputeHostDescriptor | None,
    ) -> tuple[Pool, ...] | None:
        """The pools as they were unless the claim pins a PU of them (a free PU given a ratio is
        in its node's pool until a VM pins it), the PUs it charges with their usage raised."""
        held = set(config.held_cpus)
        if any(p.pu in held for pool in free_before for p in pool):
            return None
        return pools_charged(free_before, config) if config.floating_cpus else free_before

    def node_needs(self, inp: FilterInput, part: Part) -> list[NodeNeed]:
        vcpus = part.floating_vcpus
        if not vcpus:
            return []
        table = inp.fleet.table(self)
        return [
            NodeNeed(
                Reason.shared_pus,
                f"{vcpus} shared PUs with room (one for each floating vCPU at least)",
                table.pus >= vcpus,
                table.pus,
                vcpus,
                "shared PUs with room",
            ),
            NodeNeed(
                Reason.shared_cpu,
                f"room for {vcpus} vCPUs on shared PUs",
                table.spare >= vcpus - 1e-9,
                table.spare,
                vcpus,
                "vCPUs of spare shared capacity",
            ),
        ]

    def decide(
        self,
        free: HostFree,
        request: Request,
        allowed: Mapping[int, frozenset[int]],
        options: Options,
    ) -> SharedChoice | Refusal | None:
        if request.shared is None:
            return None
        pools = free.of(self)
        ok = allowed.get(request.shared.id, frozenset())
        nodes = [(spare(pools[j]), n, pools[j]) for j, n in enumerate(free.node_ids) if n in ok]
        # by room (most first under spread), then by node: sorted by node, then stably by room
        nodes.sort(key=_NODE)
        nodes.sort(key=_ROOM, reverse=options.policy is Policy.spread)
        for room, node, pool in nodes:
            pus = choose_pus(pool, request.shared.vcpus)
            if pus is not None:
                return SharedChoice(node, pus, room)
        return Refusal(
            Reason.shared_cpu,
            "have no shared PUs on one node with room for the vCPUs spread evenly",
            "the shared pool has enough room in total, but no set of its PUs can take the "
            "vCPUs spread evenly within each PU's ratio",
        )

    def in_model(self, request: Request) -> bool:
        return any(cs.floating for cs in request.cpu_sets)

    def post_limits(self, ctx: ModelContext) -> None:
        """A floating cpu-set only on a node whose pool takes it, one such cpu-set per node."""
        pools = ctx.free.of(self)
        for slot, node in enumerate(ctx.free.node_ids):
            here = []
            for cs in ctx.request.cpu_sets:
                y = ctx.node_var(cs.id, node)
                if not cs.floating or y is None:
                    continue
                if choose_pus(pools[slot], len(cs.vcpus)) is None:
                    ctx.model.add(y == 0)
                else:
                    here.append(y)
            if len(here) > 1:
                ctx.model.add(sum(here) <= 1)

    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None:
        if layout is not None:
            _assign_floating(draft, free.of(self), free, request, layout)
        choice = decisions.of(self)
        if choice is None or request.shared is None:
            return
        draft.fields["shared"] = {
            "vcpus": request.shared.vcpus,
            "cpus": tuple(p.pu for p in choice.pus),
            "numa_node": choice.node,
            "memory_mib": request.shared.memory_mib,
            "oversubscribed": request.shared.vcpus > len(choice.pus),
        }

    def explain(
        self, free: HostFree, request: Request, layout: Layout | None, decisions: Decisions
    ) -> list[ExplainRow]:
        choice = decisions.of(self)
        if choice is None or request.shared is None:
            return _explain_floating(free.of(self), free, request, layout)
        return [
            ExplainRow(
                "shared CPUs",
                f"{request.shared.vcpus} vCPUs over {len(choice.pus)} PUs of NUMA node "
                f"{choice.node}",
                f"the node had room for {float(choice.room):g} more vCPUs: "
                "(1 - usage) x ratio summed over its shared PUs",
            )
        ]

    def counts(self, request: Request) -> bool:
        return not self.in_model(request)  # floating cpu-sets: capacity places them one by one

    def count_state(
        self, fleet: IndexedFleet, i: int, slot: int, request: Request
    ) -> list[Sequence[SharedPu]] | None:
        """The node's shared pool, in a box that each instance taken replaces."""
        if request.shared is None:
            return None
        return [list(shared_pus(fleet.hosts[i].numa_nodes[slot]))]

    def count_take(
        self, state: list[Sequence[SharedPu]], request: Request, spread: bool
    ) -> Reason | None:
        assert request.shared is not None
        chosen = choose_pus(state[0], request.shared.vcpus)
        if chosen is None:
            return Reason.shared_cpu
        state[0] = charge(state[0], chosen, request.shared.vcpus)
        return None

    def relax_slot_ok(
        self, fleet: IndexedFleet, i: int, slot: int, request: Request, part: Part
    ) -> bool:
        """A node's pool takes one instance spread evenly (the filter only compares its total
        room): some m of its PUs each with room for vCPUs / m."""
        vcpus = part.floating_vcpus
        if not vcpus:
            return True
        return choose_pus(shared_pus(fleet.hosts[i].numa_nodes[slot]), vcpus) is not None

    def relax_add(
        self,
        model: RelaxModel,
        host: int,
        slot: int,
        x: cp_model.IntVar,
        request: Request,
        part: Part | None,
    ) -> None:
        if part is not None and part.floating_vcpus:
            model.use(self.name, host, slot, "shared", part.floating_vcpus * x)

    def relax_capacity(self, fleet: IndexedFleet, host: int, slot: int, name: str) -> int | None:
        room = np.floor(fleet.table(self).spare[host, slot]).astype(np.int64)
        return int(room) if fleet.node_id[host, slot] >= 0 else 0

    def describe(self, draft: DescriptorDraft, config: VmConfiguration) -> None:
        for cs in config.cpu_sets:
            if cs.floating is not None:
                draft.cpu_sets[cs.id].update(floating=True, vcpus=sorted(cs.floating.vcpus))
        if not config.cpu_sets and (s := config.shared) is not None:
            draft.fields.update(vcpus=s.vcpus, memory_mib=s.memory_mib, cpu_oversubscription=True)

    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None:
        if config.shared is not None and config.shared.cpus:
            charge_pus(draft, config.shared.vcpus, config.shared.cpus, sign, "shared.cpus")
        for cs in config.cpu_sets:
            if cs.floating is not None and cs.floating.cpus:
                where = f"cpu_sets[{cs.id}].floating.cpus"
                charge_pus(draft, len(cs.floating.vcpus), cs.floating.cpus, sign, where)


def _assign_floating(
    draft: ConfigurationDraft,
    pools: tuple[Pool, ...],
    free: HostFree,
    request: Request,
    layout: Layout,
) -> None:
    for cs in request.cpu_sets:
        if not cs.floating:
            continue
        pus = choose_pus(pools[free.slot(layout.nodes[cs.id])], len(cs.vcpus))
        if pus is None:
            raise AssignmentError(f"cpu-set {cs.id}: no shared PUs on its node take its vCPUs")
        floating = {"vcpus": cs.vcpus, "cpus": tuple(p.pu for p in pus)}
        draft.cpu_sets[cs.id].update(vcpu_pins={}, floating=floating)


def _explain_floating(
    pools: tuple[Pool, ...], free: HostFree, request: Request, layout: Layout | None
) -> list[ExplainRow]:
    rows = []
    for cs in request.cpu_sets:
        if not cs.floating or layout is None:
            continue
        node = layout.nodes[cs.id]
        pool = pools[free.slot(node)]
        pus = choose_pus(pool, len(cs.vcpus)) or ()
        rows.append(
            ExplainRow(
                f"cpu-set {cs.id}",
                f"{len(cs.vcpus)} floating vCPUs over {len(pus)} shared PUs of NUMA node {node}",
                f"the node's shared pool had {len(pool)} PUs with room for "
                f"{float(spare(pool)):g} more vCPUs",
            )
        )
    return rows


SHARED_CPUS = SharedKind()

__all__ = [
    "SHARED_CPUS",
    "SharedChoice",
    "SharedKind",
    "SharedPu",
    "charge",
    "choose_pus",
    "shared_pus",
]
