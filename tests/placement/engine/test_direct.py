"""The exact model answered without CP-SAT (`engine/direct.py`): whenever it answers, the answer is
CP-SAT's, exactly: the same nodes, read-back values, costs and objective, in the same order (what
the ids, the explanation and the claim read), and the same verdict for a filter."""

from __future__ import annotations

import os
import random
from collections.abc import Hashable

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_differential import chds, vmds

from bench.hostgen import make_fleet, request_stream
from nfvplace.errors import NfvplaceError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement.engine import direct as direct_module
from nfvplace.placement.engine.direct import direct_layout
from nfvplace.placement.engine.solver import SolveFailure, solve, solve_model
from nfvplace.placement.index import free_of
from nfvplace.placement.options import Options, Policy
from nfvplace.placement.request import build_request
from nfvplace.placement.resources.base import HostFree
from nfvplace.placement.resources.direct import Assignment, NoAnswer
from nfvplace.placement.resources.model import Layout
from nfvplace.placement.resources.stages import ModelDirect

EXAMPLES = settings(
    max_examples=int(os.environ.get("NFVPLACE_DIRECT_EXAMPLES", "400")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
POLICIES = st.sampled_from(["pack", "spread", "least-fragmentation"])


def exactly(layout: Layout) -> tuple[object, ...]:
    """Everything a layout holds, orders included (the ids and the explanation iterate them)."""
    values: list[tuple[str, list[tuple[Hashable, int]]]] = [
        (kind, list(kept.items())) for kind, kept in layout.values.items()
    ]
    return (
        layout.host,
        list(layout.nodes.items()),
        values,
        list(layout.costs.items()),
        layout.objective,
        layout.optimal,
    )


def agree(free: HostFree, descriptor: VmDescriptor, allowed_nodes: list[int], policy: str) -> str:
    """Compare the direct answer with CP-SAT's on one host, for the best layout and the verdict;
    what the direct path said of the best layout ("direct", "infeasible" or "unsure")."""
    try:
        request = build_request(descriptor)
    except NfvplaceError:
        return "unsure"  # nothing to model: the engine refuses it before the model
    nodes = [n for k, n in enumerate(free.node_ids) if allowed_nodes[k % len(allowed_nodes)]]
    allowed = {cs.id: set(nodes) for cs in request.cpu_sets}
    options = Options(policy=Policy(policy))
    said = "unsure"
    for optimize in (True, False):
        direct = direct_layout(free, request, allowed, options, optimize)
        cp_sat = solve_model(free, request, allowed, options, optimize=optimize)
        why = f"optimize={optimize}: direct {direct}, CP-SAT {cp_sat}"
        if direct is NoAnswer.unsure:
            continue
        if optimize:  # what it said of the best layout (a verdict is answered more often)
            said = "infeasible" if direct is NoAnswer.infeasible else "direct"
        if direct is NoAnswer.infeasible:
            assert isinstance(cp_sat, SolveFailure), why
            assert cp_sat.status == "infeasible", why
        elif not optimize:
            assert isinstance(cp_sat, Layout), why  # a verdict: feasible both ways
            assert direct.nodes.keys() == cp_sat.nodes.keys(), why
        else:
            assert isinstance(cp_sat, Layout), why
            assert cp_sat.optimal, why
            assert exactly(direct) == exactly(cp_sat), why
        engine = solve(free, request, allowed, options, optimize=optimize)
        assert isinstance(engine, Layout) == isinstance(cp_sat, Layout), why
    return said


@EXAMPLES
@given(
    h=chds("h0"),
    descriptor=vmds(),
    policy=POLICIES,
    allowed=st.lists(st.booleans(), min_size=1, max_size=3).filter(any),
)
def test_the_direct_answer_is_cp_sats_on_fuzzed_hosts(
    h: ComputeHostDescriptor, descriptor: VmDescriptor, policy: str, allowed: list[bool]
) -> None:
    agree(free_of(h), descriptor, [int(a) for a in allowed], policy)


@EXAMPLES
@given(
    seed=st.integers(0, 10**6),
    policy=POLICIES,
    allowed=st.lists(st.booleans(), min_size=1, max_size=4).filter(any),
)
def test_the_direct_answer_is_cp_sats_on_realistic_hosts(
    seed: int, policy: str, allowed: list[bool]
) -> None:
    """`bench.hostgen`'s hosts (used up to 90 %) and its mix of VMs (the engine bench's)."""
    h = make_fleet(1, seed=seed, max_use=0.9)[0]
    vm = request_stream(1, seed=seed)[0]
    agree(free_of(h), vm, [int(a) for a in allowed], policy)


def test_the_direct_path_answers_most_of_the_mix() -> None:
    """Not a vacuous agreement: on the engine bench's hosts and mix, the direct path answers (a
    layout or infeasible) most models, and each answer is CP-SAT's."""
    rng = random.Random(7)
    hosts = make_fleet(60, seed=3, max_use=0.9)
    vms = request_stream(60, seed=4)
    said = [
        agree(free_of(h), vm, [1], rng.choice(["pack", "spread"]))
        for h, vm in zip(hosts, vms, strict=True)
    ]
    answered = sum(s != "unsure" for s in said)
    assert answered >= 0.5 * len(said), said


SRIOV_5G = ({"name": "e", "mode": "sriov", "speed_gbps": 25, "bandwidth_gbps": 5},)
CASES = [
    (  # the last free VF of a port strands its bandwidth: the two-VF port wins alone
        "strand",
        host(nodes=[NodeSpec(ports=[PortSpec(vfs=1), PortSpec(vfs=2)])]),
        vm(cpu_sets=[cpu_set(0, 2, interfaces=SRIOV_5G)]),
        "direct",
    ),
    (  # an isolated vCPU takes a whole core (a single-thread core is for hosts without SMT)
        "isolate",
        host(nodes=[NodeSpec(cores=4)]),
        vm(cpu_sets=[cpu_set(0, 3, pairs=True)]),
        "direct",
    ),
    (  # each cpu-set's pages fit the one node alone, not both together
        "pages together",
        host(nodes=[NodeSpec(cores=8, hugepages_1g=3)]),
        vm(
            cpu_sets=[
                cpu_set(0, 2, memory_mib=2048, hugepages_1g=2),
                cpu_set(1, 2, first_vcpu=2, memory_mib=2048, hugepages_1g=2),
            ],
            cpu_sets_may_share_node=True,
        ),
        "infeasible",
    ),
]


@pytest.mark.parametrize(
    ("h", "descriptor", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_direct_path_answers_these_cases(
    h: ComputeHostDescriptor, descriptor: VmDescriptor, expected: str
) -> None:
    """Cases where one limit or cost alone decides: the direct path must answer them itself,
    as CP-SAT does."""
    free = free_of(h)
    assert agree(free, descriptor, [1], "pack") == expected


def test_two_assignments_at_the_lowest_node_cost_go_to_cp_sat_unasked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two identical nodes price one cpu-set the same: the best layout is left to CP-SAT before
    any kind is asked (their layouts almost always tie); a verdict is still answered directly,
    and CP-SAT's best layout is the engine's."""
    free = free_of(host(nodes=[NodeSpec(cores=4), NodeSpec(cores=4)]))
    request = build_request(vm(cpu_sets=[cpu_set(0, 2)]))
    allowed = {0: set(free.node_ids)}
    options = Options(policy=Policy.pack)
    asked: list[dict[int, int]] = []
    ask = direct_module._ask

    def counted(a: Assignment, kinds: tuple[ModelDirect, ...]) -> object:
        asked.append(dict(a.nodes))
        return ask(a, kinds)

    monkeypatch.setattr(direct_module, "_ask", counted)
    assert direct_layout(free, request, allowed, options, True) is NoAnswer.unsure
    assert asked == []
    assert isinstance(direct_layout(free, request, allowed, options, False), Layout)
    assert asked == [{0: free.node_ids[0]}]
    engine = solve(free, request, allowed, options)
    cp_sat = solve_model(free, request, allowed, options)
    assert isinstance(engine, Layout)
    assert isinstance(cp_sat, Layout)
    assert exactly(engine) == exactly(cp_sat)


@pytest.mark.parametrize(("policy", "made"), [("pack", 0), ("spread", 2)])
def test_a_tie_of_node_costs_is_found_from_the_prices_before_any_assignment_is_made(
    monkeypatch: pytest.MonkeyPatch, policy: str, made: int
) -> None:
    """Two alike cpu-sets on two alike nodes (distinct nodes, so two assignments): under `pack`
    every node is priced once for each cpu-set (the prices CP-SAT's build is given) and the tie
    found from them, no `Assignment` made; `spread` has no early exit and makes both."""
    free = free_of(host(nodes=[NodeSpec(cores=4), NodeSpec(cores=4)]))
    request = build_request(vm(cpu_sets=[cpu_set(0, 2), cpu_set(1, 2, first_vcpu=2)]))
    allowed = {0: set(free.node_ids), 1: set(free.node_ids)}
    assignments: list[Assignment] = []

    def making(*args: object) -> Assignment:
        assignments.append(Assignment(*args))  # type: ignore[arg-type]
        return assignments[-1]

    monkeypatch.setattr(direct_module, "Assignment", making)
    prices: direct_module.NodePrices = {}
    found = direct_layout(free, request, allowed, Options(policy=Policy(policy)), True, prices)
    assert len(assignments) == made
    if made == 0:
        assert found is NoAnswer.unsure
        assert set(prices) == {(cs, node) for cs in (0, 1) for node in free.node_ids}
        assert len(set(prices.values())) == 1


def test_one_node_cheaper_than_the_other_is_still_answered_directly() -> None:
    """The early exit only takes ties of the node cost: the node with a core in use is the
    fuller one, wins under `pack` on its own, and the direct path answers, as CP-SAT does."""
    h = host(nodes=[NodeSpec(cores=4), NodeSpec(cores=4)], used={4: "x", 12: "x"})
    assert agree(free_of(h), vm(cpu_sets=[cpu_set(0, 2)]), [1], "pack") == "direct"
