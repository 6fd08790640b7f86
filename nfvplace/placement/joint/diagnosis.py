"""Why a joint placement fails: the member that blocks, the constraint, and the hosts that came closest.

The search remembers its deepest dead end (the instances placed, in order, and the instance that then
found no host). The diagnosis replays that state and asks the engine why each host refuses the
instance, with the joint rules (anti-affinity, link locality, link bandwidth) as reasons of their own.
The closest hosts are those that take the blocked member on its own (it is the other members that
stand in the way), else those that failed only in the exact model, else the smallest shortfall.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...claims import claim
from ..engine.candidates import fitting_hosts
from ..engine.explain import Reasons
from ..reasons import Reason
from ..result import Diagnosis, Rejection
from .search import JointSearch
from .state import JointState

CLOSEST = 3
NUMA_APART = (
    "share every usable NUMA node with a member of the same anti-affinity group (numa_node)"
)
LINK_ROOM = "lack the vSwitch bandwidth for the links to the members already on them"
UNTRIED = "take it as things stand (the search did not get to place it there)"


def _builder(
    state: JointState, hosts: list[int], phrase: str, code: Reason
) -> Callable[[], list[Rejection]]:
    ids = [state.fleet.host_ids[i] for i in hosts]

    def build() -> list[Rejection]:
        return [Rejection(h, code, phrase, phrase, stage="joint") for h in ids]

    return build


def unit_diagnosis(search: JointSearch, state: JointState, u: int) -> Diagnosis:
    """Why unit u fits no host in `state`, host by host."""
    consider, excluded = state.consider(u)
    numa = [h for h in state.numa_hosts(u) if consider[h]]
    consider[numa] = False
    reasons = Reasons()
    for phrase, hosts in excluded.items():
        code = Reason.affinity if "anti-affinity" in phrase else Reason.link
        reasons.add(phrase, len(hosts), _builder(state, hosts, phrase, code))
    unit = search.units[u]
    fits = fitting_hosts(
        state.fleet, unit.member.vm, search.options, consider, unit.instance, reasons
    )
    # hosts that take the unit on its own: the links' bandwidth is what stops it there when it
    # has links to the members on them, else the search did not get to place it there
    taking = [fit.position for fit in fits]
    crowded = [h for h in taking if state.link_traffic(u, h) > 0]
    untried = [h for h in taking if h not in crowded]
    if numa:
        reasons.add(NUMA_APART, len(numa), _builder(state, numa, NUMA_APART, Reason.affinity))
    if crowded:
        reasons.add(LINK_ROOM, len(crowded), _builder(state, crowded, LINK_ROOM, Reason.link))
    if untried:
        reasons.add(UNTRIED, len(untried), _builder(state, untried, UNTRIED, Reason.not_tried))
    return reasons.diagnosis(len(state.fleet), 0)


def unit_summary(search: JointSearch, u: int) -> str:
    return unit_diagnosis(search, search.state, u).summary


def _shortfall(r: Rejection) -> float:
    if r.requested is None or r.available is None or r.requested <= 0:
        return 1.0
    return max(r.requested - r.available, 0.0) / r.requested


def _closest(search: JointSearch, u: int, diagnosis: Diagnosis) -> tuple[tuple[str, ...], str]:
    unit = search.units[u]
    alone: list[str] = []
    everything = np.ones(len(search.original), dtype=np.bool_)
    fleet = search.original
    for fit in fitting_hosts(fleet, unit.member.vm, search.options, everything, unit.instance):
        alone.append(fleet.host_ids[fit.position])
        if len(alone) == CLOSEST:
            break
    if alone:
        return tuple(alone), f"each takes {unit.member.name} on its own, not with the other members"
    ranked = sorted(
        diagnosis.rejections, key=lambda r: (r.stage not in ("solve", "joint"), _shortfall(r))
    )
    hosts: list[str] = []
    for r in ranked:
        if r.host not in hosts:
            hosts.append(r.host)
        if len(hosts) == CLOSEST:
            break
    first = ranked[0].message if ranked else ""
    return tuple(hosts), (f"{hosts[0]}: {first}" if hosts else "")


def diagnose(search: JointSearch, stopped: bool, first: int | None = None) -> Diagnosis:
    """The diagnosis of a failed search (`first`: the unit to blame when no dead end was reached)."""
    dead = search.dead
    title = search.group.title
    limit = f"; the search stopped at its {search.limit_s:g} s limit" if stopped else ""
    if first is None and dead.depth < 0:
        return Diagnosis(
            len(search.original),
            0,
            (),
            f"{title}: no assignment of every instance found{limit}; nothing placed",
        )
    u = dead.unit if first is None else first
    state = JointState.start(search.original, search.group, search.units)
    for v, h, config in dead.path if first is None else ():
        state.place(v, h, config, claim(state.fleet.hosts[h], config))
    diagnosis = unit_diagnosis(search, state, u)
    closest, why = _closest(search, u, diagnosis)
    placed = len(state.placed)
    prefix = (
        f"{title}: {search.units[u].label} does not fit ({placed} instances placed before it "
        f"in the deepest attempt, all released{limit}); "
    )
    suffix = f"; closest: {', '.join(closest)} ({why})" if closest else ""
    return Diagnosis(
        diagnosis.hosts_considered,
        0,
        diagnosis.rejections,
        prefix + diagnosis.summary + suffix,
        closest,
    )
