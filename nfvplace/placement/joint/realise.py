"""The first pass of `mode="max"`: the node-count relaxation's plan, realised host by host.

The relaxation (`relaxation.py`) says how many instances of each shape go to which host and NUMA
nodes. Its planned instances are dealt to their hosts, and each host's share is placed there together
(on the planned nodes only), in the first of a few orders and policies that places all of them, else
as the one that placed the most did (its claims made again, not solved again): the engine places one
VM at a time, and the order decides whether, say, a port's last VFs are left without bandwidth. What
a host did not take, and the instances the plan left out, then go wherever the engine takes them. The
relaxation has many optimal plans; while the time lasts, plans of other solver seeds are realised
too, and the pass that places the most wins (then the fewest hosts).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable

from ...models.vmd import VmDescriptor
from ..index import FleetIndex
from ..options import Options, Policy
from .batch import Group, Unit
from .lns import Claims, restore
from .relaxation import Relaxation, relax
from .search import JointSearch, SearchStopped

SEEDS = 4  # plans tried at most
# (policy, order) per attempt on one host; the orders are keys of _ORDERS
VARIANTS = (
    (Policy.pack, "largest"),
    (Policy.spread, "largest"),
    (Policy.pack, "widest"),
    (Policy.spread, "widest"),
    (Policy.least_fragmentation, "largest"),
    (Policy.spread, "smallest"),
    (Policy.pack, "smallest"),
)


def _bandwidth(vm: VmDescriptor) -> float:
    ifaces = [*vm.interfaces, *(i for cs in vm.cpu_sets for i in cs.interfaces)]
    return sum(i.bandwidth_gbps or 0.0 for i in ifaces)


_ORDERS: dict[str, Callable[[Unit, int], tuple[float, ...]]] = {
    "largest": lambda unit, u: (-unit.member.size, u),
    "smallest": lambda unit, u: (unit.member.size, u),
    "widest": lambda unit, u: (-_bandwidth(unit.member.vm), -unit.member.size, u),
}


def planned_pass(fleet: FleetIndex, group: Group, options: Options, deadline: float) -> JointSearch:
    """The best realisation of up to `SEEDS` optimal plans, within `deadline`."""
    best: JointSearch | None = None
    for seed in range(SEEDS):
        if best is not None and (
            time.monotonic() > deadline or len(best.state.placed) == best.bound
        ):
            break
        left_s = max(deadline - time.monotonic(), 0.001)
        relaxation = relax(fleet, group.members, options, max(left_s / 3, 0.1), seed)
        search = JointSearch(fleet, group, options, left_s)
        search.bound = relaxation.bound
        _follow(search, relaxation)
        key = (len(search.state.placed), -len(search.state.on_host))
        if best is None or key > (len(best.state.placed), -len(best.state.on_host)):
            best = search
    assert best is not None
    return best


def _follow(search: JointSearch, relaxation: Relaxation) -> None:
    units = search.units
    by_host, rest = _deal(search, relaxation)
    left: list[int] = []
    with contextlib.suppress(SearchStopped):
        for host, mine in by_host.items():
            placed = _best_on_host(search, host, mine, relaxation)
            left.extend(u for u in mine if u not in placed)
        # what the plan's hosts did not take, then what the plan left out, largest first
        search.greedy(left + sorted(rest, key=lambda u: (-units[u].member.size, u)))


def _deal(search: JointSearch, relaxation: Relaxation) -> tuple[dict[int, list[int]], list[int]]:
    """The planned instances of each host (the first instances of each shape), and the others."""
    room = {k: dict(hosts) for k, hosts in relaxation.plan.items()}
    by_host: dict[int, list[int]] = {}
    rest: list[int] = []
    order = sorted(range(len(search.units)), key=lambda u: (-search.units[u].member.size, u))
    for u in order:
        k = _shape(search, relaxation, u)
        hosts = [h for h, n in room.get(k, {}).items() if n > 0]
        if not hosts:
            rest.append(u)
            continue
        room[k][hosts[0]] -= 1
        by_host.setdefault(hosts[0], []).append(u)
    return by_host, rest


def _best_on_host(
    search: JointSearch, host: int, mine: list[int], relaxation: Relaxation
) -> list[int]:
    """Place `mine` on `host` in the first variant that places them all, else the best one."""
    best: Claims = []
    for variant in VARIANTS:
        search.tick()
        claims = _on_host(search, host, mine, relaxation, variant)
        if len(claims) == len(mine):
            return mine
        restore(search, [u for u, _, _ in claims], [])
        if len(claims) > len(best):
            best = claims
    restore(search, [], [(host, best)])  # the best variant's claims, made again as they were
    return [u for u, _, _ in best]


def _on_host(
    search: JointSearch,
    host: int,
    mine: list[int],
    relaxation: Relaxation,
    variant: tuple[Policy, str],
) -> Claims:
    policy, order = variant
    options = dataclasses.replace(search.options, policy=policy)
    nodes = frozenset(int(n) for n in search.state.fleet.node_id[host] if n >= 0)
    claims: Claims = []
    for u in sorted(mine, key=lambda u: _ORDERS[order](search.units[u], u)):
        planned = relaxation.nodes.get((_shape(search, relaxation, u), host), nodes)
        fit = search.masked(u, host, nodes - planned, options)
        if fit is not None and search.state.place(u, host, fit.configuration, fit.host):
            claims.append((u, fit.configuration, fit.host))
    return claims


def _shape(search: JointSearch, relaxation: Relaxation, u: int) -> int:
    return relaxation.shape_of[search.member_index[id(search.units[u].member)]]
