"""Ports and VFs: which port and which VF the engine takes, and what it keeps usable for later."""

from __future__ import annotations

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from constraint_cases import Case, check
from hypothesis import given, settings
from hypothesis import strategies as st

import nfvplace
from bench.hostgen import make_fleet
from nfvplace.models.chd import ComputeHostDescriptor, NumaNode, PortUsage
from nfvplace.placement import FleetIndex
from nfvplace.placement.joint.capacity import count_on_host
from nfvplace.placement.options import Options
from nfvplace.placement.request import build_request
from nfvplace.placement.resources.nics import NICS, match_vfs
from nfvplace.placement.resources.nics.ports import node_ports, node_ports_again
from nfvplace.placement.resources.scoring import KEEP_VF, PORT_KEEP


def _sriov(name: str, gbps: float, speed: float = 10) -> dict[str, object]:
    return {"name": name, "mode": "sriov", "speed_gbps": speed, "bandwidth_gbps": gbps}


def _paced(h: ComputeHostDescriptor, rates: list[float | None]) -> ComputeHostDescriptor:
    data = h.model_dump(mode="json")
    vfs = data["numa_nodes"][0]["nics"][0]["ports"][0]["vfs"]
    for vf, rate in zip(vfs, rates, strict=True):
        vf["rate_gbps"] = rate
    return ComputeHostDescriptor.model_validate(data)


def test_last_vf_of_a_port_with_a_sliver_of_bandwidth_left() -> None:
    # 0.1 Gbps free and one VF: an interface asking no bandwidth takes it (its leftover is
    # stranded, a cost, never a reason to refuse)
    h = host(
        "h",
        nodes=[
            NodeSpec(
                cores=2,
                ports=[PortSpec(speed=10, vfs=2, vfs_used=1, usage="sriov", bandwidth_used=9.9)],
            )
        ],
    )
    result = nfvplace.place(
        [h], vm("w", vcpus=1, memory_mib=256, interfaces=[{"name": "t0", "mode": "sriov"}])
    )
    assert result.ok, result.diagnosis


def test_a_paced_vf_never_serves_a_wider_interface() -> None:
    h = _paced(host("h", nodes=[NodeSpec(cores=2, ports=[PortSpec(speed=25, vfs=2)])]), [1.0, None])
    result = nfvplace.place([h], vm("w", [cpu_set(0, 2, interfaces=(_sriov("e0", 5),))]))
    (config,) = result.configurations
    (iface,) = config.interfaces
    vfs = h.numa_nodes[0].nics[0].ports[0].vfs
    assert iface.pci_address == vfs[1].pci_address  # the unpaced one, not the first free one


def test_equal_slack_keeps_a_vf_where_bandwidth_is_left() -> None:
    # one port with 1 free VF and one with 3, 20 Gbps free each: the 10 Gbps interface on the
    # one-VF port strands 10 Gbps, the 5 Gbps one 15; only the first leaves room for a second VM
    h = host(
        "h",
        nodes=[
            NodeSpec(
                cores=6,
                ports=[
                    PortSpec(speed=25, vfs=2, vfs_used=1, usage="sriov", bandwidth_used=5),
                    PortSpec(speed=25, vfs=4, vfs_used=1, usage="sriov", bandwidth_used=5),
                ],
            )
        ],
    )
    v = vm("w", [cpu_set(0, 2, interfaces=(_sriov("e0", 10), _sriov("e1", 5)))])
    assert count_on_host(h, v, Options())[0] == 2


def test_pack_puts_one_vms_interfaces_on_one_port() -> None:
    h = host(
        "h", nodes=[NodeSpec(cores=4, ports=[PortSpec(speed=25, vfs=4), PortSpec(speed=25, vfs=4)])]
    )
    packed = nfvplace.place(
        [h], vm("w", [cpu_set(0, 2, interfaces=(_sriov("a", 10), _sriov("b", 2)))])
    )
    spread = nfvplace.place(
        [h], vm("w", [cpu_set(0, 2, interfaces=(_sriov("a", 10), _sriov("b", 2)))]), policy="spread"
    )
    (one,), (two,) = packed.configurations, spread.configurations
    assert len({i.physical_function for i in one.interfaces}) == 1
    assert len({i.physical_function for i in two.interfaces}) == 2


@pytest.mark.parametrize(
    ("rates", "needs", "expected"),
    [
        ([None, 1_000_000], [500_000], [1]),  # the VF paced closest above, the unpaced one kept
        ([5_000_000, 1_000_000], [1_000_000, 5_000_000], [1, 0]),  # widest first: both fit
        ([1_000_000, 1_000_000], [5_000_000], None),  # paced below the demand
        ([None], [1, 1], None),  # more demands than VFs
    ],
)
def test_match_vfs(rates: list[int | None], needs: list[int], expected: list[int] | None) -> None:
    assert match_vfs(rates, needs) == expected


def test_an_interface_that_asks_no_speed_names_no_speed() -> None:
    hosts = [host("h", [NodeSpec(ports=[PortSpec(speed=25, vfs=0)])])]
    wanted = vm(cpu_sets=[cpu_set(0, 2, interfaces=({"name": "e0", "mode": "sriov"},))])
    result = nfvplace.place(hosts, wanted)
    assert result.diagnosis is not None
    assert "lack a free VF on a port" in result.diagnosis.summary
    assert "0 Gbps" not in result.diagnosis.summary


SRIOV = {"name": "eth0", "mode": "sriov", "speed_gbps": 25, "bandwidth_gbps": 10}
DEDICATED = {"name": "eth1", "mode": "dedicated", "speed_gbps": 25}
NICS_CASES = [
    Case(
        "VF on the cpu-set's node",
        [host(nodes=[NodeSpec(), NodeSpec(ports=[PortSpec(speed=25)])])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(SRIOV,))]),
        node=1,
    ),
    Case(
        "no port fast enough",
        [host(nodes=[NodeSpec(ports=[PortSpec(speed=10)]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(SRIOV,))]),
        "sriov_vf",
        summary="0/1 hosts fit: 1 lack a free VF on a ≥ 25 Gbps port",
    ),
    Case(
        "all VFs in use",
        [host(nodes=[NodeSpec(ports=[PortSpec(vfs=2, vfs_used=2)]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(SRIOV,))]),
        "sriov_vf",
    ),
    Case(
        "port bandwidth used up",
        [host(nodes=[NodeSpec(ports=[PortSpec(bandwidth_used=20)]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(SRIOV,))]),
        "sriov_bandwidth",
        1,
        5,
    ),
    Case(  # an interface of the VM (no cpu-set): the host-level check, its figure in Gbps too
        "port bandwidth used up, a VM-level interface",
        [host(nodes=[NodeSpec(ports=[PortSpec(bandwidth_used=20)]), NodeSpec()])],
        vm(vcpus=2, memory_mib=256, interfaces=[SRIOV]),
        "sriov_bandwidth",
        None,
        5,
    ),
    Case(
        "dedicated port fits",
        [host(nodes=[NodeSpec(ports=[PortSpec(speed=100)]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(DEDICATED,))]),
        node=0,
    ),
    Case(
        "dedicated port already shared by VFs",
        [host(nodes=[NodeSpec(ports=[PortSpec(usage="sriov", vfs_used=1)]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(DEDICATED,))]),
        "dedicated_port",
    ),
    Case(
        "dedicated and VF cannot share one port",
        [host(nodes=[NodeSpec(ports=[PortSpec()]), NodeSpec()])],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=(DEDICATED, SRIOV))]),
        "infeasible",
        summary="fail the exact check on ports and VFs",
    ),
    Case(
        "vswitch missing",
        [host()],
        vm(cpu_sets=[cpu_set(0, 2, interfaces=({"name": "v0", "mode": "vswitch"},))]),
        "vswitch",
    ),
    Case(
        "vswitch not accelerated",
        [host(vswitch={"type": "ovs", "accelerated": False})],
        vm(
            cpu_sets=[cpu_set(0, 2, interfaces=({"name": "v0", "mode": "vswitch"},))],
            hypervisor={"vswitch": {"accelerated": True}},
        ),
        "vswitch_acceleration",
    ),
    Case(
        "vswitch accelerated with bandwidth",
        [host(vswitch={"type": "ovs_dpdk", "accelerated": True, "bandwidth_gbps": 40})],
        vm(
            cpu_sets=[
                cpu_set(0, 2, interfaces=({"name": "v0", "mode": "vswitch", "bandwidth_gbps": 10},))
            ],
            hypervisor={"vswitch": {"accelerated": True}},
        ),
    ),
    Case(
        "vswitch bandwidth short",
        [host(vswitch={"type": "ovs_dpdk", "accelerated": True, "bandwidth_gbps": 5})],
        vm(
            cpu_sets=[
                cpu_set(0, 2, interfaces=({"name": "v0", "mode": "vswitch", "bandwidth_gbps": 10},))
            ]
        ),
        "vswitch_bandwidth",
        10,
        5,
    ),
    Case(
        "unrestricted interface anywhere",
        [host(nodes=[NodeSpec(), NodeSpec(ports=[PortSpec()])])],
        vm(cpu_sets=[cpu_set(0, 2)], interfaces=[SRIOV]),
        node=0,
    ),
]


@pytest.mark.parametrize("case", NICS_CASES, ids=[c.name for c in NICS_CASES])
def test_nics_cases(case: Case) -> None:
    check(case)


# --- its measures for the policies (resources/scoring.py) ---------------------------------------


def test_free_vfs_and_ports_are_kept_for_vms_that_need_them() -> None:
    fleet = FleetIndex([host(nodes=[NodeSpec(ports=[PortSpec(vfs=4)]), NodeSpec()])])
    table = fleet.table(NICS)
    needing = build_request(vm(cpu_sets=[cpu_set(0, 2, interfaces=(SRIOV,))]))
    assert NICS.kept(table, needing) is None
    kept = NICS.kept(table, build_request(vm()))
    assert kept is not None
    assert (kept.weight, int(kept.count[0])) == (KEEP_VF, int(table.nic_free[0]))


def test_a_node_keeps_its_usable_ports_for_cpu_sets_that_need_them() -> None:
    fleet = FleetIndex([host(nodes=[NodeSpec(ports=[PortSpec(), PortSpec()]), NodeSpec()])])
    free = fleet.free(0).of(NICS)
    plain = build_request(vm())
    assert NICS.node_kept(free, 0, plain, plain.cpu_sets[0]) == 2 * PORT_KEEP
    assert NICS.node_kept(free, 1, plain, plain.cpu_sets[0]) == 0
    needing = build_request(vm(cpu_sets=[cpu_set(0, 2, interfaces=(SRIOV,))]))
    assert NICS.node_kept(free, 0, needing, needing.cpu_sets[0]) == 0


_NIC_NODES = [node for h in make_fleet(16, seed=5) for node in h.numa_nodes if node.nics]
_PORT_CHANGES = st.sampled_from(
    [
        {"bandwidth_used_gbps": 1.5},
        {"usage": PortUsage.dedicated, "owner": "vm"},
        {"usage": PortUsage.sriov},
        {"eligible": False},
        {"vfs": ()},
        {"first_vf_in_use": True},
    ]
)


def _with_ports_changed(
    node: NumaNode, changes: dict[tuple[int, int], dict[str, object]]
) -> NumaNode:
    nics = list(node.nics)
    for (k, j), change in changes.items():
        if k >= len(nics) or j >= len(nics[k].ports):
            continue
        port = nics[k].ports[j]
        update = dict(change)
        if update.pop("first_vf_in_use", False) and port.vfs:
            update["vfs"] = (port.vfs[0].model_copy(update={"in_use": True}), *port.vfs[1:])
        ports = list(nics[k].ports)
        ports[j] = port.model_copy(update=update)
        nics[k] = nics[k].model_copy(update={"ports": tuple(ports)})
    return node.model_copy(update={"nics": tuple(nics)})


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(_NIC_NODES),
    st.dictionaries(st.tuples(st.integers(0, 2), st.integers(0, 3)), _PORT_CHANGES, max_size=3),
    st.dictionaries(st.tuples(st.integers(0, 2), st.integers(0, 3)), _PORT_CHANGES, max_size=2),
)
def test_a_nodes_ports_read_again_after_a_change_are_the_ports_read_afresh(
    node: NumaNode,
    first: dict[tuple[int, int], dict[str, object]],
    then: dict[tuple[int, int], dict[str, object]],
) -> None:
    """`node_ports_again` keeps the entries of the NICs and ports that are the same objects and
    reads the others: the same ports and PCIe budgets as reading the new node afresh."""
    old = _with_ports_changed(node, first)
    new = _with_ports_changed(old, then)
    again = node_ports_again(new, old, node_ports(old))
    assert again == node_ports(new)
    assert list(again.nic_free_kbps) == list(node_ports(new).nic_free_kbps)
