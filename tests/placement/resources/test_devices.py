"""PCI devices and their NUMA affinity (Nova's `hw:pci_numa_affinity_policy`)."""

from __future__ import annotations

from typing import Any

import pytest
from checker import violations

import nfvplace
from nfvplace.claims import claim, release
from nfvplace.models import ComputeHostDescriptor, VmDescriptor


def _host(devices_on: int, sockets: tuple[int, ...] = (0, 0, 1)) -> ComputeHostDescriptor:
    """Three nodes of 4 single-thread cores in `sockets`, the one device on `devices_on`."""
    nodes = []
    for node, socket in enumerate(sockets):
        cpus = [
            {
                "id": 4 * node + k,
                "core": 4 * node + k,
                "siblings": [4 * node + k],
                "package": socket,
            }
            for k in range(4)
        ]
        entry: dict[str, Any] = {"id": node, "cpus": cpus, "memory": {"total_mib": 8192}}
        if node == devices_on:
            entry["pci_devices"] = [{"pci_address": "0000:3d:00.0", "class": "crypto"}]
        nodes.append(entry)
    return ComputeHostDescriptor.model_validate(
        {
            "schema": "nfvplace/chd/v1",
            "id": "h",
            "processor": {"vendor": "GenuineIntel", "model": "x"},
            "hypervisor": {"type": "kvm", "capabilities": ["cpu_pinning"]},
            "numa_nodes": nodes,
        }
    )


def _vm(affinity: str | None, sets: int = 1, vcpus: int = 4) -> VmDescriptor:
    device: dict[str, Any] = {"class": "crypto"}
    if affinity:
        device["numa_affinity"] = affinity
    cpu_sets = [
        {"id": k, "vcpus": list(range(k * vcpus, (k + 1) * vcpus)), "memory_mib": 1024}
        for k in range(sets)
    ]
    return VmDescriptor.model_validate(
        {"schema": "nfvplace/vmd/v1", "name": "d", "cpu_sets": cpu_sets, "pci_devices": [device]}
    )


def _occupied(host: ComputeHostDescriptor, node: int) -> ComputeHostDescriptor:
    """`host` with every PU of `node` used by another VM."""
    data = host.model_dump(mode="json", by_alias=True)
    for cpu in data["numa_nodes"][node]["cpus"]:
        cpu.update(state="dedicated", owner="other")
    return ComputeHostDescriptor.model_validate(data)


@pytest.mark.parametrize(
    ("affinity", "full", "fits", "device_near"),
    [
        (None, (), True, False),  # anywhere: the VM on the fullest node, the device elsewhere
        ("required", (), True, True),
        ("legacy", (), True, True),
        ("preferred", (), True, True),  # local when it can be
        ("required", (2,), False, None),  # the device's node has no room for the VM
        ("preferred", (2,), True, False),  # then remote
        ("socket", (2,), False, None),  # node 2 is alone in socket 1
    ],
)
def test_numa_affinity_of_a_device(
    affinity: str | None, full: tuple[int, ...], fits: bool, device_near: bool | None
) -> None:
    host = _host(devices_on=2)
    for node in full:
        host = _occupied(host, node)
    vm = _vm(affinity)
    result = nfvplace.place([host], vm)
    assert result.ok is fits, result.diagnosis
    if result.ok:
        config = result.configuration
        near = config.pci_devices[0].numa_node == config.cpu_sets[0].numa_node
        if device_near is not None and affinity is not None:
            assert near is device_near
        assert violations([host], vm, result.configurations) == []
        assert release(claim(host, config), config) == host


def test_socket_takes_a_device_of_the_same_socket() -> None:
    host = _occupied(_host(devices_on=1), 1)  # the device's node is full; node 0 shares its socket
    result = nfvplace.place([host], _vm("socket"))
    assert result.ok, result.diagnosis
    assert result.configuration.cpu_sets[0].numa_node == 0


def test_required_on_a_multi_node_guest_takes_any_of_its_nodes() -> None:
    host = _host(devices_on=1)
    result = nfvplace.place([host], _vm("required", sets=2, vcpus=2))
    assert result.ok, result.diagnosis
    nodes = {cs.numa_node for cs in result.configuration.cpu_sets}
    assert result.configuration.pci_devices[0].numa_node in nodes
