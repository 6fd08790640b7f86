"""One VM, filtered in policy order a batch of hosts at a time: the same host as `place_vm`, found
without filtering every host of a large fleet.

`place_vm` filters every host, keys the hosts that pass by the policy, and tries them in key order
until one fits. Under `pack` and `spread` a host's key reads the index alone (not which of its nodes
the filter lets the VM use), so every host's key is known before the filter; and a host passes the
filter or not on its own row. So: take the considered hosts of lowest keys (a batch), filter those
rows, try the ones that pass in key order; if none fits, take the next batch (each larger), and so on.
The first host that fits is the one `place_vm` finds, with the same configuration: hosts are tried in
the same order (key, then position), through the same `attempt`. At the 50th percentile of a
realistic stream the chosen host is among the 25 of lowest key out of 10,000.

What this does not give is the account of every host that was not chosen, which only a full pass
gives: when no host fits (or `explain`, `max_candidates`, variants, or a policy whose key reads the
filter's nodes is asked) the caller runs `place_vm`, whose diagnosis names every host.
"""

from __future__ import annotations

import numpy as np

from ...models.vmd import VmDescriptor
from ..index import FleetIndex
from ..index.rows import FleetRows
from ..options import Options
from ..request import build_request
from ..resources.base import BoolArray, IntArray
from .attempt import Claimed, allowed_nodes, attempt_on
from .explain import Reasons
from .filter import run_filter
from .place import VmOutcome
from .policies import POLICIES, host_keys

FIRST = 128
"""Hosts in the first batch; each next batch is `GROWTH` times larger."""
GROWTH = 4


def applies(vm: VmDescriptor, options: Options) -> bool:
    """Whether `place_first` can find the host (else only `place_vm`'s full pass says)."""
    return (
        not vm.variants
        and not options.explain
        and options.max_candidates is None
        and not POLICIES[options.policy].keys_read_nodes
    )


def place_first(
    fleet: FleetIndex,
    vm: VmDescriptor,
    options: Options,
    consider: BoolArray | None,
    instance: str | None,
) -> VmOutcome | None:
    """The configuration and host `place_vm` gives when some host fits (`applies` must hold);
    None when none fits. The outcome counts the hosts considered, and as passed the hosts of the
    batches filtered that passed (not every host that would)."""
    request = build_request(vm, None)
    keys = host_keys(fleet, request, options, {})
    left: IntArray = np.arange(len(fleet)) if consider is None else np.flatnonzero(consider)
    considered, passed = len(left), 0
    size = FIRST
    while len(left):
        batch, left = _lowest(keys, left, size)
        rows = FleetRows(fleet, batch)
        outcome = run_filter(rows, request, options, np.ones(len(batch), dtype=np.bool_))
        passing = np.flatnonzero(outcome.passing).tolist()
        passed += len(passing)
        for r in passing:
            position = int(batch[r])
            allowed = allowed_nodes(rows, r, outcome)
            result = attempt_on(fleet, position, request, allowed, options, instance)
            if isinstance(result, Claimed):
                return VmOutcome(result.configuration, result.host, Reasons(), considered, passed)
        size *= GROWTH
    return None


def _lowest(keys: IntArray, hosts: IntArray, size: int) -> tuple[IntArray, IntArray]:
    """The hosts of `hosts` with the `size` lowest keys (and every host tying the last), in key
    then position order; and the others. Keys within a batch are all below the others' keys."""
    if len(hosts) > size:
        mine = keys[hosts]
        bound = np.partition(mine, size - 1)[size - 1]
        take = mine <= bound
        batch, rest = hosts[take], hosts[~take]
    else:
        batch, rest = hosts, hosts[:0]
    return batch[np.lexsort((batch, keys[batch]))], rest
