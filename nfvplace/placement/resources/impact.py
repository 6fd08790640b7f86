"""Impact limits of clause 8.2.2.5, and the instances a host runs: at most `max_instances_per_host`
instances of the descriptor on one host, and the VM's pessimistic memory-bandwidth use within what the
host's nodes have left after the instances already running (hosts that state no node bandwidth are
not limited). A placed VM is recorded as an instance of its descriptor on the host."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from ...exact import KBPS_PER_GBPS, kbps
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.units import stored_gbps
from ..reasons import Reason
from ..request import Request
from .base import (
    UNLIMITED_KBPS,
    HostFree,
    IndexedFleet,
    IntArray,
    Table,
    Vocabulary,
    same_objects,
)
from .draft import ConfigurationDraft, HostDraft
from .filtering import FilterInput, HostCheck, detail
from .kind import Decisions, Kind, RelaxModel
from .model import Layout


@dataclass(frozen=True, slots=True)
class ImpactTable(Table):
    membw: IntArray  # per host: memory bandwidth of its nodes, kbit/s (UNLIMITED_KBPS: unknown)
    membw_used: IntArray  # ... that its running instances may use
    instances: dict[str, dict[int, int]]  # VM name -> host -> instances running
    vm_names: dict[int, set[str]]  # host -> the VM names running there

    def count_in(self, vm_name: str, i: int) -> None:
        """One more instance of `vm_name` running on host i."""
        per = self.instances.setdefault(vm_name, {})
        per[i] = per.get(i, 0) + 1
        self.vm_names.setdefault(i, set()).add(vm_name)

    def count_out(self, vm_name: str, i: int) -> None:
        """Host i runs no instance of `vm_name` any more (a name no host runs is forgotten: a
        long-running worker sees many names come and go)."""
        per = self.instances[vm_name]
        per.pop(i, None)
        if not per:
            del self.instances[vm_name]

    def count(self, vm_name: str, hosts: int) -> IntArray:
        counts = np.zeros(hosts, dtype=np.int64)
        for i, k in self.instances.get(vm_name, {}).items():
            counts[i] = k
        return counts


class ImpactKind(Kind):
    name = "impact"
    reasons = (Reason.max_instances, Reason.memory_bandwidth_budget)

    def new_table(self, hosts: int, nodes: int, vocab: Vocabulary) -> ImpactTable:
        return ImpactTable(
            np.full(hosts, UNLIMITED_KBPS, dtype=np.int64), np.zeros(hosts, dtype=np.int64), {}, {}
        )

    def fill(
        self, t: ImpactTable, i: int, host: ComputeHostDescriptor, free: HostFree, vocab: Vocabulary
    ) -> None:
        bws = [n.memory.bandwidth_gbps for n in host.numa_nodes]
        t.membw[i] = UNLIMITED_KBPS if any(b is None for b in bws) else sum(kbps(b) for b in bws)
        t.membw_used[i] = sum(kbps(inst.memory_bandwidth_gbps) for inst in host.instances)
        for name in t.vm_names.pop(i, ()):
            t.count_out(name, i)
        for inst in host.instances:
            t.count_in(inst.vm, i)

    def columns_claimed(
        self,
        t: ImpactTable,
        i: int,
        host: ComputeHostDescriptor | None,
        before: ComputeHostDescriptor,
        config: VmConfiguration,
    ) -> bool:
        """The instance the claim added (the last of `host`'s, as `claim` appends it) counted in,
        when the others are `before`'s (a claim that replaced one of the same owner: `fill`).
        A pending claim adds one (its owner is no instance of the host's): as `claim` makes it."""
        if host is None:
            t.membw_used[i] += kbps(stored_gbps(config.memory_bandwidth_gbps))
            t.count_in(config.vm, i)
            return True
        added = host.instances[-1] if host.instances else None
        if added is None or added.id != config.owner:
            return False
        if not same_objects(host.instances[:-1], before.instances):
            return False
        t.membw_used[i] += kbps(added.memory_bandwidth_gbps)
        t.count_in(added.vm, i)
        return True

    def host_checks(self, inp: FilterInput) -> list[HostCheck]:
        impact = inp.request.vm.impact
        if impact is None:
            return []
        t = inp.fleet.table(self)
        out = []
        name = inp.request.name
        if impact.max_instances_per_host is not None:
            limit = impact.max_instances_per_host
            counts = t.count(name, len(inp.fleet))
            out.append(
                HostCheck(
                    Reason.max_instances,
                    f"already run {limit} instances of {name} (its limit per host)",
                    counts >= limit,
                    detail(
                        lambda i, c=counts, limit=limit: (
                            f"{int(c[i])} instances of {name} already run here, at most {limit} per host",
                            float(limit),
                            float(c[i]),
                        )
                    ),
                )
            )
        if impact.memory_bandwidth_gbps:
            out.append(_budget_check(t, impact.memory_bandwidth_gbps))
        return out

    def assign(
        self,
        draft: ConfigurationDraft,
        free: HostFree,
        request: Request,
        layout: Layout | None,
        decisions: Decisions,
    ) -> None:
        impact = request.vm.impact
        draft.fields["memory_bandwidth_gbps"] = (
            (impact.memory_bandwidth_gbps or 0.0) if impact else 0.0
        )

    def counts(self, request: Request) -> bool:
        impact = request.vm.impact
        return not (impact is not None and impact.memory_bandwidth_gbps)

    def count_caps(self, fleet: IndexedFleet, i: int, request: Request) -> list[tuple[Reason, int]]:
        left = _instances_left(fleet.table(self), i, request)
        return [] if left is None else [(Reason.max_instances, left)]

    def relax_host(
        self, model: RelaxModel, host: int, z: cp_model.IntVar, request: Request
    ) -> None:
        left = _instances_left(model.fleet.table(self), host, request)
        if left is not None:
            model.model.add(z <= left)

    def claim(self, draft: HostDraft, config: VmConfiguration, sign: int) -> None:
        # the draft's instances (models as reported, dicts as claimed): one draft may take several
        # claims in turn (`claims.claim_all`)
        instances: list[Any] = [
            i
            for i in draft.data["instances"]
            if (i["id"] if isinstance(i, dict) else i.id) != config.owner
        ]
        if sign > 0:
            instances.append(
                {
                    "id": config.owner,
                    "vm": config.vm,
                    "memory_bandwidth_gbps": config.memory_bandwidth_gbps,
                }
            )
        draft.data["instances"] = instances

    def owners(self, host: ComputeHostDescriptor) -> Iterable[str]:
        return (i.id for i in host.instances)


def _instances_left(t: ImpactTable, i: int, request: Request) -> int | None:
    """More instances of the request's VM that host i may run (None: no limit)."""
    impact = request.vm.impact
    if impact is None or impact.max_instances_per_host is None:
        return None
    running = t.instances.get(request.name, {}).get(i, 0)
    return max(impact.max_instances_per_host - running, 0)


def _budget_check(t: ImpactTable, need: float) -> HostCheck:
    left = (t.membw - t.membw_used) / KBPS_PER_GBPS
    return HostCheck(
        Reason.memory_bandwidth_budget,
        f"lack {need:g} Gbps of memory-bandwidth budget",
        t.membw - t.membw_used < kbps(need),
        detail(
            lambda i, need=need, left=left: (
                f"{float(left[i]):g} Gbps of memory bandwidth left after the running "
                f"instances, the VM may use {need:g}",
                need,
                float(left[i]),
            )
        ),
    )


IMPACT = ImpactKind()

__all__ = ["IMPACT", "ImpactKind", "ImpactTable"]
