"""The attempt stage (`engine/attempt.py`) on its own: one host that passed the filter, through the
kinds' decisions, the exact model, the assignment and the claim."""

from __future__ import annotations

import numpy as np
from builders import NodeSpec, cpu_set, host, vm

from nfvplace.placement import FleetIndex
from nfvplace.placement.engine.attempt import Claimed, Infeasible, attempt
from nfvplace.placement.engine.filter import run_filter
from nfvplace.placement.options import parse_options
from nfvplace.placement.request import build_request


def _attempt(chd, descriptor):  # type: ignore[no-untyped-def]
    fleet = FleetIndex([chd])
    request = build_request(descriptor)
    options = parse_options()
    outcome = run_filter(fleet, request, options, np.ones(1, dtype=np.bool_))
    assert outcome.passing.all()
    return attempt(fleet, 0, request, outcome, options, "vm-1")


def test_a_host_that_fits_is_claimed_with_its_configuration() -> None:
    chd = host()
    got = _attempt(chd, vm(cpu_sets=[cpu_set(0, 4)]))
    assert isinstance(got, Claimed)
    assert got.configuration.instance == "vm-1"
    pinned = set(got.configuration.cpu_sets[0].vcpu_pins.values())
    owned = {c.id for c in got.host.cpus if c.owner == "vm-1"}
    assert pinned <= owned
    assert got.rows  # what the exact model chose, for --explain


def test_counts_that_pass_but_do_not_fit_together_are_infeasible_and_name_the_blocker() -> None:
    # each cpu-set fits on the node alone, not both: the filter counts one part at a time
    chd = host(nodes=[NodeSpec(cores=3), NodeSpec(cores=0)])
    two = vm(cpu_sets=[cpu_set(0, 4), cpu_set(1, 4, first_vcpu=4)], cpu_sets_may_share_node=True)
    got = _attempt(chd, two)
    assert isinstance(got, Infeasible)
    refusal = got.refusal()
    assert refusal.reason.value == "infeasible"
    assert "free cores" in refusal.phrase
