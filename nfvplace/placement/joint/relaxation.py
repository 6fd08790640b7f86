"""The node-count relaxation of a joint placement: an upper bound on what fits, and a plan.

Every member of a batch or VNF is a number of identical instances. The relaxation chooses how many
instances of each member go to each NUMA node (each host, for members with several cpu-sets), under
necessary conditions only, summed over the members that share a node:

- a member goes only where the single-VM filter lets one instance go (host checks, node needs),
  each of its cpu-sets on a node (on distinct nodes when the descriptor asks);
- CPUs: a howtogroup pair takes a whole free core, an isolated vCPU a whole core or a thread whose
  sibling no VM can get (or a single-thread core), any other vCPU and the emulator PU a thread; on
  SMT2 nodes a whole core that gives loose threads gives at most two and nothing else;
- free hugepages of each size, normal memory (strict and with oversubscription), memory bandwidth;
- each SR-IOV interface on a port of its node (of the host, if it is not bound to its cpu-set) at
  least as fast as it asks: per port, at most its free VFs and its unused bandwidth (within its
  NIC's PCIe budget); for every speed class, whole free ports >= the dedicated interfaces that
  need that speed or more;
- oversubscribed plain VMs: only on nodes whose shared pool takes one spread evenly, within the
  node's spare shared vCPUs and its normal memory;
- per host: the vSwitch's free bandwidth and each member's instances-per-host limit;
- at most the member's count.

Any real placement meets them all, so the largest total the relaxation admits (CP-SAT's proven bound)
bounds every placement from above. Its best solution is also a *plan*: hosts and nodes for each
member that joint placement (`mode="max"`) then tries to realise with the exact engine.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from ortools.sat.python import cp_model

from ...models.vmd import VmDescriptor
from ..engine.filter import run_filter
from ..engine.variants import split
from ..index import FleetIndex
from ..options import Options
from ..request import Request, build_request
from ..resources import RELAX_FINISH, RELAX_HOSTS, RELAX_NODES, implementing
from ..resources.kind import RelaxState
from ..resources.stages import RelaxCapacity, RelaxSlots
from .batch import Member

_SLOT_CHECKS = implementing(RelaxSlots)
_CAPACITY = {kind.name: kind for kind in implementing(RelaxCapacity)}


class _RelaxModel:
    """The relaxation's CP-SAT model as the kinds add to it (`resources.kind.RelaxModel`): named
    usage terms per node slot (or host, slot -1), summed against the owning kind's capacity in the
    order they were first used, and each kind's own variables and state."""

    def __init__(self, fleet: FleetIndex) -> None:
        self.fleet = fleet
        self.model = cp_model.CpModel()
        self._use: dict[tuple[int, int, str], list[cp_model.LinearExprT]] = defaultdict(list)
        self._owner: dict[str, str] = {}  # use name -> kind
        self._state: dict[str, object] = {}  # by kind: what its `RelaxState` handle made

    def use(self, owner: str, host: int, slot: int, name: str, term: cp_model.LinearExprT) -> None:
        self._use[(host, slot, name)].append(term)
        self._owner[name] = owner

    def uses(self, owner: str) -> Mapping[tuple[int, int, str], list[cp_model.LinearExprT]]:
        return {key: terms for key, terms in self._use.items() if self._owner[key[2]] == owner}

    def state[S](self, handle: RelaxState[S]) -> S:
        if handle.kind not in self._state:
            self._state[handle.kind] = handle.new()
        return cast(S, self._state[handle.kind])

    def add(self, host: int, slot: int, x: cp_model.IntVar, request: Request, part: Any) -> None:
        """`x` instances' worth of `part` of `request` on node slot `slot` of `host` (part None:
        what binds to no node, on the host)."""
        for kind in RELAX_NODES:
            kind.relax_add(self, host, slot, x, request, part)

    def finish(self) -> None:
        for (host, slot, name), terms in self._use.items():
            kind = _CAPACITY.get(self._owner[name])
            capacity = kind.relax_capacity(self.fleet, host, slot, name) if kind else None
            if capacity is not None:  # None: the kind constrains it itself (relax_finish)
                self.model.add(sum(terms) <= capacity)
        for finish in RELAX_FINISH:
            finish.relax_finish(self)


@dataclass(frozen=True, slots=True)
class Relaxation:
    bound: int  # no placement of these members places more instances
    optimal: bool  # the plan reaches the bound
    plan: dict[int, dict[int, int]]  # shape -> host -> instances planned there
    nodes: dict[tuple[int, int], set[int]]  # (shape, host) -> NUMA node ids planned for it
    shape_of: tuple[int, ...] = ()  # member -> its shape (members alike but for their names)


def shapes(members: Sequence[Member]) -> tuple[list[tuple[VmDescriptor, int]], tuple[int, ...]]:
    """Members that differ only by name are one shape (a batch of 200 VMs has a handful): the
    shapes (a descriptor, the summed count) and each member's shape."""
    found: dict[str, int] = {}
    out: list[tuple[VmDescriptor, int]] = []
    shape_of = []
    for member in members:
        vm = member.vm
        limited = vm.impact is not None and vm.impact.max_instances_per_host is not None
        key = vm.model_dump_json(exclude=None if limited else {"name"})
        if key not in found:
            found[key] = len(out)
            out.append((vm, 0))
        k = found[key]
        out[k] = (out[k][0], out[k][1] + member.count)
        shape_of.append(k)
    return out, tuple(shape_of)


@dataclass
class _Plan:
    """The relaxation's variables: instances of each shape per host, and per NUMA node."""

    on_host: dict[tuple[int, int], list[cp_model.IntVar]]  # (shape, host)
    on_node: dict[tuple[int, int, int], list[cp_model.IntVar]]  # (shape, host, node id)


def _on_host(
    m: _RelaxModel, plan: _Plan, k: int, count: int, host: int, request: Request, node_ok: Any
) -> None:
    """Up to `count` instances of shape k on `host`: each part of an instance on one node it may
    use (on distinct nodes when the descriptor asks), within the kinds' limits."""
    fleet = m.fleet
    z = m.model.new_int_var(0, count, f"z[{k},{host}]")
    plan.on_host[(k, host)].append(z)
    per_slot: dict[int, list[cp_model.IntVar]] = defaultdict(list)
    for part in request.parts:
        ys = []
        for slot in np.flatnonzero(node_ok[part.id][host]).tolist():
            if not all(
                kind.relax_slot_ok(fleet, host, slot, request, part) for kind in _SLOT_CHECKS
            ):
                continue
            y = m.model.new_int_var(0, count, f"y[{k},{host},{part.id},{slot}]")
            m.add(host, slot, y, request, part)
            ys.append(y)
            per_slot[slot].append(y)
            plan.on_node[(k, host, int(fleet.node_id[host, slot]))].append(y)
        m.model.add(sum(ys) == z)
    if request.distinct_nodes and len(request.parts) > 1:
        for ys in per_slot.values():  # an instance puts one cpu-set on a node
            m.model.add(sum(ys) <= z)
    m.add(host, -1, z, request, None)
    for kind in RELAX_HOSTS:
        kind.relax_host(m, host, z, request)


def relax(
    fleet: FleetIndex,
    members: Sequence[Member],
    options: Options,
    time_limit_s: float = 5.0,
    seed: int = 0,
) -> Relaxation:
    """The relaxation of placing `members` (each `count` instances of `vm`) on `fleet`. One solver
    worker, so that a `seed` always gives the same plan (the optimum has many)."""
    kinds, shape_of = shapes(members)
    m = _RelaxModel(fleet)
    plan = _Plan(defaultdict(list), defaultdict(list))
    for k, (vm, count) in enumerate(kinds):
        for descriptor, variant, mask in split(fleet, vm):
            request = build_request(descriptor, variant)
            outcome = run_filter(fleet, request, options, mask)
            for host in np.flatnonzero(outcome.passing).tolist():
                _on_host(m, plan, k, count, host, request, outcome.node_ok)
        m.model.add(sum(z for (j, _), zs in plan.on_host.items() if j == k for z in zs) <= count)
    m.finish()
    m.model.maximize(sum(z for zs in plan.on_host.values() for z in zs))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    status = solver.solve(m.model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Relaxation(sum(c for _, c in kinds), False, {}, {}, shape_of)
    return _read(solver, plan, status == cp_model.OPTIMAL, shape_of)


def _read(
    solver: cp_model.CpSolver, plan: _Plan, optimal: bool, shape_of: tuple[int, ...]
) -> Relaxation:
    hosts: dict[int, dict[int, int]] = defaultdict(dict)
    for (k, host), zs in plan.on_host.items():
        value = sum(solver.value(z) for z in zs)
        if value:
            hosts[k][host] = value
    nodes: dict[tuple[int, int], set[int]] = defaultdict(set)
    for (k, host, node), ys in plan.on_node.items():
        if any(solver.value(y) for y in ys):
            nodes[(k, host)].add(node)
    bound = int(solver.best_objective_bound + 1e-6)
    return Relaxation(bound, optimal, dict(hosts), dict(nodes), shape_of)
