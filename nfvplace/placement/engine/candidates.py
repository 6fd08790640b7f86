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

from ...models.chd import ComputeHostDescriptor
from ...models.configuration import VmConfiguration
from ...models.vmd import VmDescriptor
from ..index import FleetIndex
from ..options import Options
from ..resources.base import BoolArray, IntArray
from .attempt import Claimed, Infeasible, Refused, attempt
from .explain import Reasons
from .place import NO_KEY, add_failures, rank


@dataclass(frozen=True, slots=True)
class Fit:
    position: int  # the host's position in the fleet index
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
    rank_first: IntArray | None = None,
    skip: Callable[[int], bool] | None = None,
) -> Iterator[Fit]:
    """Hosts of `consider` that take `vm`, in policy order (hosts with a lower `rank_first` come
    first); `skip(i)` leaves host i out without solving (a host known to lead nowhere)."""
    ranked = rank(fleet, vm, options, consider, reasons if reasons is not None else Reasons())
    hosts = np.flatnonzero(ranked.keys != NO_KEY)
    primary = np.zeros(len(hosts), dtype=np.int64) if rank_first is None else rank_first[hosts]
    order = hosts[np.lexsort((ranked.keys[hosts], primary))]
    failures: list[tuple[int, Refused | Infeasible]] = []
    for best in order.tolist():
        if skip is not None and skip(best):
            continue
        request, outcome = ranked.groups[int(ranked.owner[best])]
        result = attempt(fleet, best, request, outcome, options, instance)
        if not isinstance(result, Claimed):
            if reasons is not None:  # naming an infeasible family costs a few more solves
                failures.append((best, result))
            continue
        lines = tuple(row.line() for row in result.rows)
        score = int(ranked.keys[best]) >> 32
        yield Fit(best, result.configuration, result.host, lines, score)
    if reasons is not None:
        add_failures(reasons, fleet, failures)
