"""The exact model on one host: counts per class, ports, and naming the family that blocks."""

from __future__ import annotations

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nics_model_reference import post_interfaces as plain_post_interfaces
from ortools.sat.python import cp_model
from test_differential import chds, vmds

from bench.hostgen import make_fleet, request_stream
from nfvplace.errors import NfvplaceError
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement.engine import solver as solver_module
from nfvplace.placement.engine.direct import NodePrices, direct_layout
from nfvplace.placement.engine.solver import SolveFailure, blame, build, solve
from nfvplace.placement.index import free_of
from nfvplace.placement.options import Options, Policy
from nfvplace.placement.request import Request, build_request
from nfvplace.placement.resources import nics as nics_module
from nfvplace.placement.resources.base import HostFree
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


class _OrToolsModel(cp_model.CpModel):
    """OR-Tools' own builder: `CpModel` less the pre-PEP 8 aliases, which add nothing to the
    proto. The engine's `_CpModel` makes its variables, linear constraints, implications and
    objective with less Python around the same calls, and must write what this writes."""

    def __init__(self) -> None:
        cp_model.cmh.CpBaseModel.__init__(self, None)  # type: ignore[attr-defined]


def _same_proto_both_ways(
    free: HostFree, request: Request, allowed: dict[int, set[int]], options: Options
) -> None:
    """The engine's build (through `_CpModel`, with the node costs the direct path worked out, and
    the NICs' part with its sums posted whole) writes the proto OR-Tools' own builder writes,
    pricing every node itself, from the NICs' part written plainly (`nics_model_reference.py`):
    CP-SAT answers the same proto the same way."""
    for optimize in (True, False):
        prices: NodePrices = {}
        direct_layout(free, request, allowed, options, optimize, prices)
        built = build(free, request, allowed, options, optimize=optimize, prices=prices)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(solver_module, "_CpModel", _OrToolsModel)
            patch.setattr(nics_module, "post_interfaces", plain_post_interfaces)
            reference = build(free, request, allowed, options, optimize=optimize)
        if built is None or reference is None:
            assert built is reference is None
            continue
        assert type(built.model) is not type(reference.model)
        assert str(built.model.proto) == str(reference.model.proto)


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
    allowed=st.lists(st.booleans(), min_size=1, max_size=4).filter(any),
)
def test_the_model_is_the_proto_or_tools_writes_on_fuzzed_hosts(
    h: ComputeHostDescriptor, descriptor: VmDescriptor, policy: str, allowed: list[bool]
) -> None:
    try:
        request = build_request(descriptor)
    except NfvplaceError:
        return  # nothing to model: the engine refuses it before the model
    free = free_of(h)
    nodes = {n for k, n in enumerate(free.node_ids) if allowed[k % len(allowed)]}
    _same_proto_both_ways(
        free, request, {cs.id: nodes for cs in request.cpu_sets}, Options(policy=Policy(policy))
    )


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
@given(seed=st.integers(0, 10**6), policy=st.sampled_from(["pack", "spread"]))
def test_the_model_is_the_proto_or_tools_writes_on_realistic_hosts(seed: int, policy: str) -> None:
    """`bench.hostgen`'s hosts (used up to 90 %) and its mix of VMs (the engine bench's)."""
    free = free_of(make_fleet(1, seed=seed, max_use=0.9)[0])
    request = build_request(request_stream(1, seed=seed)[0])
    allowed = {cs.id: set(free.node_ids) for cs in request.cpu_sets}
    _same_proto_both_ways(free, request, allowed, Options(policy=Policy(policy)))


def _sriov(name: str, gbps: float, network: str | None = None) -> dict[str, object]:
    iface: dict[str, object] = {"name": name, "mode": "sriov", "speed_gbps": 25}
    iface["bandwidth_gbps"] = gbps
    if network is not None:
        iface["physical_network"] = network
    return iface


@pytest.mark.parametrize(
    ("port", "interfaces", "takes"),
    [
        # 3 Gbps free on the port: the 1 Gbps interface fits, the 5 Gbps one of the same speed not
        (PortSpec(bandwidth_used=22), (_sriov("a", 1), _sriov("b", 5)), {"a"}),
        (PortSpec(bandwidth_used=22), (_sriov("b", 5), _sriov("a", 1)), {"a"}),
        # the same bandwidth at a higher speed than the port's
        (
            PortSpec(speed=10),
            (_sriov("a", 1), {**_sriov("b", 1), "speed_gbps": 10}),
            {"b"},
        ),
        # the same demand on another physical network
        (PortSpec(network="x"), (_sriov("a", 1, "x"), _sriov("b", 1, "y")), {"a"}),
        # the same speed given whole: not on a port whose VF is in use
        (
            PortSpec(vfs_used=1),
            (
                _sriov("a", 1),
                {"name": "d", "mode": "dedicated", "speed_gbps": 25, "bandwidth_gbps": 1},
            ),
            {"a"},
        ),
        # interfaces alike both take it (`port_takes` asked once for both)
        (PortSpec(), (_sriov("a", 1), _sriov("b", 1)), {"a", "b"}),
    ],
)
def test_interfaces_alike_in_all_but_one_field_take_the_ports_each_takes_alone(
    port: PortSpec, interfaces: tuple[dict[str, object], ...], takes: set[str]
) -> None:
    """The NICs' part asks `port_takes` once per port and demand: a demand differing from the
    last in one field it reads is asked again."""
    h = host(nodes=[NodeSpec(ports=[port]), NodeSpec()])
    request = build_request(vm(cpu_sets=[cpu_set(0, 2, interfaces=interfaces)]))
    free = free_of(h)
    allowed = {0: set(free.node_ids)}
    ctx = build(free, request, allowed, Options())
    assert ctx is not None
    assert {name for name, _ in ctx.read_back.get("nics", {})} == takes
    _same_proto_both_ways(free, request, allowed, Options())
