"""Joint placement: every instance of every member of a VNF template or a batch, at once.

A depth-first search over (instance -> host) on top of the single-VM engine. Each instance's
candidate hosts are the hosts the engine says take it (every single-VM rule: cpu-sets, SMT, hugepages,
NICs, impact limits...), given the instances placed before it, which are *claimed* on a working copy
of the fleet: two members on one host never get the same PU, VF, port or hugepage. Anti-affinity,
link locality and the bandwidth of colocated links narrow the candidates. When an instance has no
candidate, the search backtracks: if an assignment of all instances exists (among the layouts the
engine picks per host), it is found.

Search order: largest members first (they have the fewest hosts). Two pruning rules keep it small:
after a subtree fails on a host, the hosts that are identical to it (same descriptor but for ids and
owners, same members of this search on it) are skipped; and a time limit (`limit_s`) bounds it, after
which the answer says so. Hosts this search already uses come first (fewer hosts used), then the
largest machines.

`mode="all"` (default): all or nothing; under the pack policy a complete placement is then
consolidated (`lns.consolidate`: the least used hosts emptied onto the others) for at most a quarter
of the time limit. `mode="max"`: as many instances as possible: first the node-count relaxation's
plans realised host by host (`realise.py`), then greedy passes in other orders (`PASSES`), for the
first half of the time limit, the best kept, then large-neighbourhood search on it (`lns.py`) for the
rest; the others are listed in `PlacementResult.unplaced` with the reason.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .. import errors
from ..claims import ClaimConflictError, claim
from ..errors import Issue, NfvplaceError
from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from .batch import Group
from .candidates import Fit, fitting_hosts
from .index import FleetIndex, IntArray
from .joint_explain import diagnose
from .joint_state import JointState
from .lns import consolidate, improve
from .options import Options, Policy
from .result import PlacementResult, Unplaced

MODES = ("all", "max")
DEFAULT_LIMIT_S = 10.0
CONSOLIDATE_SHARE = 0.25  # of the time limit, at most, spent emptying hosts of a complete placement


class _StoppedError(Exception):
    """The search ran out of time."""


@dataclass
class _Dead:
    """The deepest dead end so far: the units placed (in order) and the unit that found no host."""

    depth: int = -1
    unit: int = 0
    path: tuple[tuple[int, int, VmConfiguration], ...] = ()  # (unit, host, configuration)


def _mask_nodes(host: ComputeHostDescriptor, nodes: set[int]) -> ComputeHostDescriptor:
    """`host` with every PU of `nodes` ineligible (a unit kept off those nodes)."""
    new_nodes = []
    for node in host.numa_nodes:
        if node.id in nodes:
            cpus = tuple(c.model_copy(update={"eligible": False}) for c in node.cpus)
            node = node.model_copy(update={"cpus": cpus})
        new_nodes.append(node)
    return host.model_copy(update={"numa_nodes": tuple(new_nodes)})


class JointSearch:
    def __init__(self, fleet: FleetIndex, group: Group, options: Options, limit_s: float):
        self.original = fleet
        self.group = group
        self.options = options
        self.units = group.units(options.instance)
        self.member_index = {id(m): k for k, m in enumerate(group.members)}
        self.state = JointState.start(fleet, group, self.units)
        self.deadline = time.monotonic() + limit_s
        self.limit_s = limit_s
        self.nodes = 0
        self.backtracks = 0
        self.steps = 0  # large-neighbourhood steps (mode="max")
        self.bound: int | None = None  # the relaxation's upper bound on instances (mode="max")
        self.dead = _Dead()
        self.path: list[int] = []
        self.twin: dict[int, int] = {}  # unit -> the previous instance of its member
        self.fewest_hosts = True  # pack: hosts this search uses first, then the largest machines
        total = fleet.total_threads
        self._size_rank: IntArray = (int(total.max(initial=0)) + 1 - total).astype(np.int64)

    def rank(self) -> IntArray | None:
        if self.options.policy is not Policy.pack or not self.fewest_hosts:
            return None
        rank = self._size_rank.copy()
        rank[list(self.state.on_host)] = 0
        return rank

    def candidates(
        self, u: int, skip: set[str] | None = None, within: list[int] | None = None
    ) -> Iterator[Fit]:
        """The hosts that take unit u now, best first (hosts whose signature is in `skip` left out,
        only the hosts `within` when given)."""
        state = self.state
        consider, _ = state.consider(u)
        if within is not None:
            allowed = np.zeros_like(consider)
            allowed[within] = True
            consider &= allowed
        before = self.twin.get(u)
        if before is not None and before in state.placed:
            # instances of one member are interchangeable: their hosts never go down in index
            consider[: state.placed[before].host] = False
        numa = [h for h in state.numa_hosts(u) if consider[h]]
        consider[numa] = False
        unit = self.units[u]
        yield from fitting_hosts(
            state.fleet,
            unit.member.vm,
            self.options,
            consider,
            unit.instance,
            rank=self.rank(),
            skip=(lambda i: state.signature(i) in skip) if skip else None,
        )
        for h in numa:
            fit = self.masked(u, h)
            if fit is not None:
                yield fit

    def masked(
        self, u: int, h: int, also: frozenset[int] = frozenset(), options: Options | None = None
    ) -> Fit | None:
        """`u` on host h without the NUMA nodes a numa-scope anti-affinity group forbids (and the
        nodes `also`), under `options` (the search's own by default)."""
        host = self.state.fleet.hosts[h]
        masked = _mask_nodes(host, self.state.forbidden_nodes(u, h) | also)
        single = FleetIndex([masked])
        unit = self.units[u]
        for fit in fitting_hosts(
            single,
            unit.member.vm,
            options or self.options,
            np.ones(1, dtype=np.bool_),
            unit.instance,
        ):
            try:
                return Fit(h, fit.configuration, claim(host, fit.configuration), fit.detail)
            except ClaimConflictError:
                return None
        return None

    def tick(self) -> None:
        self.nodes += 1
        if time.monotonic() > self.deadline:
            raise _StoppedError

    def dfs(self, order: list[int], pos: int) -> bool:
        if pos == len(order):
            return True
        self.tick()
        u = order[pos]
        failed: set[str] = set()
        found = False
        for fit in self.candidates(u, failed):
            if not self.state.place(u, fit.index, fit.configuration, fit.host):
                continue
            found = True
            self.path.append(u)
            if self.dfs(order, pos + 1):
                return True
            self.path.pop()
            self.state.undo(u)
            self.backtracks += 1
            failed.add(self.state.signature(fit.index))
        if not found and pos > self.dead.depth:
            placed = self.state.placed
            path = tuple((v, placed[v].host, placed[v].configuration) for v in self.path)
            self.dead = _Dead(pos, u, path)
        return False

    def greedy(self, order: list[int]) -> list[int]:
        """Each unit on its first candidate, no backtracking; returns the units left out."""
        left: list[int] = []
        for u in order:
            self.tick()
            if self.place_first(u):
                self.path.append(u)
            else:
                left.append(u)
        return left

    def place_first(self, u: int, within: list[int] | None = None) -> bool:
        """Claim unit u on the first host (of `within`, when given) that takes it."""
        for fit in self.candidates(u, within=within):
            if self.state.place(u, fit.index, fit.configuration, fit.host):
                return True
        return False


def _result(search: JointSearch, unplaced: tuple[Unplaced, ...] = ()) -> PlacementResult:
    state = search.state
    placed = sorted(state.placed.values(), key=lambda p: p.unit)
    explanation: list[str] = []
    if search.options.explain:
        explanation.append(
            f"{search.group.title}: {len(placed)}/{len(search.units)} instances placed on "
            f"{len(state.on_host)} hosts ({search.nodes} search steps, {search.backtracks} "
            f"backtracks, {search.steps} neighbourhood steps)"
        )
        if search.bound is not None:
            explanation.append(
                f"at most {search.bound} of the {len(search.units)} instances can fit "
                "(node-count relaxation: free cores, threads, hugepages, memory, VFs and port "
                "bandwidth per NUMA node)"
            )
        explanation.extend(
            f"{p.configuration.owner} -> {state.fleet.host_ids[p.host]}" for p in placed
        )
    return PlacementResult(
        configurations=tuple(p.configuration for p in placed),
        hosts={state.fleet.host_ids[h]: state.fleet.hosts[h] for h in sorted(state.on_host)},
        explanation=tuple(explanation),
        unplaced=unplaced,
    )


def place_joint(
    fleet: FleetIndex,
    group: Group,
    options: Options,
    *,
    mode: str = "all",
    limit_s: float = DEFAULT_LIMIT_S,
) -> PlacementResult:
    """Place every instance of `group` on `fleet` (a working copy; the caller's is untouched)."""
    if mode not in MODES:
        raise NfvplaceError(
            errors.PLACEMENT_INVALID_POLICY,
            f"unknown mode {mode!r}",
            issues=(Issue("use all (all or nothing) or max (as many as fit)", path="mode"),),
        )
    if mode == "all":
        search = JointSearch(fleet, group, options, limit_s)
        units = search.units
        order = sorted(range(len(units)), key=lambda u: (-units[u].member.size, u))
        search.twin = {
            b: a for a, b in itertools.pairwise(order) if units[a].member is units[b].member
        }
        try:
            if search.dfs(order, 0):
                if options.policy is Policy.pack:  # fewer hosts: move the least used ones away
                    end = min(search.deadline, time.monotonic() + limit_s * CONSOLIDATE_SHARE)
                    consolidate(search, end)
                return _result(search)
            stopped = False
        except _StoppedError:
            stopped = True
        return PlacementResult(diagnosis=diagnose(search, stopped))
    best = _most(fleet, group, options, limit_s)
    units = best.units
    left = [u for u in range(len(units)) if u not in best.state.placed]
    if not best.state.placed:
        return PlacementResult(diagnosis=diagnose(best, False, first=left[0] if left else 0))
    unplaced = tuple(
        Unplaced(units[u].member.name, units[u].k + 1, reason)
        for u, reason in zip(left, _reasons(best, left), strict=True)
    )
    return _result(best, unplaced)


# mode="max": greedy passes, each with another order of the instances and of the hosts, until every
# instance is placed or the time is up; the pass that places the most wins (then the fewest hosts).
# Smallest instances first with the tightest fit first (it places the most in the benchmarks), then
# the caller's policy (hosts already used first), the batch's own order, and spread.
PASSES = (
    (Policy.least_fragmentation, False, True),
    (None, True, True),
    (None, False, False),
    (Policy.spread, False, True),
)


def _most(fleet: FleetIndex, group: Group, options: Options, limit_s: float) -> JointSearch:
    deadline = time.monotonic() + limit_s
    passes_end = time.monotonic() + limit_s / 2  # the other half improves the best pass (LNS)
    from .realise import planned_pass  # it builds searches of this module

    planned = planned_pass(fleet, group, options, passes_end)
    best: JointSearch | None = planned
    for policy, fewest_hosts, smallest_first in PASSES:
        remaining = passes_end - time.monotonic()
        if best is not None and (remaining <= 0 or len(best.state.placed) == len(best.units)):
            break
        opts = options if policy is None else dataclasses.replace(options, policy=policy)
        search = JointSearch(fleet, group, opts, max(remaining, 0.001))
        search.fewest_hosts = fewest_hosts
        units = search.units
        order = list(range(len(units)))
        if smallest_first:
            order.sort(key=lambda u: (units[u].member.size, u))
        try:
            left = search.greedy(order)
        except _StoppedError:
            left = [0]
        key = (len(search.state.placed), -len(search.state.on_host))
        if best is None or key > (len(best.state.placed), -len(best.state.on_host)):
            best = search
        if not left:
            break
    assert best is not None
    best.options = options
    best.steps = improve(best, deadline, options.seed, planned.bound)
    best.bound = planned.bound
    return best


def _reasons(search: JointSearch, left: list[int]) -> list[str]:
    from .joint_explain import unit_summary

    return [unit_summary(search, u) for u in left]
