"""Clause 8 fields that act on placement: NUMA distances rank, VF pacing and NIC PCIe budgets
constrain (smallest cases)."""

from __future__ import annotations

from builders import NodeSpec, PortSpec, cpu_set, host, vm
from checker import violations

import nfvplace
from nfvplace.models.chd import ComputeHostDescriptor


def _with_nic(h: ComputeHostDescriptor, node: int = 0, **nic: object) -> ComputeHostDescriptor:
    nodes = list(h.numa_nodes)
    first = nodes[node].nics[0].model_copy(update=nic)
    nodes[node] = nodes[node].model_copy(update={"nics": (first, *nodes[node].nics[1:])})
    return h.model_copy(update={"numa_nodes": tuple(nodes)})


def _pace_vfs(h: ComputeHostDescriptor, rate: float) -> ComputeHostDescriptor:
    node = h.numa_nodes[0]
    port = node.nics[0].ports[0]
    vfs = tuple(vf.model_copy(update={"rate_gbps": rate}) for vf in port.vfs)
    return _with_nic(h, ports=(port.model_copy(update={"vfs": vfs}),))


def test_numa_distance_ranks_the_nearer_pair_of_nodes() -> None:
    # nodes 0 and 1 are fuller (pack's favourites) but 32 apart; node 2 is at 21 from node 0
    used = {0: "x", 12: "x", 4: "x", 16: "x"}
    h = host(nodes=[NodeSpec(cores=4), NodeSpec(cores=4), NodeSpec(cores=4)], used=used)
    h = h.model_copy(update={"numa_distances": ((10, 32, 21), (32, 10, 32), (21, 32, 10))})
    v = vm(cpu_sets=[cpu_set(0, 2), cpu_set(1, 2, first_vcpu=2)])
    config = nfvplace.place([h], v).configuration
    assert {cs.numa_node for cs in config.cpu_sets} == {0, 2}
    # without distances, pack keeps to the two fuller nodes
    plain = nfvplace.place([h.model_copy(update={"numa_distances": None})], v).configuration
    assert {cs.numa_node for cs in plain.cpu_sets} == {0, 1}


def test_a_vf_paced_below_the_bandwidth_asked_is_not_used() -> None:
    h = _pace_vfs(host(nodes=[NodeSpec(ports=[PortSpec(speed=25, vfs=2)])]), 1.0)
    iface = {"name": "e0", "mode": "sriov", "bandwidth_gbps": 2}
    result = nfvplace.place([h], vm(cpu_sets=[cpu_set(0, 2, interfaces=(iface,))]))
    assert not result.ok
    slow = {"name": "e0", "mode": "sriov", "bandwidth_gbps": 1}
    v = vm(cpu_sets=[cpu_set(0, 2, interfaces=(slow,))])
    placed = nfvplace.place([h], v)
    assert placed.ok
    assert violations([h], v, placed.configurations) == []


def test_the_nic_pcie_link_limits_its_ports_bandwidth() -> None:
    h = host(nodes=[NodeSpec(ports=[PortSpec(speed=40, vfs=4)])])
    iface = {"name": "e0", "mode": "sriov", "bandwidth_gbps": 20}
    v = vm(cpu_sets=[cpu_set(0, 2, interfaces=(iface,))])
    assert nfvplace.place([h], v).ok
    gen3_x2 = _with_nic(h, pcie_generation=3, pcie_lanes=2)  # 15.754 Gbps
    result = nfvplace.place([gen3_x2], v)
    assert not result.ok
    assert result.diagnosis is not None
    assert {r.reason for r in result.diagnosis.rejections} == {"sriov_bandwidth"}
    stated = _with_nic(h, pcie_bandwidth_gbps=32.0)
    assert nfvplace.place([stated], v).ok
