"""The policies (`engine/policies/`): host keys (the score in the high bits, a seeded tie-break in
the low bits), the score in words, and the node costs of the exact model."""

from __future__ import annotations

import numpy as np
import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm

from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import FleetIndex
from nfvplace.placement.engine.policies import (
    NODE_COST,
    POLICIES,
    POLICY_SCORES,
    host_keys,
    node_cost,
    score_terms,
)
from nfvplace.placement.options import Policy, parse_options
from nfvplace.placement.request import build_request
from nfvplace.placement.resources.scoring import PORT_KEEP

VF = {"name": "eth0", "mode": "sriov", "speed_gbps": 25}


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


@pytest.mark.parametrize("policy", ["pack", "spread"])
@pytest.mark.parametrize(
    "descriptor",
    [
        vm(),
        vm(cpu_sets=[cpu_set(0, 2, pairs=False)]),
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(VF,))]),
    ],
    ids=["pairs", "no pairs", "a VF"],
)
def test_the_score_in_words_adds_up_to_the_score_ranked_by(
    policy: str, descriptor: VmDescriptor
) -> None:
    fleet = FleetIndex(
        [
            host("busy", used={0: "x", 8: "x"}, nodes=[NodeSpec(ports=[PortSpec()]), NodeSpec()]),
            host("idle", smt=False),
        ]
    )
    request = build_request(descriptor)
    options = parse_options(policy=policy)
    keys = host_keys(fleet, request, options, {0: fleet.node_id >= 0})
    for i in range(len(fleet)):
        terms = score_terms(fleet, i, request, options)
        assert sum(points for _, points, _ in terms) == int(keys[i]) >> 32


def test_each_policy_has_a_module_a_score_and_a_node_cost_in_words() -> None:
    assert set(POLICIES) == set(Policy)
    assert set(POLICY_SCORES) == {p.value for p in Policy}
    for policy in Policy:
        assert f"{policy.value}: " in NODE_COST


@pytest.mark.parametrize(
    ("policy", "costs"),
    [
        # pack: percent of free threads + percent of free normal memory (+ ports kept)
        ("pack", (75 + 100 + PORT_KEEP, 100 + 100)),
        ("spread", (-6, -8)),  # minus the free threads
        ("least-fragmentation", (4 + PORT_KEEP, 6)),  # threads left beyond the cpu-set's 2
    ],
)
def test_node_costs_per_policy(policy: str, costs: tuple[int, int]) -> None:
    fleet = FleetIndex(
        [host(used={0: "x", 8: "x"}, nodes=[NodeSpec(ports=[PortSpec()]), NodeSpec()])]
    )
    request = build_request(vm(cpu_sets=[cpu_set(0, 2)]))
    free, cs = fleet.free(0), request.cpu_sets[0]
    options = parse_options(policy=policy)
    assert tuple(node_cost(free, slot, cs, request, options) for slot in (0, 1)) == costs
