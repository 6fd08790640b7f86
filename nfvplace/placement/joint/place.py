"""Joint placement: every instance of every member of a VNF template or a batch, at once.

`mode="all"` (default): all or nothing (the depth-first search of `search.py`); under the pack policy
a complete placement is then consolidated (`lns.consolidate`: the least used hosts emptied onto the
others) for at most a quarter of the time limit. `mode="max"`: as many instances as possible: first
the node-count relaxation's plans realised host by host (`realise.py`), then greedy passes in other
orders (`PASSES`), for the first half of the time limit, the best kept, then large-neighbourhood
search on it (`lns.py`) for the rest; the others are listed in `PlacementResult.unplaced` with the
reason.
"""

from __future__ import annotations

import dataclasses
import itertools
import time

from ... import errors
from ...errors import Issue, NfvplaceError
from ..index import FleetIndex
from ..options import Options, Policy
from ..result import PlacementResult, Unplaced
from .batch import Group
from .copies import copies_of, place_copies
from .diagnosis import diagnose, unit_summary
from .lns import consolidate, improve
from .realise import planned_pass
from .search import JointSearch, SearchStopped

MODES = ("all", "max")
DEFAULT_LIMIT_S = 10.0
CONSOLIDATE_SHARE = 0.25  # of the time limit, at most, spent emptying hosts of a complete placement


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
    vm = copies_of(group)
    if vm is not None:  # copies of one VM: capacity's count decides, no search needed
        placed = place_copies(fleet, group, vm, options, mode)
        if placed is not None:
            return placed
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
        except SearchStopped:
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
        except SearchStopped:
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
    return [unit_summary(search, u) for u in left]
