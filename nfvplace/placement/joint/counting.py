"""The counting model: how many instances of one request a host takes, worked out on its free counts.

What-if capacity asks, for every host of the fleet, how many instances the engine would place there
one after the other. Running the engine instance by instance costs about 2 ms each, so a fleet of
1,000 hosts with room for several thousand instances takes seconds. This model gives the same count
for the common shape of request (one part on one NUMA node: a pinned cpu-set, or shared vCPUs) in
microseconds: each node is filled instance after instance on integer counts, every kind taking what
the engine's objective takes first (`count_take`: the CPU kind's pairs, isolated and loose threads and
emulator PU; memory's hugepages, normal memory and bandwidth; the NICs' port layout of least cost;
the shared pool as `shared.choose_pus` spreads it). Nodes are independent for such requests, so the
host's count is the sum of its nodes', capped by the kinds' host-wide limits (`count_caps`: vSwitch
bandwidth, instances per host).

A request some kind does not count (`counts`: several cpu-sets, PCI devices, links, a memory-
bandwidth impact budget, ...) returns None and is counted by the engine itself; so does a host a
kind does not cover (`Uncounted`: cores of more than two threads, two port layouts of equal cost that
leave the ports differently). `tests/placement/test_counting.py` compares both counts on random hosts.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ..index import FleetIndex
from ..reasons import Reason
from ..request import Request
from ..resources import COUNT_CAPS, COUNT_TAKES, implementing
from ..resources.base import slots_of
from ..resources.kind import Uncounted
from ..resources.stages import CountGate

MAX_PER_NODE = 4096  # a guard against a request that takes nothing

_GATES = implementing(CountGate)

Take = Callable[[Request, bool], Reason | None]
"""One kind's `count_take` bound to its state on one node: take an instance, or say what misses."""


def covers(request: Request) -> bool:
    """Whether the counting model gives the engine's count for `request`."""
    return len(request.parts) == 1 and all(kind.counts(request) for kind in _GATES)


def _node_count(
    fleet: FleetIndex, i: int, slot: int, request: Request, spread: bool
) -> tuple[int, Reason | None]:
    """Instances the node takes one after the other, and what stopped the next (None: nothing
    did, within `MAX_PER_NODE`)."""
    takes: list[Take] = []
    for kind in COUNT_TAKES:
        state = kind.count_state(fleet, i, slot, request)
        if state is not None:
            takes.append(partial(kind.count_take, state))
    count = 0
    for _ in range(MAX_PER_NODE):
        # in `COUNT_TAKES`' order, so that the reason is the one `place` would give; a node is not
        # counted onto again once something is missing, so a partly taken instance does no harm
        for take in takes:
            missing = take(request, spread)
            if missing is not None:
                return count, missing
        count += 1
    return count, None


def count_host(
    fleet: FleetIndex, i: int, request: Request, spread: bool = False
) -> tuple[int, list[Reason]] | None:
    """Instances of `request` host i takes one after the other, and the reason codes that stopped
    them (one per node, host-wide limits last); None when the model does not cover the host."""
    count, stops = 0, []
    try:
        for slot in slots_of(fleet, i):
            taken, stop = _node_count(fleet, i, slot, request, spread)
            count += taken
            if stop is not None:
                stops.append(stop)
    except Uncounted:
        return None
    for kind in COUNT_CAPS:
        for code, cap in kind.count_caps(fleet, i, request):
            if cap <= count:
                count, stops = cap, [code]
    return count, stops
