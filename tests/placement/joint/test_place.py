"""Joint placement of VNF templates and batches: backtracking, joint resources, diagnosis, modes."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm

import nfvplace
from nfvplace.claims import claim
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.configuration import VmConfiguration
from nfvplace.models.vmd import VmDescriptor
from nfvplace.models.vnf import VnfTemplate
from nfvplace.placement import (
    BatchItem,
    place,  # the engine door: these cases probe the engine, lint aside
)


def template(members: list[tuple[str, VmDescriptor, int]], **extra: Any) -> VnfTemplate:
    data: dict[str, Any] = {
        "schema": "nfvplace/vnf/v1",
        "name": "t",
        "members": [
            {"name": n, "descriptor": v.model_dump(by_alias=True), "count": c}
            for n, v, c in members
        ],
    }
    data.update(extra)
    return VnfTemplate.model_validate(data)


def claims_cleanly(
    hosts: list[ComputeHostDescriptor], configs: tuple[VmConfiguration, ...]
) -> None:
    """Claiming every configuration in turn on the hosts as given raises nothing (no resource twice)."""
    current = {h.id: h for h in hosts}
    for config in configs:
        current[config.host] = claim(current[config.host], config)


def sriov_vm(name: str, cores: int) -> VmDescriptor:
    nic = {"name": "fh", "mode": "sriov", "speed_gbps": 25, "bandwidth_gbps": 1}
    return vm(name, [cpu_set(0, 2 * cores, interfaces=(nic,))])


def test_large_member_placed_first_when_only_that_order_fits() -> None:
    # a: 8 cores, 2 used (the fuller host, so "pack" picks it first); b: 3 free cores
    hosts = [
        host("a", nodes=[NodeSpec(cores=8)], used={0: "x", 8: "x", 1: "x", 9: "x"}),
        host("b", nodes=[NodeSpec(cores=3)]),
    ]
    t = template(
        [("small", vm("small", [cpu_set(0, 4)]), 1), ("large", vm("large", [cpu_set(0, 10)]), 1)]
    )
    result = place(hosts, t)
    assert result.ok, result.diagnosis
    where = {c.vm: c.host for c in result.configurations}
    assert where == {"large": "a", "small": "b"}
    claims_cleanly(hosts, result.configurations)


def test_anti_affinity_pair_where_only_one_host_has_the_nic() -> None:
    # a has the only NIC and is the fuller host; the plain member must leave it to the NIC member
    hosts = [
        host("a", nodes=[NodeSpec(cores=4, ports=[PortSpec()])], used={0: "x", 4: "x"}),
        host("b", nodes=[NodeSpec(cores=4)]),
    ]
    t = template(
        [("plain", vm("plain", [cpu_set(0, 2)]), 1), ("io", sriov_vm("io", 1), 1)],
        anti_affinity=[{"members": ["plain", "io"]}],
    )
    result = place(hosts, t)
    assert result.ok, result.diagnosis
    assert {c.vm: c.host for c in result.configurations} == {"io": "a", "plain": "b"}


def test_two_members_on_one_host_get_distinct_resources() -> None:
    hosts = [host("a", nodes=[NodeSpec(cores=4, ports=[PortSpec(vfs=2)])])]
    t = template([("x", sriov_vm("x", 2), 1), ("y", sriov_vm("y", 2), 1)])
    result = place(hosts, t)
    assert result.ok
    claims_cleanly(hosts, result.configurations)
    vfs = [i.pci_address for c in result.configurations for i in c.interfaces]
    assert len(set(vfs)) == 2
    assert not place(hosts, template([("x", sriov_vm("x", 2), 3)])).ok


def test_numa_scope_anti_affinity_shares_a_host_not_a_node() -> None:
    hosts = [host("a", nodes=[NodeSpec(cores=4), NodeSpec(cores=4)])]
    small = vm("w", [cpu_set(0, 2)])
    apart = [{"members": ["w"], "scope": "numa_node"}]
    result = place(hosts, template([("w", small, 2)], anti_affinity=apart))
    assert result.ok
    assert sorted(c.cpu_sets[0].numa_node for c in result.configurations) == [0, 1]
    result = place(hosts, template([("w", small, 3)], anti_affinity=apart))
    assert not result.ok
    assert result.diagnosis is not None
    assert "member w instance" in result.diagnosis.summary
    assert "same anti-affinity group (numa_node)" in result.diagnosis.summary


def test_colocated_link_bandwidth_is_checked_on_the_vswitch() -> None:
    small = {"type": "ovs_dpdk", "bandwidth_gbps": 5, "bandwidth_used_gbps": 0}
    large = {"type": "ovs_dpdk", "bandwidth_gbps": 20, "bandwidth_used_gbps": 0}
    hosts = [host("a", vswitch=small), host("b", vswitch=large)]
    link = {
        "name": "f1",
        "endpoints": [{"member": "p", "interface": "x"}, {"member": "q", "interface": "y"}],
        "locality": "same_host",
        "bandwidth_gbps": 8,
    }
    t = template(
        [("p", vm("p", [cpu_set(0, 2)]), 1), ("q", vm("q", [cpu_set(0, 2)]), 1)], links=[link]
    )
    result = place(hosts, t)
    assert result.ok
    assert {c.host for c in result.configurations} == {"b"}
    too_much = template(
        [("p", vm("p", [cpu_set(0, 2)]), 1), ("q", vm("q", [cpu_set(0, 2)]), 1)],
        links=[{**link, "bandwidth_gbps": 30}],
    )
    failed = place(hosts, too_much)
    assert not failed.ok
    assert failed.diagnosis is not None
    assert "vSwitch bandwidth" in failed.diagnosis.summary


def test_impact_limit_counts_instances_of_the_same_batch() -> None:
    limited = vm("lim", [cpu_set(0, 2)], impact={"max_instances_per_host": 1})
    hosts = [host("a"), host("b")]
    result = place(hosts, limited, count=2)
    assert result.ok
    assert {c.host for c in result.configurations} == {"a", "b"}
    assert not place(hosts, limited, count=3).ok


def test_diagnosis_names_member_constraint_and_closest_hosts() -> None:
    hosts = [host("a", nodes=[NodeSpec(cores=4)]), host("b", nodes=[NodeSpec(cores=2)])]
    t = template(
        [("big", vm("big", [cpu_set(0, 6)]), 1), ("mid", vm("mid", [cpu_set(0, 6)]), 1)],
        anti_affinity=[{"members": ["big", "mid"]}],
    )
    result = place(hosts, t)
    assert not result.ok
    assert result.diagnosis is not None
    summary = result.diagnosis.summary
    assert summary.startswith("VNF t: member mid instance 1/1 does not fit (1 instances placed")
    assert "already host a member of the same anti-affinity group" in summary
    assert result.diagnosis.closest == ("a",)
    assert "closest: a (each takes mid on its own" in summary
    assert result.configurations == ()
    assert result.hosts == {}


def test_batch_and_max_mode() -> None:
    hosts = [host("a", nodes=[NodeSpec(cores=4)]), host("b", nodes=[NodeSpec(cores=4)])]
    two = vm("two", [cpu_set(0, 4)])  # 2 cores
    one = vm("one", [cpu_set(0, 2)])  # 1 core
    result = place(hosts, [BatchItem(two, 2), BatchItem(one, 4)])
    assert result.ok
    assert len(result.configurations) == 6
    assert all(c.instance and c.instance.startswith(c.vm) for c in result.configurations)
    claims_cleanly(hosts, result.configurations)
    over = place(hosts, [BatchItem(two, 3), BatchItem(one, 4)])
    assert not over.ok
    assert over.diagnosis is not None
    most = place(hosts, [BatchItem(two, 3), BatchItem(one, 4)], mode="max")
    assert most.ok
    assert len(most.configurations) + len(most.unplaced) == 7
    assert sum(len(c.held_cpus) for c in most.configurations) == 16  # every thread used
    assert most.unplaced
    assert all(u.reason.startswith("0/2 hosts fit") for u in most.unplaced)


def test_bad_mode_and_count() -> None:
    with pytest.raises(nfvplace.NfvplaceError, match="unknown mode"):
        place([host()], vm(), mode="some")
    with pytest.raises(nfvplace.NfvplaceError, match="count must be"):
        place([host()], vm(), count=0)


# --- completeness against a brute force ----------------------------------------------------------


def _fits_on_one_host(h: ComputeHostDescriptor, vms: list[VmDescriptor]) -> bool:
    for order in itertools.permutations(vms):
        current = h
        for k, v in enumerate(order):
            placed = place([current], v, instance=f"{v.name}-{k}")
            if not placed.ok:
                break
            current = placed.hosts[current.id]
        else:
            return True
    return False


def _brute_force(hosts: list[ComputeHostDescriptor], vms: list[VmDescriptor]) -> bool:
    for assignment in itertools.product(range(len(hosts)), repeat=len(vms)):
        if all(
            _fits_on_one_host(h, [v for v, a in zip(vms, assignment, strict=True) if a == i])
            for i, h in enumerate(hosts)
        ):
            return True
    return False


@pytest.mark.parametrize("seed", range(6))
def test_finds_an_assignment_whenever_the_brute_force_does(seed: int) -> None:
    rng = random.Random(seed)
    hosts = [
        host(
            f"h{i}",
            nodes=[NodeSpec(cores=rng.choice((2, 3, 4)), hugepages_1g=rng.choice((2, 4)))],
            smt=True,
        )
        for i in range(2)
    ]
    vms = [
        vm(f"v{k}", [cpu_set(0, 2 * rng.choice((1, 2, 3)), hugepages_1g=rng.choice((0, 1, 2)))])
        for k in range(3)
    ]
    expected = _brute_force(hosts, vms)
    result = place(hosts, vms)
    assert result.ok == expected
    if result.ok:
        claims_cleanly(hosts, result.configurations)
