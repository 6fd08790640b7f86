"""Pinned CPUs: cores, SMT threads and thread policies of the cpu-sets, and the emulator PU.

The emulator/housekeeping PU (`emulator_threads: isolate`) belongs to this kind: it draws from the
same pools of free threads as the cpu-sets, in the same model and the same assignment.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from ortools.sat.python import cp_model

from ....models.chd import ComputeHostDescriptor, CpuState, NumaNode
from ....models.configuration import VmConfiguration
from ...reasons import Reason
from ...request import CpuSetDemand, Part, Request
from ...result import ExplainRow
from ..base import HostFree, IndexedFleet, IntArray, Vocabulary
from ..direct import Assignment, DirectPart, NoAnswer
from ..draft import ConfigurationDraft, DescriptorDraft, HostDraft
from ..filtering import FilterInput, HostCheck, NodeNeed
from ..holding import PU, HeldUnit
from ..kind import Decisions, Kind, RelaxModel
from ..kubelet import KubeletPool
from ..model import Layout, ModelContext
from ..scoring import KEEP_SMT, Fullness, Kept, NodeFullness
from ..shared_pool import charges
from . import estimates
from .assign import assign_cpus
from .direct import cpu_direct
from .model import COUNTS, post_capacity, post_cpu_set, post_emulator
from .pools import CpuFree, CpuNode, cpu_claimed, cpu_free, free_charged, newly_busy
from .table import CpuTable


class CpuKind(Kind):
    name = "cpu"
    reasons = (Reason.smt, Reason.core_pairs, Reason.cores, Reason.threads)
    family = "free cores of the nodes shared by the cpu-sets and the emulator PU"
    costs = {
        "stranded": "threads left stranded: an idle sibling kept for an isolated vCPU or a pair, "
        "or a core left half used (100 each)"
    }

    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> CpuTable:
        return CpuTable.empty(hosts, nodes)

    def fill(
        self,
        table: CpuTable,
        i: int,
        host: ComputeHostDescriptor,
        free: HostFree,
        vocab: Vocabulary,
    ) -> None:
        table.fill(i, free.of(self))

    def fill_changed(
        self, table: CpuTable, i: int, free: HostFree, before: HostFree, vocab: Vocabulary
    ) -> None:
        table.fill_changed(i, free.of(self), before.of(self))

    def free(self, host: ComputeHostDescriptor) -> CpuFree:
        return cpu_free(host)

    def free_again(
        self, host: ComputeHostDescriptor, before: ComputeHostDescriptor, free_before: CpuFree
    ) -> CpuFree:
        return cpu_free(host, (before, free_before))

    def free_claimed(
        self,
        before: ComputeHostDescriptor,
        free_before: CpuFree,
        config: VmConfiguration,
        after: ComputeHostDescriptor | None,
    ) -> CpuFree | None:
        held = set(config.held_cpus)
        if config.floating_cpus:  # a shared PU charged leaves the free classes if it was free
            charged = (
                free_charged(before, free_before, charges(config))
                if after is None
                else newly_busy(before, after, config.floating_cpus)
            )
            if charged is None:
                return None
            held |= charged
        return cpu_claimed(before, free_before, held) if held else free_before

    def host_checks(self, inp: FilterInput) -> list[HostCheck]:
        if not any(cs.requires_smt for cs in inp.request.cpu_sets):
            return []
        return [
            HostCheck(
                Reason.smt,
                "have no SMT (howtogroup pairs need the two threads of one core)",
                ~inp.fleet.table(self).smt,
                lambda i: (
                    "the host has one thread per core; howtogroup pairs need two",
                    None,
                    None,
                ),
            )
        ]

    def node_needs(self, inp: FilterInput, part: Part) -> list[NodeNeed]:
        if not isinstance(part, CpuSetDemand):
            return []
        emulator = int(inp.request.emulator and part is inp.request.cpu_sets[0])
        return _needs(inp.fleet.table(self), part, emulator)

    def in_model(self, request: Request) -> bool:
        return bool(request.cpu_sets)

    def post_demand(self, ctx: ModelContext) -> None:
        cpu = ctx.free.of(self)
        for cs in ctx.request.cpu_sets:
            post_cpu_set(ctx, cpu, cs)
        if ctx.request.emulator and ctx.request.cpu_sets:
            post_emulator(ctx, cpu)

    def post_limits(self, ctx: ModelContext) -> None:
        post_capacity(ctx, ctx.free.of(self))

    def direct(self, a: Assignment) -> DirectPart | NoAnswer:
        return cpu_direct(a, a.free.of(self))

    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None:
        nodes = layout.nodes if layout else {}
        counts = layout.of(COUNTS) if layout else {}
        assign_cpus(draft, free.of(self), free.node_ids, request, nodes, counts)
        first = request.cpu_sets[0] if request.cpu_sets else None
        draft.fields["thread_policy"] = (
            None
            if first is None
            else first.policy
            if first.synthetic
            else request.vm.cpu_thread_policy
        )

    def explain(
        self, free: HostFree, request: Request, layout: Layout | None, decisions: Decisions
    ) -> list[ExplainRow]:
        if layout is None:
            return []
        rows = []
        for cs in request.cpu_sets:
            if cs.floating:
                continue
            node = free.of(self).nodes[free.slot(layout.nodes[cs.id])]
            rows.append(
                ExplainRow(
                    f"cpu-set {cs.id}",
                    f"NUMA node {layout.nodes[cs.id]}",
                    f"{len(cs.pairs)} pairs and {len(cs.singles)} unpaired vCPUs ({cs.policy}); "
                    f"the node had {len(node.whole_cores)} free cores with no thread used and "
                    f"{len(node.half_busy)} free threads next to a used or host-reserved "
                    "one",
                )
            )
        return rows

    def count_state(
        self, fleet: IndexedFleet, i: int, slot: int, request: Request
    ) -> estimates.CpuCount | None:
        if not request.cpu_sets:
            return None
        return estimates.count_state(fleet.table(self), i, slot)

    def count_take(
        self, state: estimates.CpuCount, request: Request, spread: bool
    ) -> Reason | None:
        return estimates.take(state, request.cpu_sets[0], request.emulator)

    def describe(self, draft: DescriptorDraft, config: VmConfiguration) -> None:
        """Pinned vCPUs, SMT pairs and thread policies; an isolated emulator PU if it had one."""
        if config.thread_policy is not None:
            draft.fields["cpu_thread_policy"] = config.thread_policy.value
        if config.emulator_pins:
            draft.fields["emulator_threads"] = "isolate"
        for cs in config.cpu_sets:
            entry = draft.cpu_sets[cs.id]
            if cs.floating is None:  # a floating cpu-set's vCPUs are the shared kind's
                entry["vcpus"] = sorted(cs.vcpu_pins)
            entry["howtogroup"] = [list(p) for p in cs.howtogroup]
            if cs.thread_policy is not None:
                entry["thread_policy"] = cs.thread_policy.value
            elif config.thread_policy is None:
                entry["thread_policy"] = "isolate" if cs.reserved_siblings else "prefer"

    def relax_add(
        self,
        model: RelaxModel,
        host: int,
        slot: int,
        x: cp_model.IntVar,
        request: Request,
        part: Part | None,
    ) -> None:
        if part is None:
            return
        for name, per in estimates.relax_uses(request, part):
            if per:
                model.use(self.name, host, slot, name, per * x)

    def relax_finish(self, model: RelaxModel) -> None:
        estimates.relax_cpus(model, model.fleet.table(self))

    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None:
        for pu in config.held_cpus:
            cpu = draft.cpu(pu)
            if cpu is None:
                draft.fail(f"PU {pu} does not exist on {draft.host.id}", "cpu_sets")
            elif sign < 0:
                if cpu.get("owner") == config.owner:
                    cpu.update(state="free", owner=None)
            elif not cpu.get("eligible", True) or cpu.get("state", "free") != "free":
                draft.fail(
                    f"PU {pu} is not free ({cpu.get('state')}, owner {cpu.get('owner')})",
                    "cpu_sets",
                )
            else:
                cpu.update(state="dedicated", owner=config.owner)

    def fullness(self, table: CpuTable) -> Fullness:
        return Fullness(
            "free threads", "eligible threads", table.free_threads, table.total_threads, leads=True
        )

    def room(self, table: CpuTable) -> IntArray:
        return table.whole * 2 + table.single + table.half_busy

    def kept(self, table: CpuTable, request: Request) -> Kept | None:
        if any(cs.pairs for cs in request.cpu_sets):
            return None
        return Kept(
            "SMT kept",
            KEEP_SMT,
            table.smt,
            "{weight} if the host has SMT: kept for VMs with howtogroup pairs",
        )

    def node_fullness(self, free: CpuFree, slot: int) -> NodeFullness:
        node = free.nodes[slot]
        return NodeFullness(node.free_threads, node.eligible_threads, leads=True)

    def held_units(self, config: VmConfiguration) -> Iterable[HeldUnit]:
        """Its PUs: pinned vCPUs, emulator PUs and reserved siblings."""
        return (HeldUnit(PU, str(pu)) for pu in config.held_cpus)

    def owners(self, host: ComputeHostDescriptor) -> Iterable[str]:
        return (c.owner for node in host.numa_nodes for c in node.cpus if c.owner)

    def kubelet_pools(self, host: ComputeHostDescriptor, node: NumaNode) -> Iterable[KubeletPool]:
        """The CPU manager's: the node's eligible PUs, the free ones exclusive."""
        eligible = [c for c in node.cpus if c.eligible]
        free = sum(c.state is CpuState.free for c in eligible)
        return (KubeletPool("cpu", "cpu", len(eligible), free, total=len(node.cpus)),)


def _packed_needs(t: CpuTable, cs: CpuSetDemand, emulator: int) -> list[NodeNeed]:
    """A `require` cpu-set: its vCPUs on the threads of whole cores (pairs two to a core of four
    threads): as many free threads of whole cores as vCPUs, and the emulator PU a thread."""
    need = 2 * len(cs.pairs) + len(cs.singles)
    threads = t.whole_threads
    out = [
        NodeNeed(
            Reason.core_pairs,
            f"{need} free threads of whole cores for sibling vCPUs",
            threads >= need,
            threads,
            need,
            "free threads of whole cores",
        )
    ]
    if emulator:
        spare = t.whole_threads - need + t.half_busy + t.single
        out.append(
            NodeNeed(
                Reason.threads,
                "a free thread for the emulator PU",
                spare >= 1,
                spare,
                1,
                "free threads besides the vCPUs",
            )
        )
    return out


def _needs(t: CpuTable, cs: CpuSetDemand, emulator: int) -> list[NodeNeed]:
    if cs.packed:
        return _packed_needs(t, cs, emulator)
    pairs = len(cs.pairs)
    singles = len(cs.singles)
    out = []
    if pairs:
        out.append(
            NodeNeed(
                Reason.core_pairs,
                f"{pairs} free core pairs",
                t.whole >= pairs,
                t.whole,
                pairs,
                "free core pairs",
            )
        )
    # each column below is computed only when a need reads it (the filter's cost is these
    # passes over every host and node: a cpu-set of pairs alone needs none of them)
    if singles and cs.policy.value == "isolate":
        isolated = _left(t.whole, pairs, t.single)  # one new array
        out.append(
            NodeNeed(
                Reason.cores,
                f"{singles} free cores for unpaired vCPUs",
                isolated >= singles,
                isolated,
                singles,
                "free cores besides the pairs",
            )
        )
    if singles + emulator:
        need = singles + emulator
        # an upper bound (pairs take at least two threads of their core): necessary, exact on SMT2
        threads = _left(t.whole_threads, 2 * pairs, t.half_busy)  # one new array, then in place
        threads += t.single
        label = "free threads" if not emulator else "free threads (vCPUs and emulator)"
        out.append(
            NodeNeed(
                Reason.threads,
                f"{need} {label}",
                threads >= need,
                threads,
                need,
                "free threads besides the pairs",
            )
        )
    return out


def _left(column: IntArray, taken: int, plus: IntArray) -> IntArray:
    """A new array: what is left of the count `column` once the pairs take `taken` (at least 0),
    plus the count `plus`: one pass when nothing is taken (a count is never below 0, so there is
    nothing to clip)."""
    if not taken:
        return column + plus
    out = column - taken
    np.maximum(out, 0, out=out)
    out += plus
    return out


CPU = CpuKind()

__all__ = ["CPU", "CpuFree", "CpuNode", "CpuTable"]
