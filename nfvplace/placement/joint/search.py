"""The joint search: every instance of every member of a VNF template or a batch, at once.

A depth-first search over (instance -> host) on top of the single-VM engine. Each instance's
candidate hosts are the hosts the engine says take it (every single-VM rule: cpu-sets, SMT, hugepages,
NICs, impact limits...), given the instances placed before it, which are *claimed* on a working copy
of the fleet: two members on one host never get the same PU, VF, port or hugepage. Anti-affinity,
link locality and the bandwidth of colocated links narrow the candidates. When an instance has no
candidate, the search backtracks: if an assignment of all instances exists (among the layouts the
engine picks per host), it is found.

Search order: largest members first (they have the fewest hosts). Three rules keep it small: after a
subtree fails on a host, the hosts that are identical to it (same descriptor but for ids and owners,
same members of this search on it) are skipped; the instances of one member are placed host by host
(`left_behind`); and a time limit (`limit_s`) bounds it, after which the answer says so. Hosts this
search already uses come first (fewer hosts used), then the largest machines. The deepest dead end
where the unit fits no host at all (the twin rule aside) is kept for the diagnosis.

How the search is driven (all or nothing, or as many as fit) is `place.py`'s.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ...claims import ClaimConflictError, claim
from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ..engine.candidates import Fit, fitting_hosts
from ..engine.policies.measures import leading
from ..index import FleetIndex
from ..options import Options, Policy
from ..resources.base import IntArray
from .batch import Group
from .state import JointState


class SearchStopped(Exception):  # noqa: N818 (a signal, not an error)
    """The search ran out of time: whoever drives it stops there and keeps what it has."""


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
        total = leading(fleet).total  # eligible threads: the machine's size
        self._size_rank: IntArray = (int(total.max(initial=0)) + 1 - total).astype(np.int64)

    def rank(self) -> IntArray | None:
        if self.options.policy is not Policy.pack or not self.fewest_hosts:
            return None
        rank = self._size_rank.copy()
        rank[list(self.state.on_host)] = 0
        return rank

    def left_behind(self, u: int) -> list[int]:
        """The hosts unit u's twin rule rules out: those holding instances of its member, but for
        the host of the instance just before it. Instances of one member are interchangeable, so
        each host's share is placed in one run: after the previous instance, the next goes on the
        same host or on one holding none yet. Every share of the instances among the hosts is
        reached that way, whatever order the candidates come in (a rule by fleet order, as here
        before, left the hosts before the first one chosen behind)."""
        before = self.twin.get(u)
        if before is None or before not in self.state.placed:
            return []
        last = self.state.placed[before].host
        member = self.units[u].member
        return [
            h
            for h, held in self.state.on_host.items()
            if h != last and any(self.units[v].member is member for v in held)
        ]

    def candidates(
        self,
        u: int,
        skip: set[str] | None = None,
        within: list[int] | None = None,
        twins: bool = True,
    ) -> Iterator[Fit]:
        """The hosts that take unit u now, best first (hosts whose signature is in `skip` left out,
        only the hosts `within` when given, the twin rule applied unless `twins` is False)."""
        state = self.state
        consider, _ = state.consider(u)
        if within is not None:
            allowed = np.zeros_like(consider)
            allowed[within] = True
            consider &= allowed
        if twins:
            consider[self.left_behind(u)] = False
        numa = [h for h in state.numa_hosts(u) if consider[h]]
        consider[numa] = False
        unit = self.units[u]
        yield from fitting_hosts(
            state.fleet,
            unit.member.vm,
            self.options,
            consider,
            unit.instance,
            rank_first=self.rank(),
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
            raise SearchStopped

    def dfs(self, order: list[int], pos: int) -> bool:
        if pos == len(order):
            return True
        self.tick()
        u = order[pos]
        failed: set[str] = set()
        found = False
        for fit in self.candidates(u, failed):
            if not self.state.place(u, fit.position, fit.configuration, fit.host):
                continue
            found = True
            self.path.append(u)
            if self.dfs(order, pos + 1):
                return True
            self.path.pop()
            self.state.undo(u)
            self.backtracks += 1
            failed.add(self.state.signature(fit.position))
        if not found and pos > self.dead.depth and not self.takes_any(u):
            placed = self.state.placed
            path = tuple((v, placed[v].host, placed[v].configuration) for v in self.path)
            self.dead = _Dead(pos, u, path)
        return False

    def takes_any(self, u: int) -> bool:
        """Whether some host takes unit u now, the twin rule aside: a dead end only the rule makes
        is not where the diagnosis looks (every host there would say "fits")."""
        for fit in self.candidates(u, twins=False):
            if self.state.place(u, fit.position, fit.configuration, fit.host):
                self.state.undo(u)
                return True
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
            if self.state.place(u, fit.position, fit.configuration, fit.host):
                return True
        return False
