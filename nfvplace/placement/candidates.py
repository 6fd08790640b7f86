"""Every host that takes one VM on its own, best first, one at a time (for searches that backtrack).

`place_vm` stops at the first host that fits; a joint search needs the second, the third, ... when the
first one leads nowhere. `fitting_hosts` runs the same filter, ranking and exact model as `place_vm`
(so every single-VM rule applies), and yields each fitting host with the configuration and the updated
host descriptor, lazily: a caller that stops early pays for the hosts it looked at only. Hosts that
fail are recorded in `reasons` (when given) as `place_vm` records them, once the generator is
exhausted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..models.chd import ComputeHostDescriptor
from ..models.configuration import VmConfiguration
from ..models.vmd import VmDescriptor
from .engine import _add_solve_failures, _attempt, _Infeasible
from .explain import Reasons
from .filter import FilterOutcome, run_filter
from .index import BoolArray, FleetIndex, IntArray
from .options import Options
from .policies import host_keys
from .request import Request, build_request
from .variants import split


@dataclass(frozen=True, slots=True)
class Fit:
    index: int  # host index in the fleet
    configuration: VmConfiguration
    host: ComputeHostDescriptor  # the host with the configuration claimed
    detail: tuple[str, ...] = ()  # what the exact model chose (for --explain)
    score: int = 0  # the policy's host score (lower is better; `policies.host_keys`)


def fitting_hosts(
    fleet: FleetIndex,
    vm: VmDescriptor,
    options: Options,
    consider: BoolArray,
    instance: str | None,
    reasons: Reasons | None = None,
    rank: IntArray | None = None,
    skip: Callable[[int], bool] | None = None,
) -> Iterator[Fit]:
    """Hosts of `consider` that take `vm`, in policy order (hosts with a lower `rank` first);
    `skip(i)` leaves host i out without solving (a host known to lead nowhere)."""
    groups: list[tuple[Request, FilterOutcome]] = []
    passing = np.zeros(len(fleet), dtype=np.bool_)
    keys = np.zeros(len(fleet), dtype=np.int64)
    owner = np.full(len(fleet), -1, dtype=np.int64)
    for descriptor, variant, mask in split(fleet, vm):
        request = build_request(descriptor, variant)
        outcome = run_filter(fleet, request, options, mask & consider)
        if reasons is not None:
            reasons.add_outcome(outcome)
        new = outcome.passing & ~passing
        if new.any():
            keys = np.where(new, host_keys(fleet, request, options, outcome.node_ok), keys)
            owner[new] = len(groups)
            passing |= new
        groups.append((request, outcome))
    hosts = np.flatnonzero(passing)
    primary = np.zeros(len(hosts), dtype=np.int64) if rank is None else rank[hosts]
    order = hosts[np.lexsort((keys[hosts], primary))]
    failures: dict[str, list[int]] = {}
    for best in order.tolist():
        if skip is not None and skip(best):
            continue
        request, outcome = groups[int(owner[best])]
        attempt = _attempt(fleet, best, request, outcome, options, instance)
        if isinstance(attempt, str | _Infeasible):
            if reasons is not None:  # naming an infeasible family costs a few more solves
                status = attempt if isinstance(attempt, str) else attempt.status()
                failures.setdefault(status, []).append(best)
            continue
        config, updated, detail = attempt
        lines = tuple(row.line() for row in detail)
        yield Fit(best, config, updated, lines, int(keys[best]) >> 32)
    for status, indices in failures.items():
        assert reasons is not None
        _add_solve_failures(reasons, fleet, indices, status)
