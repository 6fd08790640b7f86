"""Ports and VFs with a NUMA affinity (a Neutron port's `numa_affinity_policy`, Nova's
`hw:pci_numa_affinity_policy`): near the VM's nodes as the policy says, shared with PCI devices
(`resources/affinity.py`)."""

from __future__ import annotations

from typing import Any

import pytest
from builders import NodeSpec, PortSpec, cpu_set, host, vm
from checker import violations

import nfvplace
from nfvplace.claims import claim, release
from nfvplace.models import ComputeHostDescriptor, VmDescriptor

SMALL = NodeSpec(cores=2, hugepages_1g=0, memory_mib=8192)


def _host(full_port_node: bool) -> ComputeHostDescriptor:
    """Two nodes of 2 SMT cores, an SR-IOV port on node 1 only; node 1's PUs all taken when
    `full_port_node` (each node its own socket: no packages in the descriptor)."""
    port_node = NodeSpec(
        cores=2, hugepages_1g=0, memory_mib=8192, ports=[PortSpec(vfs=4, usage="sriov")]
    )
    used = dict.fromkeys((2, 3, 6, 7), "other") if full_port_node else None
    return host("h", nodes=[SMALL, port_node], used=used)


def _vm(affinity: str | None, in_cpu_set: bool) -> VmDescriptor:
    iface: dict[str, Any] = {"name": "e0", "mode": "sriov"}
    if affinity:
        iface["numa_affinity"] = affinity
    if in_cpu_set:
        return vm("w", [cpu_set(0, 2, memory_mib=1024, interfaces=(iface,))])
    return vm("w", [cpu_set(0, 2, memory_mib=1024)], interfaces=[iface])


@pytest.mark.parametrize("in_cpu_set", [False, True])
@pytest.mark.parametrize(
    ("affinity", "full", "fits", "port_near"),
    [
        ("required", False, True, True),
        ("legacy", False, True, True),
        ("preferred", False, True, True),  # local when it can be
        ("required", True, False, None),  # the port's node has no room for the VM
        ("legacy", True, False, None),
        ("preferred", True, True, False),  # then remote
        ("socket", True, False, None),  # node 1 is a socket of its own
    ],
)
def test_numa_affinity_of_a_port(
    affinity: str, full: bool, fits: bool, port_near: bool | None, in_cpu_set: bool
) -> None:
    h = _host(full)
    want = _vm(affinity, in_cpu_set)
    result = nfvplace.place([h], want)
    assert result.ok is fits, result.diagnosis
    if not result.ok:
        return
    config = result.configuration
    assert (config.cpu_sets[0].numa_node == 1) is port_near
    assert violations([h], want, result.configurations) == []
    assert release(claim(h, config), config) == h


def test_without_affinity_a_top_level_port_may_be_remote() -> None:
    h = _host(full_port_node=True)
    result = nfvplace.place([h], _vm(None, in_cpu_set=False))
    assert result.ok, result.diagnosis
    assert result.configuration.cpu_sets[0].numa_node == 0


def test_without_affinity_a_cpu_set_port_stays_on_its_node() -> None:
    result = nfvplace.place([_host(full_port_node=True)], _vm(None, in_cpu_set=True))
    assert not result.ok


def test_the_checker_sees_a_port_off_its_required_node() -> None:
    h = _host(full_port_node=True)
    placed = nfvplace.place([h], _vm("preferred", in_cpu_set=False)).configurations
    assert violations([h], _vm("required", in_cpu_set=False), placed) != []
