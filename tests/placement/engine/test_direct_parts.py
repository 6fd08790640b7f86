"""Each kind's part of the direct path (`ModelDirect`) with the work it shares across a model's
assignments (`Assignment.memo`: what depends on the host, the request and the allowed nodes,
never on the nodes taken): the part is the one the kind answers for that assignment alone, in
whatever order the assignments are asked; and the NICs' part, interfaces with a NUMA affinity
included (restricted or not, to the nodes of a cpu-set or of a socket), is CP-SAT's."""

from __future__ import annotations

from typing import Any

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from engine.test_direct import EXAMPLES, POLICIES, agree
from hypothesis import given
from hypothesis import strategies as st
from test_differential import chds, vmds

from nfvplace.errors import NfvplaceError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import NumaAffinity, VmDescriptor
from nfvplace.placement.engine import direct
from nfvplace.placement.index import free_of
from nfvplace.placement.options import Options, Policy
from nfvplace.placement.request import build_request
from nfvplace.placement.resources.direct import Assignment, DirectPart, NoAnswer

AFFINITIES = st.sampled_from([None, *NumaAffinity])


@st.composite
def near_vmds(draw: st.DrawFn) -> VmDescriptor:
    """`vmds()` whose interfaces may name a NUMA affinity, and may not be bound to their
    cpu-set's node."""
    data: dict[str, Any] = draw(vmds()).model_dump(mode="json", by_alias=True, exclude_none=True)
    ifaces = [
        *data.get("interfaces", []),
        *(i for cs in data.get("cpu_sets", []) for i in cs.get("interfaces", [])),
    ]
    for iface in ifaces:
        if iface.get("mode") == "vswitch":
            continue
        if (affinity := draw(AFFINITIES)) is not None:
            iface["numa_affinity"] = affinity.value
        iface["restricted_to_topology"] = draw(st.booleans())
    return VmDescriptor.model_validate(data)


def _same_parts_both_ways(
    h: ComputeHostDescriptor,
    descriptor: VmDescriptor,
    policy: str,
    nodes: list[bool],
    backwards: bool,
) -> list[dict[str, DirectPart | NoAnswer]]:
    """Every kind's part of every assignment, asked with the model's memo (in the assignments'
    order, or backwards) and alone: the same. The parts asked, by kind, for the cases below."""
    try:
        request = build_request(descriptor)
    except NfvplaceError:
        return []
    if direct._kinds(request) is None or not request.cpu_sets:
        return []  # the kinds are not asked (`direct_layout`)
    free = free_of(h)
    ok = frozenset(n for k, n in enumerate(free.node_ids) if nodes[k % len(nodes)])
    frozen = {cs.id: ok for cs in request.cpu_sets}
    options = Options(policy=Policy(policy))
    parts: list[dict[str, DirectPart | NoAnswer]] = []
    for optimize in (True, False):
        memo: dict[str, object] = {direct.NODE_COSTS: {}}
        taken = list(direct._assignments(request, frozen, free.node_ids))
        for placed in reversed(taken) if backwards else taken:
            shared = Assignment(free, request, options, frozen, placed, optimize, memo)
            alone = Assignment(free, request, options, frozen, placed, optimize, {})
            asked = {kind.name: kind.direct(shared) for kind in direct._ASKED}
            assert asked == {kind.name: kind.direct(alone) for kind in direct._ASKED}, placed
            parts.append(asked)
    return parts


TWO_PORTS = [NodeSpec(ports=[PortSpec(vfs=2)]), NodeSpec(ports=[PortSpec(vfs=3, speed=10)])]
SRIOV = {"name": "e0", "mode": "sriov", "bandwidth_gbps": 2}
CASES = [
    (
        "a port on each node, an interface bound to its cpu-set",
        TWO_PORTS,
        [cpu_set(0, 2, interfaces=(SRIOV,))],
    ),
    (
        "two cpu-sets, each with its interface",
        TWO_PORTS,
        [
            cpu_set(0, 2, interfaces=(SRIOV,)),
            cpu_set(1, 2, first_vcpu=2, interfaces=({**SRIOV, "name": "e1"},)),
        ],
    ),
    (
        "two ports on one node",
        [NodeSpec(ports=[PortSpec(), PortSpec(vfs=1)]), NodeSpec()],
        [cpu_set(0, 2, interfaces=(SRIOV,))],
    ),
]


@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize(("nodes", "cpu_sets"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_nics_part_of_each_assignment_is_its_own(
    nodes: list[NodeSpec], cpu_sets: list[dict[str, Any]], backwards: bool
) -> None:
    """Assignments whose nodes leave the interfaces other ports get other parts, whichever is
    asked first (the parts differ: the memo keeps what depends on the nodes apart)."""
    h = host(nodes=nodes)
    parts = _same_parts_both_ways(h, vm(cpu_sets=cpu_sets), "pack", [True], backwards)
    nics = [repr(p["nics"]) for p in parts]
    assert len(set(nics)) > 1, nics


@EXAMPLES
@given(
    h=chds("h0"),
    descriptor=st.one_of(vmds(), near_vmds()),
    policy=POLICIES,
    allowed=st.lists(st.booleans(), min_size=1, max_size=3).filter(any),
    backwards=st.booleans(),
)
def test_a_kinds_part_with_the_models_memo_is_its_part_alone(
    h: ComputeHostDescriptor,
    descriptor: VmDescriptor,
    policy: str,
    allowed: list[bool],
    backwards: bool,
) -> None:
    _same_parts_both_ways(h, descriptor, policy, allowed, backwards)


@EXAMPLES
@given(
    h=chds("h0"),
    descriptor=near_vmds(),
    policy=POLICIES,
    allowed=st.lists(st.booleans(), min_size=1, max_size=3).filter(any),
)
def test_interfaces_near_the_vms_nodes_are_answered_as_cp_sat_does(
    h: ComputeHostDescriptor, descriptor: VmDescriptor, policy: str, allowed: list[bool]
) -> None:
    agree(free_of(h), descriptor, [int(a) for a in allowed], policy)
