"""The exact model on one host: counts per class, ports, and naming the family that blocks."""

from __future__ import annotations

from builders import NodeSpec, PortSpec, cpu_set, host, vm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_differential import chds, vmds

from nfvplace.errors import NfvplaceError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement.engine.solver import SolveFailure, blame, build, solve
from nfvplace.placement.index import free_of
from nfvplace.placement.options import Options, Policy
from nfvplace.placement.request import build_request
from nfvplace.placement.resources.cpu.model import COUNTS
from nfvplace.placement.resources.model import Layout
from nfvplace.placement.resources.nics.assign import chosen_ports
from nfvplace.placement.resources.nics.model import PORT_CHOICES


def test_a_host_reserved_sibling_is_for_prefer_never_for_isolate() -> None:
    h = host(nodes=[NodeSpec(cores=4), NodeSpec(cores=0)], ineligible=(4,))  # PU 0's sibling
    request = build_request(vm(cpu_sets=[cpu_set(0, 1, pairs=False)]))
    layout = solve(free_of(h), request, {0: {0}}, Options())
    assert isinstance(layout, Layout)
    assert layout.nodes == {0: 0}
    assert layout.of(COUNTS)[("iso_w2", 0, 0)] == 1  # a whole core: PU 0 has a noisy sibling
    assert layout.optimal
    loose = build_request(vm(cpu_sets=[cpu_set(0, 1, pairs=False, thread_policy="prefer")]))
    layout = solve(free_of(h), loose, {0: {0}}, Options())
    assert isinstance(layout, Layout)
    assert layout.of(COUNTS)[("pre_half_busy", 0, 0)] == 1  # nothing stranded


def test_port_choice_and_blame() -> None:
    h = host(nodes=[NodeSpec(ports=[PortSpec(speed=100), PortSpec(speed=25)]), NodeSpec()])
    two = (
        {"name": "d", "mode": "dedicated", "speed_gbps": 25},
        {"name": "s", "mode": "sriov", "speed_gbps": 25, "bandwidth_gbps": 5},
    )
    request = build_request(vm(cpu_sets=[cpu_set(0, 2, interfaces=two)]))
    layout = solve(free_of(h), request, {0: {0}}, Options())
    assert isinstance(layout, Layout)
    assert (
        len(set(chosen_ports(layout.of(PORT_CHOICES)).values())) == 2
    )  # the whole port and the VF's port differ
    single = host(nodes=[NodeSpec(ports=[PortSpec(speed=25)]), NodeSpec()])
    view = free_of(single)
    failure = solve(view, request, {0: {0}}, Options())
    assert isinstance(failure, SolveFailure)
    assert failure.status == "infeasible"
    assert blame(view, request, {0: {0}}, Options()) == "nics"


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
@given(
    h=chds("h0"),
    descriptor=vmds(),
    policy=st.sampled_from(["pack", "spread", "least-fragmentation"]),
)
def test_a_verdict_is_the_best_layout_model_without_its_objective(
    h: ComputeHostDescriptor, descriptor: VmDescriptor, policy: str
) -> None:
    """A filter's verdict (`optimize=False`) collects no cost: its model must still be the best
    layout's model, constraint for constraint, with the objective left out, so that both find a
    layout on the same hosts."""
    try:
        request = build_request(descriptor)
    except NfvplaceError:
        return  # nothing to model: the engine refuses it before the model
    free = free_of(h)
    allowed = {cs.id: set(free.node_ids) for cs in request.cpu_sets}
    options = Options(policy=Policy(policy))
    best = build(free, request, allowed, options)
    verdict = build(free, request, allowed, options, optimize=False)
    if best is None or verdict is None:
        assert best is verdict is None
        return
    assert verdict.objective == {}
    best.model.proto.clear_objective()
    assert str(verdict.model.proto) == str(best.model.proto)
    found = solve(free, request, allowed, options, optimize=False)
    assert isinstance(found, Layout) == isinstance(solve(free, request, allowed, options), Layout)
