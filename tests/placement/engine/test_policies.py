"""Host keys: policy score in the high bits, a seeded tie-break in the low bits."""

from __future__ import annotations

import numpy as np
from builders import host, vm

from nfvplace.placement import FleetIndex
from nfvplace.placement.engine.policies import host_keys
from nfvplace.placement.options import parse_options
from nfvplace.placement.request import build_request


def test_keys_order_by_policy_and_are_seeded() -> None:
    fleet = FleetIndex([host("busy", used={0: "x", 8: "x", 1: "x", 9: "x"}), host("idle")])
    request = build_request(vm())
    ok = {0: fleet.node_id >= 0}
    pack = host_keys(fleet, request, parse_options(policy="pack"), ok)
    spread = host_keys(fleet, request, parse_options(policy="spread"), ok)
    assert int(np.argmin(pack)) == 0
    assert int(np.argmin(spread)) == 1
    same = host_keys(fleet, request, parse_options(policy="pack"), ok)
    assert (same == pack).all()
    other_seed = host_keys(fleet, request, parse_options(policy="pack", seed=3), ok)
    assert (other_seed >> 32 == pack >> 32).all()
    assert (other_seed != pack).any()
