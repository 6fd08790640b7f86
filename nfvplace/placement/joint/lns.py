"""Local search on a joint placement: more instances (`mode="max"`), fewer hosts (`mode="all"`).

`improve` is a large-neighbourhood search for more instances placed than the greedy passes found.

A step frees one host the search uses (now and then two) (every instance of the group on them is released),
then fills them again with the smallest instances first, taken from those they held and those no
host took; what they held and no longer take tries the other hosts. A step that places fewer instances than before is
undone exactly (each instance claimed again with the configuration it had). Hosts are drawn with a
seeded random generator, so a run is repeatable for a given time limit and machine speed; the search
stops when every instance is placed, when it places as many as the relaxation's bound, or when the
time is up.

`consolidate` takes a complete placement (pack policy) and tries to empty the hosts it uses onto the
others, the least used host first; a host whose instances do not all move stays as it was.
"""

from __future__ import annotations

import random
import time

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from .search import JointSearch

Claims = list[tuple[int, VmConfiguration, ComputeHostDescriptor]]  # unit, its claim, host after it
NEIGHBOURHOOD = (1, 1, 1, 2)  # hosts freed by a step, drawn from these (one is the most productive)


class _DeadlineError(Exception):
    """The step found the deadline."""


def improve(search: JointSearch, deadline: float, seed: int, bound: int | None = None) -> int:
    """Improve `search`'s placement in place until `deadline` (or until it places `bound`
    instances, which no placement exceeds); returns the steps taken."""
    rng = random.Random(seed)
    steps = 0
    while time.monotonic() < deadline:
        state = search.state
        left = [u for u in range(len(search.units)) if u not in state.placed]
        if not left or not state.on_host or (bound is not None and len(state.placed) >= bound):
            break
        used = sorted(state.on_host)
        hosts = rng.sample(used, min(len(used), rng.choice(NEIGHBOURHOOD)))
        steps += 1
        if not _step(search, hosts, left, deadline):
            break
    return steps


def _step(search: JointSearch, hosts: list[int], left: list[int], deadline: float) -> bool:
    """One destroy-and-repair step on `hosts`; False when the deadline cut it short (undone)."""
    state = search.state
    before = len(state.placed)
    held = [u for h in hosts for u in state.on_host[h]]
    saved = [(h, _release(search, h)) for h in hosts]
    added: list[int] = []
    size = {u: search.units[u].member.size for u in held + left}
    finished = True
    try:
        for u in sorted(held + left, key=lambda u: (size[u], u)):
            if time.monotonic() > deadline:
                raise _DeadlineError
            if search.place_first(u, hosts):
                added.append(u)
        for u in held:
            if u not in state.placed and search.place_first(u):
                added.append(u)
    except _DeadlineError:
        finished = False
    if len(state.placed) < before or not finished:
        restore(search, added, saved)
    return finished


def restore(search: JointSearch, added: list[int], saved: list[tuple[int, Claims]]) -> None:
    """Undo `added`, then make each host's claims again, in order, exactly as they were made."""
    for u in reversed(added):
        search.state.undo(u)
    for host, claims in saved:
        for u, config, claimed in claims:
            if not search.state.place(u, host, config, claimed):
                raise AssertionError(f"unit {u} no longer fits where it was")


def _release(search: JointSearch, host: int) -> Claims:
    """Release every instance on `host`; what claims them again, in order, as they were."""
    state = search.state
    held = list(state.on_host[host])
    placed = [state.placed[u] for u in held]
    after = [p.before for p in placed[1:]] + [state.fleet.hosts[host]]
    saved = [(p.unit, p.configuration, claimed) for p, claimed in zip(placed, after, strict=True)]
    for u in reversed(held):
        state.undo(u)
    return saved


def consolidate(search: JointSearch, deadline: float) -> int:
    """Empty hosts of a complete placement onto the other hosts it uses, the least used first, while
    the time lasts; returns the hosts emptied. A host whose instances do not all move stays as it
    was."""
    state = search.state
    emptied = 0
    tried: set[int] = set()
    while time.monotonic() < deadline:
        hosts = sorted(
            (h for h in state.on_host if h not in tried),
            key=lambda h: (sum(search.units[u].member.size for u in state.on_host[h]), h),
        )
        if not hosts or len(state.on_host) < 2:
            break
        host = hosts[0]
        tried.add(host)
        others = [h for h in state.on_host if h != host]
        saved = _release(search, host)
        moved: list[int] = []
        for u, _, _ in sorted(saved, key=lambda c: -search.units[c[0]].member.size):
            if time.monotonic() > deadline or not search.place_first(u, others):
                break
            moved.append(u)
        if len(moved) == len(saved):
            emptied += 1
            tried.clear()  # the others changed: every host may be emptied again
            continue
        restore(search, moved, [(host, saved)])
    return emptied
