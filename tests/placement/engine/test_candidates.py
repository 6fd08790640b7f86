"""Every fitting host in turn (`engine/candidates.py`): policy order, `rank_first` before it,
`skip` without solving, and only hosts that fit."""

from __future__ import annotations

import numpy as np
from builders import NodeSpec, host, vm

from nfvplace.placement import FleetIndex
from nfvplace.placement.engine.candidates import fitting_hosts
from nfvplace.placement.options import parse_options

BUSY = {0: "x", 8: "x", 1: "x", 9: "x"}  # two cores of node 0 used: the fuller host under pack


def _fleet() -> FleetIndex:
    return FleetIndex(
        [host("idle"), host("busy", used=BUSY), host("small", nodes=[NodeSpec(cores=1)] * 2)]
    )


def test_fitting_hosts_come_in_policy_order_and_only_those_that_fit() -> None:
    fleet = _fleet()
    everyone = np.ones(len(fleet), dtype=np.bool_)
    fits = list(fitting_hosts(fleet, vm(), parse_options(policy="pack"), everyone, "i"))
    assert [fleet.host_ids[f.position] for f in fits] == ["busy", "idle"]  # "small" has no 4 vCPUs
    assert fits[0].score <= fits[1].score
    spread = list(fitting_hosts(fleet, vm(), parse_options(policy="spread"), everyone, "i"))
    assert [fleet.host_ids[f.position] for f in spread] == ["idle", "busy"]


def test_rank_first_goes_before_the_policy_and_skip_solves_nothing() -> None:
    fleet = _fleet()
    everyone = np.ones(len(fleet), dtype=np.bool_)
    first = np.array([0, 1, 0])  # "idle" first whatever the policy says
    order = fitting_hosts(fleet, vm(), parse_options(), everyone, "i", rank_first=first)
    assert [fleet.host_ids[f.position] for f in order] == ["idle", "busy"]
    skipped: list[int] = []

    def skip(i: int) -> bool:
        skipped.append(i)
        return fleet.host_ids[i] == "busy"

    rest = list(fitting_hosts(fleet, vm(), parse_options(), everyone, "i", skip=skip))
    assert [fleet.host_ids[f.position] for f in rest] == ["idle"]
    assert sorted(fleet.host_ids[i] for i in skipped) == ["busy", "idle"]
