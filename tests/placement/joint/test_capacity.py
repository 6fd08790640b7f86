"""What-if capacity: per-host counts equal a brute-force count of sequential placements."""

from __future__ import annotations

import random

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm

import nfvplace
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor


def brute_force(hosts: list[ComputeHostDescriptor], v: VmDescriptor) -> dict[str, int]:
    """Place instance after instance on the whole fleet until nothing fits; count per host."""
    current = list(hosts)
    counts: dict[str, int] = {}
    k = 0
    while True:
        k += 1
        result = nfvplace.place(current, v, instance=f"bf-{k}")
        if not result.ok:
            return counts
        (host_id, updated), *_ = result.hosts.items()
        counts[host_id] = counts.get(host_id, 0) + 1
        current = [updated if h.id == host_id else h for h in current]


def _random_fleet(rng: random.Random) -> list[ComputeHostDescriptor]:
    hosts = []
    for i in range(4):
        nodes = [
            NodeSpec(
                cores=rng.choice((2, 4, 6)),
                hugepages_1g=rng.choice((1, 4, 8)),
                ports=[PortSpec(vfs=rng.choice((1, 3)))] if rng.random() < 0.6 else [],
            )
            for _ in range(rng.choice((1, 2)))
        ]
        used = dict.fromkeys(rng.sample(range(4), rng.choice((0, 1, 2))), "x")
        hosts.append(host(f"h{i}", nodes=nodes, used=used))
    return hosts


def _random_vm(rng: random.Random) -> VmDescriptor:
    nic = {"name": "e0", "mode": "sriov", "speed_gbps": 10, "bandwidth_gbps": 1}
    return vm(
        "w",
        [
            cpu_set(
                0,
                rng.choice((1, 2, 3, 4)),
                pairs=rng.random() < 0.5,
                hugepages_1g=rng.choice((0, 1, 2)),
                interfaces=(nic,) if rng.random() < 0.5 else (),
                thread_policy=rng.choice((None, "prefer")),
            )
        ],
    )


@pytest.mark.parametrize("seed", range(8))
def test_counts_match_sequential_placements(seed: int) -> None:
    rng = random.Random(seed)
    hosts, v = _random_fleet(rng), _random_vm(rng)
    report = nfvplace.capacity(hosts, v)
    expected = brute_force(hosts, v)
    assert {h.host: h.count for h in report.hosts} == expected
    assert report.count == sum(expected.values())
    assert all(h.count > 0 and h.limited_by for h in report.hosts)


def test_limited_by_names_the_resource_that_runs_out() -> None:
    hosts = [
        host("cores", nodes=[NodeSpec(cores=4, hugepages_1g=16)]),
        host("pages", nodes=[NodeSpec(cores=16, hugepages_1g=2)]),
        host("vfs", nodes=[NodeSpec(cores=16, hugepages_1g=16, ports=[PortSpec(vfs=1)])]),
    ]
    nic = {"name": "e0", "mode": "sriov", "speed_gbps": 10, "bandwidth_gbps": 1}
    plain = vm("p", [cpu_set(0, 4, hugepages_1g=1)])
    report = nfvplace.capacity(hosts[:2], plain)
    assert report.to_dict() == {
        "vm": "p",
        "count": 4,
        "hosts": [
            {"host": "cores", "count": 2, "limited_by": "sibling pairs"},
            {"host": "pages", "count": 2, "limited_by": "hugepages"},
        ],
    }
    with_nic = vm("n", [cpu_set(0, 2, hugepages_1g=1, interfaces=(nic,))])
    (vfs,) = nfvplace.capacity(hosts, with_nic).hosts
    assert (vfs.host, vfs.count, vfs.limited_by) == ("vfs", 1, "VFs")


def test_capacity_claims_nothing_and_skips_hosts_that_take_none() -> None:
    hosts = [host("a"), host("b", nodes=[NodeSpec(cores=1)])]
    before = [h.model_copy(deep=True) for h in hosts]
    report = nfvplace.capacity(hosts, vm("big", [cpu_set(0, 6)]))
    assert [h.host for h in report.hosts] == ["a"]
    assert hosts == before
