"""The node-count relaxation bounds every joint placement; mode="max" and its neighbourhood search
keep claims exact."""

from __future__ import annotations

import random

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm

import nfvplace
from nfvplace.claims import claim
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import BatchItem, FleetIndex
from nfvplace.placement.joint.batch import of_batch
from nfvplace.placement.joint.relaxation import relax, shapes
from nfvplace.placement.options import Options

NIC = {"name": "e0", "mode": "sriov", "speed_gbps": 10, "bandwidth_gbps": 4}


def _bound(hosts: list[ComputeHostDescriptor], batch: list[BatchItem]) -> int:
    result = relax(FleetIndex(hosts), of_batch(batch).members, Options())
    assert result.optimal
    return result.bound


def test_pairs_are_counted_per_numa_node() -> None:
    # 3 free cores on each of two nodes: two 2-pair VMs fit (one a node), not three, although the
    # host has 6 free cores in all
    hosts = [host("h", nodes=[NodeSpec(cores=3), NodeSpec(cores=3)])]
    assert _bound(hosts, [BatchItem(vm("w", [cpu_set(0, 4)]), 3)]) == 2


def test_port_bandwidth_bounds_sriov_interfaces() -> None:
    # 8 VFs but 10 Gbps: two 4 Gbps interfaces, not eight
    hosts = [host("h", nodes=[NodeSpec(cores=16, ports=[PortSpec(speed=10, vfs=8)])])]
    assert _bound(hosts, [BatchItem(vm("w", [cpu_set(0, 2, interfaces=(NIC,))]), 8)]) == 2


def test_vfs_and_bandwidth_are_counted_per_port() -> None:
    # one VF with 20 Gbps on one port, four VFs with 1 Gbps on the other: one 5 Gbps interface
    # fits, although the node has 5 VFs and 21 Gbps in all
    ports = [
        PortSpec(speed=25, vfs=2, vfs_used=1, usage="sriov", bandwidth_used=5),
        PortSpec(speed=25, vfs=5, vfs_used=1, usage="sriov", bandwidth_used=24),
    ]
    hosts = [host("h", nodes=[NodeSpec(cores=16, ports=ports)])]
    nic = {**NIC, "bandwidth_gbps": 5}
    assert _bound(hosts, [BatchItem(vm("w", [cpu_set(0, 2, interfaces=(nic,))]), 4)]) == 1


def test_an_isolated_vcpu_takes_a_whole_core_from_loose_threads() -> None:
    # two free cores: an isolated vCPU takes one, so with it at most two loose vCPUs fit
    hosts = [host("h", nodes=[NodeSpec(cores=2)])]
    isolated = vm("i", [cpu_set(0, 1, thread_policy="isolate")])
    loose = vm("p", [cpu_set(0, 1, thread_policy="prefer")])
    assert _bound(hosts, [BatchItem(isolated, 1), BatchItem(loose, 3)]) == 3


def test_members_alike_but_for_their_names_are_one_shape() -> None:
    a, b = vm("a", [cpu_set(0, 2)]), vm("b", [cpu_set(0, 2)])
    c = vm("c", [cpu_set(0, 4)])
    kinds, shape_of = shapes(of_batch([a, b, BatchItem(c, 2)]).members)
    assert [count for _, count in kinds] == [2, 2]
    assert shape_of == (0, 0, 1)


def _random(seed: int) -> tuple[list[ComputeHostDescriptor], list[VmDescriptor]]:
    rng = random.Random(seed)
    hosts = []
    for i in range(rng.choice((1, 2, 3))):
        nodes = [
            NodeSpec(
                cores=rng.choice((2, 3, 4)),
                hugepages_1g=rng.choice((2, 4)),
                ports=[PortSpec(speed=10, vfs=rng.choice((1, 2)))] if rng.random() < 0.5 else [],
            )
            for _ in range(rng.choice((1, 2)))
        ]
        hosts.append(host(f"h{i}", nodes=nodes))
    vms = []
    for k in range(rng.choice((3, 5, 8))):
        nic = (NIC,) if rng.random() < 0.3 else ()
        sets = [cpu_set(0, rng.choice((1, 2, 4)), hugepages_1g=rng.choice((0, 1)), interfaces=nic)]
        vms.append(vm(f"v{k}", sets))
    return hosts, vms


@pytest.mark.parametrize("seed", range(12))
def test_bound_holds_and_max_mode_claims_exactly(seed: int) -> None:
    hosts, vms = _random(seed)
    bound = _bound(hosts, [BatchItem(v) for v in vms])
    result = nfvplace.place(hosts, vms, mode="max", search_limit_s=1.0)
    placed = len(result.configurations)
    assert placed <= bound <= len(vms)
    # every instance claimed once on the hosts as given: the neighbourhood search's releases and
    # undos left nothing behind and nothing held twice
    current = {h.id: h for h in hosts}
    for config in result.configurations:
        current[config.host] = claim(current[config.host], config)
    assert {k: _canonical(current[k]) for k in result.hosts} == {
        k: _canonical(h) for k, h in result.hosts.items()
    }


def _canonical(h: ComputeHostDescriptor) -> ComputeHostDescriptor:
    """`h` with its instance list in id order (claims in another order list them so)."""
    return h.model_copy(update={"instances": tuple(sorted(h.instances, key=lambda i: i.id))})


def test_a_seed_always_gives_the_same_plan() -> None:
    hosts, vms = _random(3)
    members = of_batch([BatchItem(v) for v in vms]).members
    plans = [relax(FleetIndex(hosts), members, Options(), seed=1) for _ in range(3)]
    assert all(p.plan == plans[0].plan and p.nodes == plans[0].nodes for p in plans)


def test_a_shared_pool_too_uneven_for_one_instance_takes_none() -> None:
    # room for 3.9, 0.5, 0.5 and 0.5 vCPUs (5.4 in all): a 4-vCPU VM spread evenly over the m
    # roomiest PUs needs 4/m on each, and no m gives it (4 > 3.9, 2 > 0.5, 1.33 > 0.5, 1 > 0.5)
    pool = {0: (4.0, 0.025), 1: (1.0, 0.5), 2: (1.0, 0.5), 3: (1.0, 0.5)}
    hosts = [host("h", nodes=[NodeSpec(cores=4)], smt=False, shared=pool)]
    shared = vm("s", vcpus=4, memory_mib=512, cpu_oversubscription=True)
    assert _bound(hosts, [BatchItem(shared, 2)]) == 0
